/// An activity shown expanded in the island, and why.
public struct IslandExpansion: Sendable, Hashable {
    public enum Reason: String, Sendable, Hashable {
        /// A presenter's long-press (`expand`).
        case user
        /// An alerting update.
        case alert
    }

    public var id: String
    public var reason: Reason
    /// When the expansion ends by itself (seconds since the Unix epoch).
    public var until: Double

    public init(id: String, reason: Reason, until: Double) {
        self.id = id
        self.reason = reason
        self.until = until
    }

    func isShowing(at now: Double) -> Bool { now < until }
}
