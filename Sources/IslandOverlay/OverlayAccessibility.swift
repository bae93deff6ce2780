/// What the island says to assistive technology of one frame: its name, a description, and
/// one region for each place that does something when clicked, topmost first as a pointer
/// would find them. island-overlay's shell hands these to ATK. Every name is producer text,
/// bounded: at most `maximumRegions` regions of `maximumRegionName` characters each, and a
/// description of at most `maximumDescription`.
package struct OverlayAccessibility: Sendable, Hashable {
    package static let maximumRegions = 64
    package static let maximumRegionName = 300
    package static let maximumDescription = 2000

    /// ATK's roles, as far as the island uses them.
    package enum Role: Sendable, Hashable {
        case pushButton, link, list, panel
    }

    package struct Region: Sendable, Hashable {
        package var name: String
        package var role: Role
    }

    package var name: String
    package var description: String
    package var regions: [Region]

    package init(_ frame: OverlayFrame) {
        // Topmost first, as a pointer would find them; each name is bounded producer text.
        let hits = frame.hits.reversed().filter { !$0.name.isEmpty }.prefix(Self.maximumRegions)
        name = frame.form == .hidden && !frame.listOpen ? "Island (nothing live)" : "Island, \(frame.form.rawValue)"
        description = String(hits.map(\.name).joined(separator: "; ").prefix(Self.maximumDescription))
        regions = hits.map { hit in
            let role: Role =
                switch hit.target {
                case .button, .dismiss: .pushButton
                case .tap(_, let url) where url != nil: .link
                case .list: .list
                default: .panel
                }
            return Region(name: String(hit.name.prefix(Self.maximumRegionName)), role: role)
        }
    }
}
