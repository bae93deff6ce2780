import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandOverlay

/// The lock-screen form of a hosted overlay: the host (the GNOME Shell extension, which shows
/// the overlay's window on its lock screen) says `{"locked": true}`; the overlay then shows the
/// lock-screen list alone, only once the daemon has redacted it (its `lock`), and acts on no
/// pointer, key or focus.
@Suite struct OverlayLockScreenTests {
    typealias Desk = OverlayControllerTests.Desk

    static func snapshot(locked: Bool, island: JSONObject = OverlayControllerTests.expanded) -> JSONObject {
        var snapshot = OverlayControllerTests.snapshot(island)
        snapshot["lock"] = ["on": .bool(locked)]
        return snapshot
    }

    @Test func theLockedLineIsRead() {
        var state = OverlayDesktopState()
        #expect(state.apply(line: Array("{\"locked\": true}".utf8)) == nil)
        #expect(state == OverlayDesktopState(locked: true))
        #expect(state.apply(line: Array("{\"locked\": 1}".utf8)) == "locked must be true or false")
        #expect(state.locked)
    }

    @Test func lockedTheListAloneShowsOnceTheDaemonHasRedactedIt() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(locked: false)))
        desk.settle()
        #expect(desk.form == .expanded)

        // The host says so first: nothing shows until the daemon's redacted snapshot.
        desk.send(.desktop(OverlayDesktopState(locked: true)))
        desk.settle()
        #expect(desk.form == .hidden)
        #expect(!(desk.controller.motion.target?.listOpen ?? false))

        desk.send(.update(Self.snapshot(locked: true)))
        desk.settle()
        #expect(desk.form == .hidden, "no island above the list")
        #expect(desk.controller.motion.target?.listOpen == true)
        // Nothing to act on: no dismiss button drawn, no target for an app.
        let frame = try #require(desk.controller.motion.target)
        #expect(!frame.content.contains { $0.primitive == .dismiss })
        #expect(!frame.hits.contains { OverlayClicks.actsForApp($0.target) })
        #expect(frame.hits.contains { $0.target == .expand(id: "a") }, "the card stays, named")

        // Unlocked: the island as the daemon has it, the list closed.
        desk.send(.desktop(OverlayDesktopState(locked: false)))
        desk.send(.update(Self.snapshot(locked: false)))
        desk.settle()
        #expect(desk.form == .expanded)
        #expect(!desk.controller.listOpen)
    }

    @Test func lockedNoInputActs() throws {
        var desk = Desk(settings: .init(frameLog: true))
        desk.send(.update(Self.snapshot(locked: true)))
        desk.send(.desktop(OverlayDesktopState(locked: true)))
        desk.settle()
        _ = desk.take()
        for event: OverlayEvent in [.pressed(x: 220, y: 60, button: 1), .pointerMoved(x: 220, y: 60), .pointerLeft,
                                    .escapePressed, .focusLost, .toggleList] {
            desk.send(event)
        }
        let steps = desk.take()
        #expect(OverlayControllerTests.sent(steps) == [])
        #expect(OverlayControllerTests.logged(steps).filter { !$0.hasPrefix("actionable") } == ["locked: a key ignored"])
        #expect(desk.controller.listOpen)
    }
}
