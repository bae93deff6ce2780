import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

private func live(_ id: String, app: String, relevance: Double = 0, start: Double = 0) -> IslandCandidate {
    IslandCandidate(id: id, app: app, state: .active, relevanceScore: relevance, startedAt: start)
}

private func arrange(_ candidates: [IslandCandidate]) -> IslandPresentation {
    IslandPresentation(candidates: candidates, interactions: IslandInteractions(), now: 0)
}

@Suite struct IslandPresentationTests {
    @Test func noActivitiesShowNothing() {
        let presentation = arrange([])
        #expect(presentation == .empty)
        #expect(presentation.mode == .none)
        #expect(presentation.json == ["mode": "none", "lockScreen": []])
    }

    @Test func oneAppIsCompactForItsTopActivity() {
        let presentation = arrange([live("a1", app: "A", start: 10), live("a2", app: "A", relevance: 5, start: 20)])
        #expect(presentation.mode == .compact)
        #expect(presentation.attached == "a2")
        #expect(presentation.detached == nil)
        #expect(presentation.json == ["mode": "compact", "attached": "a2", "lockScreen": ["a2", "a1"]])
    }

    @Test func twoAppsAreMinimalWithActivitiesOfDifferentApps() {
        let presentation = arrange([live("a", app: "A", start: 1), live("b", app: "B", relevance: 1, start: 2)])
        #expect(presentation.mode == .minimal)
        #expect(presentation.attached == "b")
        #expect(presentation.detached == "a")
    }

    @Test func detachedIsTheTopActivityOfAnotherApp() {
        let presentation = arrange([
            live("a1", app: "A", relevance: 9, start: 1),
            live("a2", app: "A", relevance: 8, start: 2),
            live("a3", app: "A", relevance: 7, start: 3),
            live("b1", app: "B", relevance: 1, start: 4),
        ])
        #expect(presentation.mode == .minimal)
        #expect(presentation.attached == "a1")
        #expect(presentation.detached == "b1")
    }

    @Test func relevanceOrdersAndEarlierStartBreaksTies() {
        let presentation = arrange([
            live("late", app: "A", relevance: 1, start: 30),
            live("early", app: "A", relevance: 1, start: 10),
            live("low", app: "A", relevance: 0, start: 0),
            live("high", app: "A", relevance: 2, start: 50),
        ])
        #expect(presentation.attached == "high")
        #expect(presentation.lockScreen == ["high", "early", "late", "low"])
    }

    @Test func staleActivitiesStayInTheIsland() {
        let stale = IslandCandidate(id: "s", app: "A", state: .stale, startedAt: 0)
        #expect(arrange([stale]).attached == "s")
    }

    @Test func endedActivitiesAreOnlyOnTheLockScreen() {
        let ended = IslandCandidate(id: "done", app: "B", state: .ended, relevanceScore: 100, startedAt: 0)
        let presentation = arrange([live("a", app: "A", relevance: 1, start: 5), ended])
        #expect(presentation.mode == .compact)
        #expect(presentation.attached == "a")
        #expect(presentation.lockScreen == ["done", "a"])
    }

    @Test func lockScreenListsLiveAndEndedByRelevanceThenStart() {
        let presentation = arrange([
            IslandCandidate(id: "ended-old", app: "A", state: .ended, relevanceScore: 0, startedAt: 1),
            live("live-new", app: "B", relevance: 0, start: 9),
            IslandCandidate(id: "stale", app: "C", state: .stale, relevanceScore: 3, startedAt: 5),
            IslandCandidate(id: "ended-relevant", app: "A", state: .ended, relevanceScore: 5, startedAt: 8),
        ])
        #expect(presentation.lockScreen == ["ended-relevant", "stale", "ended-old", "live-new"])
        #expect(presentation.attached == "stale")
        #expect(presentation.detached == "live-new")
    }

    @Test func onlyEndedActivitiesLeaveTheIslandEmpty() {
        let ended = IslandCandidate(id: "e", app: "A", state: .ended, startedAt: 0)
        let presentation = arrange([ended])
        #expect(presentation.mode == .none)
        #expect(presentation.lockScreen == ["e"])
    }

    @Test func nanRelevanceRanksLast() {
        let presentation = arrange([live("nan", app: "A", relevance: .nan), live("zero", app: "A", relevance: 0, start: 5)])
        #expect(presentation.lockScreen == ["zero", "nan"])
    }
}
