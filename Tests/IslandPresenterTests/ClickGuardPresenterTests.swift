import IslandCore
import OrderedJSON
import OrderedCollections
import Synchronization
import Testing
@testable import IslandPresenter

/// A click acts on what the user saw (docs/design.md §10): in the bars (their clicks reach
/// `island-presenter click`, or i3blocks' stdin, after the bar drew a line) and in the terminal
/// UI's keys, app B's update that changes what is shown a moment before the click acts for
/// neither app; once it has stood still, the click acts for the app shown. Every time here is
/// an injected clock.
@Suite struct ClickGuardPresenterTests {
    typealias F = Fixtures

    /// A monotonic clock the test sets.
    final class Clock: Sendable {
        let time = Mutex<Double>(100)
        func set(_ value: Double) { time.withLock { $0 = value } }
        var read: @Sendable () -> Double { { self.time.withLock { $0 } } }
    }

    final class Published: Sendable {
        let records = Mutex<[BarShown]>([])
        let lines = Mutex<[String]>([])
    }

    static func appA() -> JSON {
        F.item(id: "a1", app: "org.example.A", type: "Coffee", state: ["stage": "brewing"], layout: F.coffeeLayout)
    }

    static func appB() -> JSON {
        F.item(id: "b1", app: "org.example.B", type: "Coffee", state: ["stage": "pay now"], layout: F.coffeeLayout)
    }

    func driver(_ clock: Clock, _ published: Published) -> BarDriver {
        BarDriver(
            format: .eww, clock: { F.now }, monotonic: clock.read, pid: 42,
            publish: { record in published.records.withLock { $0.append(record) } },
            output: { line in published.lines.withLock { $0.append(line) } })
    }

    /// Expects a click's decision to be `expected` (nil: no record to decide by). One typed
    /// `#expect` for the suite's many: each `#expect(shown.decide(…) == .act(…))` costs the test
    /// build 10-60 ms more of type-checking than a call of this; a failure still shows both values.
    func expectDecision(
        _ decision: BarShown.Decision?, _ expected: BarShown.Decision?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(decision == expected, comment, sourceLocation: sourceLocation)
    }

    // MARK: Bars

    @Test func aBarClickActsOnlyOnWhatTheBarShowedOnceItStoodStill() async {
        let clock = Clock(), published = Published()
        let bar = driver(clock, published)
        let compactA = F.island("compact", attached: "a1", lockScreen: ["a1", "b1"])
        clock.set(100)
        await bar.handle(.update(F.snapshot(sequence: 1, island: compactA, items: [Self.appA(), Self.appB()])))
        var shown = await bar.shown
        #expect(shown.id == "a1" && shown.pid == 42)
        #expect(shown.actionableAt == ["expand": 100.5, "tap": 100.5, "dismiss": 100.5])
        #expect(published.records.withLock { $0.last } == shown, "published as it changed")
        // Too early for A itself: it has just appeared.
        expectDecision(
            shown.decide(.tap, island: IslandState(json: compactA), at: 100.3),
            .refuse(
                "what the bar shows changed just now; not acting on it (click again)"))
        expectDecision(shown.decide(.tap, island: IslandState(json: compactA), at: 100.5), .act(action: "tap", id: "a1"))
        expectDecision(shown.decide(.toggle, island: IslandState(json: compactA), at: 101), .act(action: "expand", id: "a1"))

        // B's alerting update 150 ms before the click: the bar now shows B's alert.
        clock.set(102)
        let expandedB = F.island("expanded", attached: "a1", expanded: "b1", lockScreen: ["b1", "a1"])
        await bar.handle(.update(F.delta(sequence: 2, island: expandedB, alert: ["id": "b1", "title": "Pay", "body": "now"])))
        #expect(published.lines.withLock { $0.last } == "Pay: now")
        shown = await bar.shown
        #expect(shown.id == "b1")
        // The click, meant for A's line or arriving just after B's: it acts for neither.
        for click in [BarClick.toggle, .tap, .dismiss, .collapse] {
            guard case .refuse = shown.decide(click, island: IslandState(json: expandedB), at: 102.15) else {
                Issue.record("\(click) acted 150 ms after B's update")
                continue
            }
        }
        // Stood still: the click acts for B, the app shown, and a toggle is what B's state made it.
        expectDecision(shown.decide(.toggle, island: IslandState(json: expandedB), at: 102.5), .act(action: "collapse", id: "b1"))
        expectDecision(shown.decide(.tap, island: IslandState(json: expandedB), at: 103), .act(action: "tap", id: "b1"))
        expectDecision(shown.decide(.expand, island: IslandState(json: expandedB), at: 103), .refuse("the bar shows no expand for its activity"))
    }

