/// One non-dismissed activity as the island arbitration sees it: only what ordering and
/// placement need, so the arbitration does not depend on the activity model.
package struct IslandCandidate: Sendable, Hashable {
    /// The activity states that reach the arbitration; `pending` and `dismissed` never do.
    package enum State: String, Sendable, Hashable {
        case active
        case stale
        /// Ended but not yet dismissed: listed on the lock screen, never in the island.
        case ended
    }

    package var id: String
    /// The app the activity is arbitrated as: its producer's, or, when the producer speaks for
    /// a verified app, that app's (a bridge's Now Playing is mpv's, its file copy the file
    /// manager's), so two of one producer's activities can share the island as two apps' do.
    package var app: String
    package var state: State
    package var relevanceScore: Double
    /// Seconds since the Unix epoch.
    package var startedAt: Double

    package init(id: String, app: String, state: State, relevanceScore: Double = 0, startedAt: Double) {
        self.id = id
        self.app = app
        self.state = state
        self.relevanceScore = relevanceScore
        self.startedAt = startedAt
    }

    /// Whether the activity may appear in the island (`active` or `stale`).
    package var isLive: Bool { state != .ended }
}

extension IslandCandidate {
    /// The order of the island and of the lock screen: relevance descending, then the earlier
    /// start first, then the id, so equal candidates never swap places between recomputes.
    package static func precedes(_ a: IslandCandidate, _ b: IslandCandidate) -> Bool {
        let (ra, rb) = (a.comparableRelevance, b.comparableRelevance)
        if ra != rb { return ra > rb }
        if a.startedAt != b.startedAt { return a.startedAt < b.startedAt }
        return a.id < b.id
    }

    /// NaN would break the strict weak ordering `sort` relies on; it ranks last instead.
    private var comparableRelevance: Double {
        relevanceScore.isNaN ? -.infinity : relevanceScore
    }
}
