/// An activity shown expanded in the island, and why.
package struct IslandExpansion: Sendable, Hashable {
    package enum Reason: String, Sendable, Hashable {
        /// A presenter's long-press (`expand`).
        case user
        /// An alerting update.
        case alert
    }

    package var id: String
    package var reason: Reason
    /// When the expansion ends by itself (seconds since the Unix epoch).
    package var until: Double

    package init(id: String, reason: Reason, until: Double) {
        self.id = id
        self.reason = reason
        self.until = until
    }

    func isShowing(at now: Double) -> Bool { now < until }
}
