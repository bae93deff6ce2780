import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

private func live(_ id: String, app: String, relevance: Double = 0, start: Double = 0) -> IslandCandidate {
    IslandCandidate(id: id, app: app, state: .active, relevanceScore: relevance, startedAt: start)
}

@Suite struct IslandArbiterTests {
    private let t0 = 1_700_000_000.0

    @Test func sequenceGrowsOnlyOnChange() throws {
        var arbiter = IslandArbiter()
        #expect(arbiter.snapshot == IslandSnapshot(sequence: 0, presentation: .empty))
        #expect(arbiter.recompute(candidates: [], now: t0) == nil)

        let firstResult = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)

        let first = try #require(firstResult)
        #expect(first.sequence == 1)
        #expect(first.changes == [.island, .lockScreen])
        #expect(arbiter.recompute(candidates: [live("a", app: "A")], now: t0 + 1) == nil)
        #expect(arbiter.sequence == 1)

        let secondResult = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B")], now: t0 + 2)

        let second = try #require(secondResult)
        #expect(second.sequence == 2)
        #expect(second.presentation.mode == .minimal)
        #expect(arbiter.snapshot == IslandSnapshot(sequence: 2, presentation: second.presentation))
    }

    @Test func lockScreenOnlyChangeIsReportedAsSuch() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A", relevance: 1)], now: t0)
        let ended = IslandCandidate(id: "old", app: "A", state: .ended, startedAt: 0)
        let deltaResult = arbiter.recompute(candidates: [live("a", app: "A", relevance: 1), ended], now: t0)
        let delta = try #require(deltaResult)
        #expect(delta.changes == .lockScreen)
        #expect(delta.presentation.lockScreen == ["a", "old"])
    }

    @Test func expandThenCollapseReturnsToCompact() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)

        let expandedResult = arbiter.expand(id: "a", now: t0 + 1)

        let expanded = try #require(expandedResult)
        #expect(expanded.presentation.mode == .expanded)
        #expect(expanded.presentation.expanded == "a")
        #expect(expanded.presentation.expansionReason == .user)
        #expect(expanded.presentation.restingMode == .compact)
        #expect(expanded.changes == .island)
        #expect(expanded.presentation.json == ["mode": "expanded", "attached": "a", "expanded": "a", "lockScreen": ["a"]])
        expectDeadline(arbiter.nextDeadline, t0 + 9)

        let collapsedResult = arbiter.collapse(now: t0 + 2)

        let collapsed = try #require(collapsedResult)
        #expect(collapsed.presentation.mode == .compact)
        #expect(collapsed.presentation.expanded == nil)
        expectDeadline(arbiter.nextDeadline, nil)
    }

    @Test func expansionTimesOut() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B")], now: t0)
        _ = arbiter.expand(id: "b", now: t0)
        let deadlineResult = arbiter.nextDeadline
        let deadline = try #require(deadlineResult)
        #expect(deadline == t0 + 8)

        #expect(arbiter.recompute(now: deadline - 0.001) == nil)
        let backResult = arbiter.recompute(now: deadline)
        let back = try #require(backResult)
        #expect(back.presentation.mode == .minimal)
        expectDeadline(arbiter.nextDeadline, nil)
    }

    @Test func customTimeouts() throws {
        var arbiter = IslandArbiter(interactions: IslandInteractions(expandTimeout: 3, alertExpansion: 1))
        _ = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)
        expectDeadline(arbiter.nextDeadline, t0 + 3)
        _ = arbiter.collapse(now: t0)
        _ = arbiter.alert(id: "a", now: t0)
        expectDeadline(arbiter.nextDeadline, t0 + 1)
    }

    @Test func repeatedLongPressRestartsTheTimeout() {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)
        #expect(arbiter.expand(id: "a", now: t0 + 5) == nil)
        expectDeadline(arbiter.nextDeadline, t0 + 13)
        #expect(arbiter.recompute(now: t0 + 10) == nil)
        #expect(arbiter.recompute(now: t0 + 13)?.presentation.mode == .compact)
    }

    @Test func alertExpandsForFiveSecondsThenReturns() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A", relevance: 1), live("b", app: "B")], now: t0)

        let alertedResult = arbiter.alert(id: "b", now: t0)

        let alerted = try #require(alertedResult)
        #expect(alerted.presentation.mode == .expanded)
        #expect(alerted.presentation.expanded == "b")
        #expect(alerted.presentation.expansionReason == .alert)
        #expect(alerted.presentation.attached == "a")
        #expect(alerted.presentation.detached == "b")
        expectDeadline(arbiter.nextDeadline, t0 + 5)

        #expect(arbiter.recompute(now: t0 + 4.9) == nil)
        let backResult = arbiter.recompute(now: t0 + 5)
        let back = try #require(backResult)
        #expect(back.presentation.mode == .minimal)
        #expect(back.sequence == alerted.sequence + 1)
    }

    @Test func userExpansionBeatsAlert() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)

        #expect(arbiter.alert(id: "b", now: t0 + 1) == nil)
        #expect(arbiter.presentation.expanded == "a")
        #expect(arbiter.presentation.expansionReason == .user)

        // An alert that arrives first is replaced by the user's long-press.
        _ = arbiter.collapse(now: t0 + 2)
        _ = arbiter.alert(id: "b", now: t0 + 3)
        let userResult = arbiter.expand(id: "a", now: t0 + 4)
        let user = try #require(userResult)
        #expect(user.presentation.expanded == "a")
        #expect(user.presentation.expansionReason == .user)
    }

    @Test func alertWaitingUnderUserExpansionShowsItsRemainingTime() throws {
        var arbiter = IslandArbiter(interactions: IslandInteractions(expandTimeout: 2, alertExpansion: 5))
        _ = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)
        _ = arbiter.alert(id: "b", now: t0 + 1)

        let alertResult = arbiter.recompute(now: t0 + 2)

        let alert = try #require(alertResult)
        #expect(alert.presentation.expanded == "b")
        #expect(alert.presentation.expansionReason == .alert)
        expectDeadline(arbiter.nextDeadline, t0 + 6)
        #expect(arbiter.recompute(now: t0 + 6)?.presentation.mode == .minimal)
    }

    @Test func doNotDisturbTakesTheAlertDownAtOnce() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A", relevance: 1), live("b", app: "B")], now: t0)
        let alertedResult = arbiter.alert(id: "b", now: t0)
        let alerted = try #require(alertedResult)
        #expect(alerted.presentation.expanded == "b")

        // Well inside the alert's 5 s: the island rests again now, not when the time is up.
        arbiter.interactions.silenceAlert()
        let silencedResult = arbiter.recompute(now: t0 + 1)

        let silenced = try #require(silencedResult)
        #expect(silenced.presentation.mode == .minimal)
        #expect(silenced.presentation.expanded == nil)
        #expect(silenced.sequence == alerted.sequence + 1)
        expectDeadline(arbiter.nextDeadline, nil)
        #expect(arbiter.recompute(now: t0 + 2) == nil, "nothing springs open again later")
    }

    @Test func doNotDisturbLeavesTheUsersOwnExpansion() throws {
        var arbiter = IslandArbiter(interactions: IslandInteractions(expandTimeout: 2, alertExpansion: 5))
        _ = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)
        _ = arbiter.alert(id: "b", now: t0 + 1)

        arbiter.interactions.silenceAlert()
        #expect(arbiter.recompute(now: t0 + 1.5) == nil)
        #expect(arbiter.presentation.expanded == "a")
        #expect(arbiter.presentation.expansionReason == .user)
        // The alert waiting underneath is gone too: it does not show once the user's ends.
        #expect(arbiter.recompute(now: t0 + 2)?.presentation.mode == .minimal)
    }

    @Test func collapseAlsoClosesAnAlert() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)
        _ = arbiter.alert(id: "a", now: t0)
        let collapsedResult = arbiter.collapse(now: t0 + 1)
        let collapsed = try #require(collapsedResult)
        #expect(collapsed.presentation.mode == .compact)
    }

    @Test func expandedActivityEndingFallsBack() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A", relevance: 1), live("a2", app: "A")], now: t0)
        _ = arbiter.expand(id: "a", now: t0)
        #expect(arbiter.presentation.mode == .expanded)

        let ended = IslandCandidate(id: "a", app: "A", state: .ended, relevanceScore: 1, startedAt: 0)
        let deltaResult = arbiter.recompute(candidates: [ended, live("a2", app: "A")], now: t0 + 1)
        let delta = try #require(deltaResult)
        #expect(delta.presentation.mode == .compact)
        #expect(delta.presentation.attached == "a2")
        #expect(delta.presentation.lockScreen == ["a", "a2"])
        // The expansion is forgotten, not merely hidden.
        expectDeadline(arbiter.nextDeadline, nil)
    }

    @Test func expandingAnActivityThatIsNotLiveChangesNothing() {
        var arbiter = IslandArbiter()
        let ended = IslandCandidate(id: "e", app: "A", state: .ended, startedAt: 0)
        _ = arbiter.recompute(candidates: [live("a", app: "A"), ended], now: t0)
        #expect(arbiter.expand(id: "e", now: t0) == nil)
        #expect(arbiter.expand(id: "unknown", now: t0) == nil)
        #expect(arbiter.presentation.mode == .compact)
        expectDeadline(arbiter.nextDeadline, nil)
    }

    @Test func alertAndUpdateFoldIntoOneDelta() throws {
        var arbiter = IslandArbiter()
        _ = arbiter.recompute(candidates: [live("a", app: "A")], now: t0)
        arbiter.interactions.alert(id: "b", now: t0 + 1)
        let deltaResult = arbiter.recompute(candidates: [live("a", app: "A"), live("b", app: "B", relevance: 2)], now: t0 + 1)
        let delta = try #require(deltaResult)
        #expect(delta.sequence == 2)
        #expect(delta.presentation.mode == .expanded)
        #expect(delta.presentation.expanded == "b")
        #expect(delta.presentation.attached == "b")
        #expect(delta.presentation.detached == "a")
    }
}