    /// The daemon's island moved on before the bar drew it: the click is about a line that is
    /// about to change, and acts on nothing (not on whatever is first now).
    @Test func aClickActsOnTheActivityShownNotOnWhateverIsFirstNow() async {
        let clock = Clock(), published = Published()
        let bar = driver(clock, published)
        let compactA = F.island("compact", attached: "a1", lockScreen: ["a1", "b1"])
        await bar.handle(.update(F.snapshot(sequence: 1, island: compactA, items: [Self.appA(), Self.appB()])))
        let shown = await bar.shown
        let compactB = IslandState(json: F.island("compact", attached: "b1", lockScreen: ["b1", "a1"]))
        expectDecision(
            shown.decide(.tap, island: compactB, at: 200),
            .refuse(
                "the island changed since the bar drew it; not acting on it (click again)"))
        expectDecision(
            shown.decide(.toggle, island: compactB, at: 200),
            .refuse(
                "the island changed since the bar drew it; not acting on it (click again)"))
        // Nothing shown, nothing to act on (and `list` acts for no app: the command opens it).
        expectDecision(
            BarShown(pid: 1, id: nil, actionableAt: [:]).decide(.tap, island: compactB, at: 200),
            .refuse(
                "the bar shows no activity to act on"))
    }

    /// B lowering its relevance puts A where B was: A's targets are new. A timer re-rendering
    /// its line every second keeps its time, and a lost daemon forgets everything.
    @Test func aRelevanceFlipRestartsTheWaitAndTicksDoNot() async {
        let clock = Clock(), published = Published()
        let bar = driver(clock, published)
        let timer = F.item(id: "t1", app: "org.example.Timer", type: "Tea", state: ["endsAt": .double(F.now + 125)], layout: F.timerLayout)
        clock.set(100)
        await bar.handle(
            .update(
                F.snapshot(
                    sequence: 1, island: F.island("compact", attached: "b1", lockScreen: ["b1", "t1"]),
                    items: [Self.appB(), timer])))
        #expect(await bar.shown.id == "b1")
        clock.set(110)
        await bar.handle(.update(F.delta(sequence: 2, island: F.island("compact", attached: "t1", lockScreen: ["t1", "b1"]))))
        let shown = await bar.shown
        #expect(shown.id == "t1" && shown.actionableAt["tap"] == 110.5)
        clock.set(111)
        _ = await bar.tick()
        clock.set(112)
        _ = await bar.tick()
        #expect(await bar.shown == shown, "re-rendering the same activity in place keeps its time")
        await bar.handle(.disconnected(reason: "gone"))
        #expect(await bar.shown.id == nil)
        clock.set(113)
        await bar.handle(.update(F.snapshot(sequence: 1, island: F.island("compact", attached: "t1", lockScreen: ["t1"]), items: [timer])))
        #expect(await bar.shown.actionableAt["tap"] == 113.5, "back after a reconnection is new again")
    }

    @Test func theRecordRoundTripsAndTheSettleTimeOnlyLengthens() {
        let record = BarShown(pid: 7, id: "a1", actionableAt: ["tap": 12.25, "expand": 1234567.123456789])
        #expect(BarShown(serialized: record.serialized) == record)
        #expect(BarShown(serialized: Array("{}".utf8)) == nil)
        #expect(clickSettleTime(environment: [:]) == 0.5)
        #expect(clickSettleTime(environment: ["ISLAND_PRESENTER_CLICK_SETTLE": "8"]) == 8)
        #expect(clickSettleTime(environment: ["ISLAND_PRESENTER_CLICK_SETTLE": "0"]) == 0.5)
        #expect(clickSettleTime(environment: ["ISLAND_PRESENTER_CLICK_SETTLE": "nan"]) == 0.5)
        #expect(BarShown.filePrefix(socket: "/run/a.sock") != BarShown.filePrefix(socket: "/run/b.sock"))
        #expect(BarShown.fileName(socket: "/run/a.sock", pid: 12) == BarShown.filePrefix(socket: "/run/a.sock") + "12.json")
        #expect(BarShown.directory(runtimeDirectory: "/run/user/1") == "/run/user/1/island-presenter")
    }

    /// `island-presenter click` judges a click as of its process's start (the nearest to the
    /// click it knows), read from /proc/self/stat on the clock the bars record on.
    @Test func aClickIsJudgedAtItsProcessStart() throws {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000000 100 18446744073709551615\n"
        #expect(BootClock.startTime(stat: stat, ticksPerSecond: 100) == 1234.56)
        #expect(BootClock.startTime(stat: "4242 (a) S 1", ticksPerSecond: 100) == nil)
        #expect(BootClock.startTime(stat: "no parenthesis", ticksPerSecond: 100) == nil)
        let start = try #require(BootClock.processStart())
        #expect(start > 0 && start <= BootClock.now())
    }

