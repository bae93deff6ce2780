/// What the island says to assistive technology of one frame: its name, a description, and
/// one region for each place that does something when clicked, topmost first as a pointer
/// would find them. island-overlay's shell hands these to ATK. Every name is producer text,
/// bounded: at most `maximumRegions` regions of `maximumRegionName` characters each, and a
/// description of at most `maximumDescription`.
public struct OverlayAccessibility: Sendable, Hashable {
    public static let maximumRegions = 64
    public static let maximumRegionName = 300
    public static let maximumDescription = 2000

    /// ATK's roles, as far as the island uses them.
    public enum Role: Sendable, Hashable {
        case pushButton, link, list, panel
    }

    public struct Region: Sendable, Hashable {
        public var name: String
        public var role: Role
    }

    public var name: String
    public var description: String
    public var regions: [Region]

    public init(_ frame: OverlayFrame) {
        // Topmost first, as a pointer would find them; each name is bounded producer text.
        let hits = frame.hits.reversed().filter { !$0.name.isEmpty }.prefix(Self.maximumRegions)
        name = frame.form == .hidden && !frame.listOpen ? "Island (nothing live)" : "Island, \(frame.form.rawValue)"
        description = String(hits.map(\.name).joined(separator: "; ").prefix(Self.maximumDescription))
        regions = hits.map { hit in
            let role: Role = switch hit.target {
            case .button, .dismiss: .pushButton
            case .tap(_, let url) where url != nil: .link
            case .list: .list
            default: .panel
            }
            return Region(name: String(hit.name.prefix(Self.maximumRegionName)), role: role)
        }
    }
}
