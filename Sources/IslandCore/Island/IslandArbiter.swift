/// The island over time: the arbitration of `IslandPresentation`, the interactions that feed
/// it, and a sequence number that grows by one with every change presenters must see.
///
/// Every method takes `now`; nothing here reads a clock. The owner calls `recompute` whenever
/// the activities change and at `nextDeadline`, when an expansion times out.
package struct IslandArbiter: Sendable {
    /// Mutating these directly and then calling `recompute` once folds an interaction and an
    /// activity change (an alerting update) into one delta.
    package var interactions: IslandInteractions
    package private(set) var presentation: IslandPresentation = .empty
    /// 0 for the empty island before any change.
    package private(set) var sequence: UInt64 = 0
    /// The candidates of the last `recompute`, reused by the interaction methods.
    package private(set) var candidates: [IslandCandidate] = []

    package init(interactions: IslandInteractions = IslandInteractions()) {
        self.interactions = interactions
    }

    /// Arbitrates `candidates` (every non-dismissed activity) at `now`.
    /// - Returns: the new presentation with its sequence number, or nil when nothing changed.
    package mutating func recompute(candidates: [IslandCandidate], now: Double) -> IslandDelta? {
        self.candidates = candidates
        return recompute(now: now)
    }

    /// Arbitrates the last candidates again, for a timeout or an interaction.
    package mutating func recompute(now: Double) -> IslandDelta? {
        interactions.prune(now: now, live: Set(candidates.lazy.filter(\.isLive).map(\.id)))
        let next = IslandPresentation(candidates: candidates, interactions: interactions, now: now)
        var changes: IslandChanges = []
        if next.islandDiffers(from: presentation) { changes.insert(.island) }
        if next.lockScreen != presentation.lockScreen { changes.insert(.lockScreen) }
        guard !changes.isEmpty else { return nil }
        presentation = next
        sequence += 1
        return IslandDelta(sequence: sequence, presentation: next, changes: changes)
    }

    /// A presenter's long-press on activity `id`. An id that is not live changes nothing.
    @discardableResult
    package mutating func expand(id: String, now: Double) -> IslandDelta? {
        interactions.expand(id: id, now: now)
        return recompute(now: now)
    }

    /// A presenter's release: back to the resting arrangement.
    @discardableResult
    package mutating func collapse(now: Double) -> IslandDelta? {
        interactions.collapse(now: now)
        return recompute(now: now)
    }

    /// An alerting update for activity `id`: expands it for `interactions.alertExpansion`
    /// seconds unless the user holds another activity open.
    @discardableResult
    package mutating func alert(id: String, now: Double) -> IslandDelta? {
        interactions.alert(id: id, now: now)
        return recompute(now: now)
    }

    /// When an expansion times out: the owner should call `recompute(now:)` then.
    package var nextDeadline: Double? { interactions.nextDeadline }

    /// The current presentation and its sequence number.
    package var snapshot: IslandSnapshot { IslandSnapshot(sequence: sequence, presentation: presentation) }
}
