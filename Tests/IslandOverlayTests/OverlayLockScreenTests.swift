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
        expectForm(desk.form, .expanded)

        // The host says so first: nothing shows until the daemon's redacted snapshot.
        desk.send(.desktop(OverlayDesktopState(locked: true)))
        desk.settle()
        expectForm(desk.form, .hidden)
        #expect(!(desk.controller.motion.target?.listOpen ?? false))

        desk.send(.update(Self.snapshot(locked: true)))
        desk.settle()
        expectForm(desk.form, .hidden, "no island above the list")
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
        expectForm(desk.form, .expanded)
        #expect(!desk.controller.listOpen)
    }

    @Test func lockedNoInputActs() throws {
        var desk = Desk(settings: .init(frameLog: true))
        desk.send(.update(Self.snapshot(locked: true)))
        desk.send(.desktop(OverlayDesktopState(locked: true)))
        desk.settle()
        _ = desk.take()
        for event: OverlayEvent in [
            .pressed(x: 220, y: 60, button: 1), .pointerMoved(x: 220, y: 60), .pointerLeft,
            .escapePressed, .focusLost, .toggleList,
        ] {
            desk.send(event)
        }
        let steps = desk.take()
        #expect(OverlayControllerTests.sent(steps) == [])
        #expect(OverlayControllerTests.logged(steps).filter { !$0.hasPrefix("actionable") } == ["locked: a key ignored"])
        #expect(desk.controller.listOpen)
    }

    // MARK: Not hosted: the daemon's lock (the overlay over KWin's locker)

    static func overLockScreen(_ steps: [OverlayStep]) -> [Bool] {
        steps.compactMap { if case .overLockScreen(let on) = $0 { on } else { nil } }
    }

    static func inputRegions(_ steps: [OverlayStep]) -> [[OverlayRect]] {
        steps.compactMap { if case .setInputRegion(let rows) = $0 { rows } else { nil } }
    }

    @Test func placedByItselfTheOverlayFollowsTheDaemonsLockAndAsksOntoTheLockScreenOnlyThen() throws {
        var desk = Desk(settings: .init(keyboardWhileOpen: .exclusive, followsDaemonLock: true))
        desk.send(.update(Self.snapshot(locked: false)))
        desk.settle()
        expectForm(desk.form, .expanded)
        #expect(Self.overLockScreen(desk.take()) == [] as [Bool])

        desk.send(.update(Self.snapshot(locked: true)))
        desk.settle()
        var steps = desk.take()
        #expect(Self.overLockScreen(steps) == [true] as [Bool])
        #expect(desk.controller.desktop.locked)
        expectForm(desk.form, .hidden, "no island above the list")
        #expect(desk.controller.motion.target?.listOpen == true)
        // No input at all: the pointer and the keys are the locker's.
        #expect(Self.inputRegions(steps).last == [])
        #expect(desk.controller.keyboard == .none)

        // A host's word about the lock is not taken (there is none, but a fullscreen change
        // carries the state it was given).
        desk.send(.desktop(OverlayDesktopState(fullscreen: true, locked: false)))
        #expect(desk.controller.desktop.locked)

        desk.send(.update(Self.snapshot(locked: false)))
        desk.settle()
        steps = desk.take()
        #expect(Self.overLockScreen(steps) == [false] as [Bool])
        #expect(!desk.controller.desktop.locked)
        #expect(!desk.controller.listOpen)
    }

    @Test func theDaemonGoneWhileLockedTheOverlayLeavesTheLockScreen() {
        var desk = Desk(settings: .init(followsDaemonLock: true))
        desk.send(.update(Self.snapshot(locked: true)))
        desk.settle()
        #expect(Self.overLockScreen(desk.take()) == [true] as [Bool])
        // A restarted daemon has no lock until the bridge says it again: nothing it shows is
        // redacted, so nothing may stay over the locker meanwhile.
        desk.send(.disconnected(reason: "gone"))
        desk.settle()
        #expect(Self.overLockScreen(desk.take()) == [false] as [Bool])
        #expect(!desk.controller.desktop.locked)
    }

    @Test func hostedTheLockIsTheHostsAndNothingIsAskedOfTheCompositor() {
        var desk = Desk()
        desk.send(.update(Self.snapshot(locked: true)))
        desk.settle()
        #expect(!desk.controller.desktop.locked)
        desk.send(.desktop(OverlayDesktopState(locked: true)))
        desk.settle()
        #expect(desk.controller.desktop.locked)
        #expect(Self.overLockScreen(desk.take()) == [] as [Bool])
    }

    static func wakes(_ steps: [OverlayStep]) -> Int {
        steps.filter { $0 == .wakeScreen }.count
    }

    static func alerting(_ sequence: Int) -> JSONObject {
        var delta = OverlayControllerTests.delta(sequence, island: OverlayControllerTests.expanded, items: [Scenes.simpleItem("a")])
        delta["alert"] = ["id": "a", "title": "", "body": ""]
        return delta
    }

    @Test func anAlertWhileLockedWakesTheScreenAndNothingElseDoes() {
        var desk = Desk(settings: .init(followsDaemonLock: true))
        desk.send(.update(Self.snapshot(locked: false, island: OverlayControllerTests.compact)))
        desk.send(.update(Self.alerting(2)))
        #expect(Self.wakes(desk.take()) == 0, "unlocked: the screen is on")

        // The lock comes as a fresh snapshot, as the daemon sends it.
        var locked = Self.snapshot(locked: true, island: OverlayControllerTests.compact)
        locked["sequence"] = 3
        desk.send(.update(locked))
        desk.send(.update(OverlayControllerTests.delta(4, items: [Scenes.simpleItem("a")])))
        #expect(Self.wakes(desk.take()) == 0, "an update that does not alert")

        desk.send(.update(Self.alerting(5)))
        #expect(Self.wakes(desk.take()) == 1)
        // One that came late (an old sequence) is not a new alert.
        desk.send(.update(Self.alerting(5)))
        #expect(Self.wakes(desk.take()) == 0)
    }
}
