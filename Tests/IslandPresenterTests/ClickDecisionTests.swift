import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

/// What `island-presenter click` decides before it calls the daemon: the island's activity
/// (or the one named), checked against what the running bars showed, and a button the
/// activity has. The clock is the caller's.
@Suite struct ClickDecisionTests {
    typealias F = Fixtures

    @Test func aKeyBindingAloneActsOnTheIslandAsTheDaemonHasIt() {
        let compact = F.compactModel
        #expect(
            BarClick.toggle.decide(button: nil, activity: nil, model: compact, shown: [], clickedAt: 0, now: F.now)
                == .act(action: "expand", id: "c1"))
        #expect(
            BarClick.toggle.decide(button: nil, activity: nil, model: F.expandedModel, shown: [], clickedAt: 0, now: F.now)
                == .act(action: "collapse", id: "c1"))
        #expect(
            BarClick.tap.decide(button: nil, activity: nil, model: F.emptyModel, shown: [], clickedAt: 0, now: F.now)
                == .refuse("the island shows nothing"))
    }

    @Test func aBarsRecordDecidesWhenABarRuns() {
        let stillSince = BarShown(pid: 1, id: "c1", actionableAt: ["expand": 10, "tap": 10, "dismiss": 10])
        #expect(
            BarClick.tap.decide(button: nil, activity: nil, model: F.compactModel, shown: [stillSince], clickedAt: 10.5, now: F.now)
                == .act(action: "tap", id: "c1"))
        #expect(
            BarClick.tap.decide(button: nil, activity: nil, model: F.compactModel, shown: [stillSince], clickedAt: 9.9, now: F.now)
                == .refuse("what the bar shows changed just now; not acting on it (click again)"))
        let other = BarShown(pid: 1, id: "t1", actionableAt: ["tap": 0])
        #expect(
            BarClick.tap.decide(button: nil, activity: nil, model: F.compactModel, shown: [other], clickedAt: 10, now: F.now)
                == .refuse("the island changed since the bar drew it; not acting on it (click again)"))
    }

    @Test func aButtonIsPressedOnlyWhereItIsAndTheActivityNamedIsNotChosenByTheIsland() {
        let model = NamedButtonTests.model()
        #expect(
            BarClick.button.decide(button: "stop", activity: nil, model: model, shown: [], clickedAt: 0, now: F.now)
                == .act(action: "button", id: "o1"))
        #expect(
            BarClick.button.decide(button: "pause", activity: "o2", model: model, shown: [], clickedAt: 0, now: F.now)
                == .act(action: "button", id: "o2"))
        #expect(
            BarClick.button.decide(button: "stop", activity: "o2", model: model, shown: [], clickedAt: 0, now: F.now)
                == .refuse("Music's \"Music order ready\" (id o2) has no button stop; its buttons: pause"))
        #expect(
            BarClick.button.decide(button: "stop", activity: "o3", model: model, shown: [], clickedAt: 0, now: F.now)
                == .refuse("no activity o3 on the island or in its list (no button stop to press)"))
    }
}