    /// Two bars (two monitors): a click acts only when every running bar would act on the same
    /// thing; with no bar running, the caller acts on the island as the daemon has it.
    @Test func everyRunningBarMustAgree() {
        let island = IslandState(json: F.island("compact", attached: "a1", lockScreen: ["a1"]))
        let settled = BarShown(pid: 1, id: "a1", actionableAt: ["expand": 10, "tap": 10, "dismiss": 10])
        let fresh = BarShown(pid: 2, id: "a1", actionableAt: ["expand": 30, "tap": 30, "dismiss": 30])
        expectDecision(BarShown.decide(.tap, records: [], island: island, at: 20), nil)
        expectDecision(BarShown.decide(.tap, records: [settled], island: island, at: 20), .act(action: "tap", id: "a1"))
        expectDecision(
            BarShown.decide(.tap, records: [settled, fresh], island: island, at: 20),
            .refuse(
                "what the bar shows changed just now; not acting on it (click again)"))
        expectDecision(BarShown.decide(.tap, records: [settled, fresh], island: island, at: 30), .act(action: "tap", id: "a1"))
    }

    // MARK: Terminal UI

    final class Calls: Sendable {
        let sent = Mutex<[String]>([])
        let screen = Mutex<String>("")
    }

    func tui(_ clock: Clock, _ calls: Calls) -> TUIController {
        TUIController(
            io: .init(
                write: { text in calls.screen.withLock { $0 = text } }, size: { (100, 40) }, clock: { F.now },
                open: { _ in true },
                interact: { action, id, button in
                    calls.sent.withLock { $0.append([action, id ?? "-", button ?? "-"].joined(separator: " ")) }
                    return nil
                },
                monotonic: clock.read))
    }

    @Test func aKeyRightAfterAnotherAppsAlertSendsNothing() async {
        let clock = Clock(), calls = Calls()
        let controller = tui(clock, calls)
        clock.set(100)
        await controller.handle(
            .update(
                F.snapshot(
                    sequence: 1, island: F.island("compact", attached: "a1", lockScreen: ["a1", "b1"]),
                    items: [Self.appA(), Self.appB()])))
        clock.set(100.2)
        _ = await controller.press(.tap)
        #expect(calls.sent.withLock { $0 }.isEmpty, "A had just appeared")
        #expect(calls.screen.withLock { $0 }.contains("tap not sent: what it acts on changed just now"))
        clock.set(100.6)
        _ = await controller.press(.tap)
        #expect(calls.sent.withLock { $0 } == ["tap a1 -"])

        // B's alert expands B: ⏎ and the number keys would now act for B.
        clock.set(101)
        await controller.handle(
            .update(
                F.delta(
                    sequence: 2, island: F.island("expanded", attached: "a1", expanded: "b1", lockScreen: ["b1", "a1"]),
                    alert: ["id": "b1", "title": "Pay", "body": "now"])))
        clock.set(101.15)
        for key in [TUIKey.tap, .button(1), .button(2), .expand, .collapse, .dismiss] { _ = await controller.press(key) }
        #expect(calls.sent.withLock { $0 } == ["tap a1 -"], "nothing for A nor B within the settle time")
        clock.set(101.5)
        _ = await controller.press(.button(1))
        #expect(calls.sent.withLock { $0 }.last == "button b1 pause", "after it stood still, for the app shown")
    }

    @Test func aSelectionMovedByAReorderWaitsAgain() async {
        let clock = Clock(), calls = Calls()
        let controller = tui(clock, calls)
        clock.set(100)
        await controller.handle(
            .update(
                F.snapshot(
                    sequence: 1, island: F.island("compact", attached: "a1", lockScreen: ["a1", "b1"]),
                    items: [Self.appA(), Self.appB()])))
        clock.set(101)
        _ = await controller.press(.next)  // select b1 (the second; a1, attached, is the default)
        clock.set(102)
        // A's relevance drops under B's: the list reorders and B's card moves up under the selection.
        await controller.handle(.update(F.delta(sequence: 2, island: F.island("compact", attached: "b1", lockScreen: ["b1", "a1"]))))
        clock.set(102.1)
        _ = await controller.press(.dismiss)
        #expect(calls.sent.withLock { $0 }.isEmpty)
        clock.set(102.6)
        _ = await controller.press(.dismiss)
        #expect(calls.sent.withLock { $0 } == ["dismiss b1 -"])
    }

    @Test func theTUIRecordsWhereEachKeysTargetIs() {
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("expanded", attached: "a1", expanded: "b1", lockScreen: ["b1", "a1"]),
                items: [Self.appA(), Self.appB()]))
        let places = TerminalFrame.Places(island: 1, cards: ["b1": 12, "a1": 18])
        let targets = TUIController.targets(model: model, selectedID: "a1", places: places, now: F.now)
        #expect(targets[ClickTarget("a1", "tap")] == TUIPlacement(row: 18))
        #expect(targets[ClickTarget("b1", "collapse")] == TUIPlacement(row: 1))
        #expect(targets[ClickTarget("b1", "button:pause")] == TUIPlacement(row: 1, button: 1))
        #expect(targets[ClickTarget("b1", "tap")] == nil, "⏎ acts on the selection, a1")
        // Off screen: nothing to act on.
        let none = TUIController.targets(model: model, selectedID: "a1", places: TerminalFrame.Places(), now: F.now)
        #expect(none.isEmpty)
    }
}
