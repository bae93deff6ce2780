import FreeDesktop
import IslandProtocol
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandPresenter

@Suite struct PresenterModelTests {
    typealias F = Fixtures

    @Test func deltasBeforeTheFirstSnapshotAreIgnored() {
        var model = PresenterModel()
        do {
            let changed = model.apply(F.delta(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()]));
            #expect(!changed)
        }
        #expect(!model.hasSnapshot)
        #expect(model.items.isEmpty)
    }

    @Test func aSnapshotThenDeltasAboveItsSequence() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 4, island: F.island("none"), items: []))
        #expect(model.sequence == 4)
        do {
            let changed = model.apply(F.delta(sequence: 5, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()]));
            #expect(changed)
        }
        #expect(model.island.mode == .compact)
        #expect(model.compact?.id == "c1")
        #expect(model.sequence == 5)
    }

    @Test func deltasNotAboveTheSequenceAreIgnored() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 9, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()]))
        let before = model
        do { let changed = model.apply(F.delta(sequence: 9, island: F.island("none"), removed: ["c1"])); #expect(!changed) }
        do { let changed = model.apply(F.delta(sequence: 3, island: F.island("none"), removed: ["c1"])); #expect(!changed) }
        #expect(model == before)
    }

    @Test func aDeltaReplacesChangedItemsAndKeepsTheOthers() {
        var model = F.minimalModel
        model.apply(
            F.delta(
                sequence: 6, island: F.island("minimal", attached: "t1", detached: "c1", lockScreen: ["t1", "c1"]),
                items: [F.coffee(stage: "ready")]))
        #expect(model.items["c1"]?.state["stage"] == "ready")
        #expect(model.items["t1"] != nil)
        #expect(model.minimal?.attached.id == "t1")
        #expect(model.minimal?.detached.id == "c1")
        #expect(model.lockScreen.map(\.id) == ["t1", "c1"])
    }

    @Test func aDeltaWithoutIslandOrLayoutKeepsWhatTheModelHas() {
        var model = F.minimalModel
        let layout = model.items["c1"]!.layout
        #expect(model.items["c1"]?.defaultLayout == false)
        var item = F.coffee(stage: "ready").objectValue!
        item["layout"] = nil
        item["defaultLayout"] = nil
        do { let changed = model.apply(F.delta(sequence: 6, island: nil, items: [.object(item)])); #expect(changed) }
        #expect(model.items["c1"]?.state["stage"] == "ready")
        #expect(model.items["c1"]?.layout == layout, "the registered layout stays, not the default one")
        #expect(model.items["c1"]?.defaultLayout == false)
        #expect(model.minimal?.attached.id == "t1", "the island stays")
        #expect(model.lockScreen.map(\.id) == ["t1", "c1"])
    }

    @Test func removedIdsGo() {
        var model = F.minimalModel
        model.apply(F.delta(sequence: 6, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), removed: ["t1"]))
        #expect(model.items.keys.sorted() == ["c1"])
        #expect(model.compact?.id == "c1")
        #expect(model.minimal == nil)
        model.apply(F.delta(sequence: 7, island: F.island("none"), removed: ["c1"]))
        #expect(model.items.isEmpty)
        #expect(model.compact == nil)
        #expect(model.lockScreen.isEmpty)
    }

    @Test func aResyncSnapshotReplacesEverythingEvenWithALowerSequence() {
        var model = F.minimalModel
        // After a daemon restart sequences start again; a snapshot always wins.
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee(stage: "ready")], resync: true))
        #expect(model.sequence == 1)
        #expect(model.items.keys.sorted() == ["c1"])
        #expect(model.items["c1"]?.state["stage"] == "ready")
        do { let changed = model.apply(F.delta(sequence: 2, island: F.island("none"), removed: ["c1"])); #expect(changed) }
        #expect(model.items.isEmpty)
    }

    @Test func theExpandedActivityAndTheLockScreenOrder() {
        let model = F.expandedModel
        #expect(model.expanded?.id == "c1")
        #expect(model.compact == nil)
        #expect(model.lockScreen.map(\.id) == ["c1"])
    }

    @Test func anAlertLastsWhileItsActivityIsExpanded() {
        var model = F.compactModel
        model.apply(
            F.delta(
                sequence: 4, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "ready")], alert: ["id": "c1", "title": "Coffee", "body": "Ready"]))
        #expect(model.alert == PresenterAlert(id: "c1", title: "Coffee", body: "Ready"))
        model.apply(F.delta(sequence: 5, island: F.island("compact", attached: "c1", lockScreen: ["c1"])))
        #expect(model.alert == nil)
    }

    @Test func focusComesWithEverySnapshotAndTheDeltaThatChangesIt() {
        var model = PresenterModel()
        var snapshot = F.snapshot(sequence: 1, island: F.island("none"), items: [])
        snapshot["focus"] = ["on": true, "since": 1_700_000_000.5]
        model.apply(snapshot)
        #expect(model.focusSince == 1_700_000_000.5)
        model.apply(F.delta(sequence: 2, island: nil, items: [F.coffee()]))
        #expect(model.focusSince == 1_700_000_000.5, "a delta without focus leaves it as it was")
        var off = F.delta(sequence: 3, island: nil)
        off["focus"] = ["on": false]
        do { let changed = model.apply(off); #expect(changed) }
        #expect(model.focusSince == nil)
        // A daemon from before focus sends none: off.
        model.apply(F.snapshot(sequence: 1, island: F.island("none"), items: [], resync: true))
        #expect(model.focusSince == nil)
    }

    @Test func sharingComesWithEverySnapshot() {
        #expect(F.sharedModel.contentHidden)
        var model = F.sharedModel
        var shown = F.snapshot(sequence: 5, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()])
        shown["sharing"] = ["on": true, "since": 1_700_000_000.5, "contentHidden": false]
        model.apply(shown)
        #expect(!model.contentHidden, "shared, with HideWhileSharing=no")
        model.apply(F.snapshot(sequence: 6, island: F.island("none"), items: []))
        #expect(!model.contentHidden, "a daemon from before sharing sends none")
    }

    @Test func resetForgetsEverything() {
        var model = F.minimalModel
        model.reset()
        #expect(!model.hasSnapshot)
        #expect(model.items.isEmpty)
        #expect(model.island == .empty)
    }

    @Test func backoffDoublesFrom50msTo2s() {
        let backoff = SubscriptionLoop(socketPath: "/unused").backoff
        let delays = (0..<8).map { backoff.delay(attempt: $0) }
        #expect(
            delays == [
                .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400),
                .milliseconds(800), .milliseconds(1600), .seconds(2), .seconds(2),
            ])
        // After an update the loop counts attempts from 0 again.
        #expect(backoff.delay(attempt: 0) == .milliseconds(50))
    }

    /// The modes the model reads an island's `mode` as are the interface's: a mode renamed or
    /// added there is found here rather than drawn as `none`.
    @Test func theIslandsModesAreTheInterfaces() throws {
        let interface = try VarlinkInterface(parsing: IslandInterfaces.presenter)
        guard case .struct(let fields)? = interface.types["Island"],
            case .enum(let modes)? = fields.first(where: { $0.name == PresenterNames.Island.mode })?.type
        else {
            Issue.record("org.island.Presenter.Island has no enum mode")
            return
        }
        #expect(Set(modes) == Set(IslandState.Mode.allCases.map(\.rawValue)))
    }
}
