import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The wire forms the daemon writes by hand, byte for byte, and the names of its refusals.
@Suite struct WireTests {
    func text(_ encoded: VarlinkEncodedParameters) -> String {
        String(decoding: encoded.bytes, as: UTF8.self)
    }

    func activity() throws -> Activity {
        var maker = ActivityMaker()
        return try maker.start(state: ["n": 0]).0
    }

    let item =
        #"{"id":"a1","app":"org.example.Coffee","type":"T","attributes":{},"appName":"Coffee","#
        + #""content":{"state":{"n":0},"relevanceScore":0.0},"state":"active","createdAt":1700000000.0"#

    @Test func aDeltaWithEverything() throws {
        let activity = try activity()
        let island = IslandPresentation(
            candidates: [
                IslandCandidate(
                    id: "a1", app: activity.app, state: .active, relevanceScore: 0,
                    startedAt: activity.createdAt)
            ],
            interactions: IslandInteractions(), now: activity.createdAt)
        var update = Wire.PresenterUpdate(.delta, sequence: 7, resync: false, island: island, capacity: 16)
        update.add(activity, layout: (["chip": "C"], false), app: Wire.AppLabel(name: "Coffee"))
        let encoded = update.finish(removed: ["a0"], alert: ("a1", Alert(title: "Ready \"now\"", body: "B")))
        #expect(
            text(encoded) == #"{"update":{"kind":"delta","sequence":7,"resync":false,"#
                + #""island":{"mode":"compact","attached":"a1","lockScreen":["a1"]},"#
                + #""items":["# + item + #","layout":{"chip":"C"},"defaultLayout":false}],"#
                + #""removed":["a0"],"alert":{"id":"a1","title":"Ready \"now\"","body":"B"}}}"#)
    }

    @Test func aDeltaOfContentAlone() throws {
        var update = Wire.PresenterUpdate(.delta, sequence: 8, resync: false, island: nil, capacity: 16)
        update.add(try activity(), layout: nil, app: Wire.AppLabel(name: "Coffee"))
        #expect(
            text(update.finish(removed: [], alert: nil))
                == #"{"update":{"kind":"delta","sequence":8,"resync":false,"items":["# + item + #"}],"removed":[]}}"#)
    }

    @Test func anEmptyResyncSnapshot() {
        let update = Wire.PresenterUpdate(.snapshot, sequence: 3, resync: true, island: .empty, capacity: 16)
        #expect(
            text(update.finish(removed: [], alert: nil))
                == #"{"update":{"kind":"snapshot","sequence":3,"resync":true,"island":{"mode":"none","lockScreen":[]},"items":[],"removed":[]}}"#)
    }

    @Test func watchEvents() throws {
        let activity = try activity()
        let tap = WatchEvent.tap(activity, url: nil)
        let parsed = try JSONParser.parse(tap.encoded.bytes)
        #expect(parsed["event"]?["kind"] == "tap")
        #expect(parsed["event"]?["url"] == .null)
        #expect(parsed["event"]?["activity"]?["id"] == "a1")
        #expect(!tap.supersedable, "a tap is a fact the app acts on")
        #expect(text(WatchEvent.watching(focusSince: nil).encoded) == #"{"event":{"kind":"watching"}}"#)
        #expect(text(WatchEvent.watching(focusSince: 5).encoded) == #"{"event":{"kind":"watching","focus":{"on":true,"since":5.0}}}"#)
        let focus = WatchEvent.focus(since: nil)
        #expect(text(focus.encoded) == #"{"event":{"kind":"focus","focus":{"on":false}}}"#)
        #expect(focus.supersedable, "a later focus event says all there is to know")
    }

    /// Each refusal keeps the name and parameters clients know (Protocol/org.island.varlink).
    @Test func refusalsAreNamedAsBefore() {
        let cases: [(EngineError, VarlinkError)] = [
            (.noSuchActivity("x"), VarlinkError("org.island.NoSuchActivity", ["id": "x"])),
            (.noSuchActivity(nil), VarlinkError("org.island.NoSuchActivity", ["id": ""])),
            (.refused(.typeTooLong(limit: 128, size: 129)), VarlinkError("org.island.TypeTooLong", ["limit": 128, "size": 129])),
            (
                .invalidLayout(type: "T", path: "chip", reason: "r"),
                VarlinkError("org.island.InvalidLayout", ["type": "T", "path": "chip", "reason": "r"])
            ),
            (.tooManyLayouts(app: "a", limit: 32), VarlinkError("org.island.TooManyLayouts", ["app": "a", "limit": 32])),
            (.persistenceFailure(reason: "disk full"), VarlinkError("org.island.PersistenceFailure", ["reason": "disk full"])),
            (
                .unknownApp(app: "a"),
                VarlinkError("org.island.Unentitled", ["app": "a", "reason": "no desktop entry and no activities: there is nothing to switch"])
            ),
            (
                .frequentUpdatesUndeclared(app: "a"),
                VarlinkError("org.island.Unentitled", ["app": "a", "reason": "its desktop entry does not declare X-Island-FrequentUpdates=true"])
            ),
            (
                .sharedActivity,
                VarlinkError(
                    "org.island.PermissionDenied",
                    [
                        "role": "presenter", "reason": "a system service's activity is shown to every user; only root may dismiss it",
                    ])
            ),
            (.buttonMissing, VarlinkError("org.varlink.service.InvalidParameter", ["parameter": "button"])),
            (.noSuchButton(id: "x", button: "explode"), VarlinkError("org.island.NoSuchButton", ["id": "x", "button": "explode"])),
        ]
        for (error, expected) in cases {
            #expect(VarlinkError(error) == expected, "\(error)")
        }
    }
}
