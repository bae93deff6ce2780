/// What users and alerts asked of the island: which activity is expanded, and until when.
///
/// A user's expansion wins over an alert's: an alert arriving while the user holds an
/// activity open waits underneath and shows for whatever remains of its time once the user's
/// expansion times out. `collapse` closes both, since the user asked for the resting island.
/// Dismissals belong to the activity model, not here.
package struct IslandInteractions: Sendable, Hashable {
    /// How long a user's expansion lasts without a `collapse` (seconds).
    package var expandTimeout: Double
    /// How long an alerting update keeps its activity expanded (seconds).
    package var alertExpansion: Double

    package private(set) var userExpansion: IslandExpansion?
    package private(set) var alertingExpansion: IslandExpansion?

    package init(expandTimeout: Double = 8, alertExpansion: Double = 5) {
        self.expandTimeout = expandTimeout
        self.alertExpansion = alertExpansion
    }

    /// A presenter's long-press on activity `id`; a repeated press restarts the timeout.
    package mutating func expand(id: String, now: Double) {
        userExpansion = IslandExpansion(id: id, reason: .user, until: now + expandTimeout)
    }

    /// The user released the island: it returns to its resting arrangement.
    package mutating func collapse(now: Double) {
        userExpansion = nil
        alertingExpansion = nil
    }

    /// An alerting update for activity `id`; the latest alert replaces an earlier one.
    package mutating func alert(id: String, now: Double) {
        alertingExpansion = IslandExpansion(id: id, reason: .alert, until: now + alertExpansion)
    }

    /// Do Not Disturb came on: the alert showing, if any, goes at once — focus silences
    /// alerts, and one that expanded just before would otherwise stay open for its time.
    /// A user's expansion stays: the user asked for it.
    package mutating func silenceAlert() {
        alertingExpansion = nil
    }

    /// The expansion to show at `now` among the live activity ids, the user's first.
    package func expansion(at now: Double, live: Set<String>) -> IslandExpansion? {
        [userExpansion, alertingExpansion].lazy.compactMap { $0 }.first {
            $0.isShowing(at: now) && live.contains($0.id)
        }
    }

    /// Until when the island is busy at `now` — an alert presented, or an activity the user
    /// expanded: when the last expansion showing times out (a user's expansion holds an alert
    /// underneath, which shows for what remains of its time after); nil when none shows. A
    /// `collapse` ends it sooner.
    package func busyUntil(at now: Double) -> Double? {
        [userExpansion, alertingExpansion].compactMap { $0 }.filter { $0.isShowing(at: now) }.map(\.until).max()
    }

    /// When the next expansion times out, so the owner can schedule a recompute.
    package var nextDeadline: Double? {
        [userExpansion?.until, alertingExpansion?.until].compactMap { $0 }.min()
    }

    /// Drops expansions that timed out or whose activity is no longer live, so an activity
    /// that leaves the island does not spring open again later.
    package mutating func prune(now: Double, live: Set<String>) {
        if let user = userExpansion, !user.isShowing(at: now) || !live.contains(user.id) {
            userExpansion = nil
        }
        if let alert = alertingExpansion, !alert.isShowing(at: now) || !live.contains(alert.id) {
            alertingExpansion = nil
        }
    }
}
