import IslandCore
import OrderedJSON
import IslandPresenter
import OrderedCollections
import Testing
@testable import IslandOverlay

/// `OverlayController` as the GTK shell drives it, without a display: the daemon's updates,
/// the pointer, the keys, the frame clock and the timers go in; the steps that come out are
/// what is checked. Time is the test's own (`Desk.wait`, `Desk.settle`).
@Suite struct OverlayControllerTests {
    /// The two clocks, advanced by the test.
    final class ManualClock {
        var wall = Scenes.now
        var monotonic = 1000.0

        func advance(_ seconds: Double) {
            wall += seconds
            monotonic += seconds
        }
    }

    /// The shell's part, played by the test: every `.redraw` is painted at once, frames come at
    /// 60 Hz while the controller wants them, timers fire when the clock reaches them.
    struct Desk {
        let clock = ManualClock()
        var controller: OverlayController
        /// Every step, in order, since the test last took them.
        var steps: [OverlayStep] = []
        var timers: [OverlayTimer: Double] = [:]

        init(config: OverlayConfig = OverlayConfig(), motion: Bool = true, settings: OverlayController.Settings = .init()) {
            let clock = clock
            controller = OverlayController(
                layout: OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics()), config: config,
                motion: motion, settings: settings, clock: OverlayClock(wall: { clock.wall }, monotonic: { clock.monotonic }))
            send(.windowShown)
            steps = []
        }

        mutating func send(_ event: OverlayEvent) {
            let new = controller.handle(event)
            steps += new
            for step in new {
                switch step {
                case .schedule(let timer, let milliseconds): timers[timer] = clock.monotonic + Double(milliseconds) / 1000
                case .cancel(let timer): timers[timer] = nil
                default: break
                }
            }
            if new.contains(.redraw) { send(.painted) }
        }

        /// What the shell was asked to do since the last call.
        mutating func take() -> [OverlayStep] {
            defer { steps = [] }
            return steps
        }

        /// Frames at 60 Hz until the island stands still.
        mutating func settle() {
            var frames = 0
            while controller.wantsFrames && frames < 600 {
                frame()
                frames += 1
            }
            #expect(!controller.motion.isAnimating)
        }

        /// One frame of the compositor's clock, 1/60 s after the last.
        mutating func frame() {
            wait(1.0 / 60)
            send(.frame(microseconds: Int64((clock.monotonic * 1_000_000).rounded())))
        }

        /// Time passing; the timers due in it fire, in order.
        mutating func wait(_ seconds: Double) {
            let end = clock.monotonic + seconds
            while let (timer, due) = timers.min(by: { $0.value < $1.value }), due <= end {
                clock.advance(due - clock.monotonic)
                timers[timer] = nil
                send(.timerFired(timer))
            }
            clock.advance(end - clock.monotonic)
        }

        /// Where `target` is in the frame on screen.
        func place(_ target: OverlayTarget) throws -> (x: Double, y: Double) {
            let rect = try #require(controller.clicks.onScreen?.hits.last { $0.target == target }?.rect, "\(target) on screen")
            return (rect.midX, rect.midY)
        }

        mutating func click(_ target: OverlayTarget, button: Int = 1) throws {
            let (x, y) = try place(target)
            send(.pressed(x: x, y: y, button: button))
        }

        var form: OverlayForm? { controller.motion.target?.form }
    }

    static func snapshot(_ island: JSONObject, items: [JSON] = [Scenes.simpleItem("a")]) -> JSONObject {
        var island = island
        if island["lockScreen"] == nil { island["lockScreen"] = .array(items.compactMap { $0["id"] }) }
        return ["kind": "snapshot", "sequence": 1, "resync": false, "island": .object(island), "items": .array(items), "removed": []]
    }

    static func delta(_ sequence: Int, island: JSONObject? = nil, items: [JSON] = []) -> JSONObject {
        var delta: JSONObject = ["kind": "delta", "sequence": .int(sequence), "resync": false, "items": .array(items), "removed": []]
        if let island { delta["island"] = .object(island) }
        return delta
    }

    static let compact: JSONObject = ["mode": "compact", "attached": "a"]
    static let expanded: JSONObject = ["mode": "expanded", "attached": "a", "expanded": "a"]

    static func sent(_ steps: [OverlayStep]) -> [OverlayRequest] {
        steps.compactMap { if case .send(let request) = $0 { request } else { nil } }
    }

    static func logged(_ steps: [OverlayStep]) -> [String] {
        steps.compactMap { if case .log(let line) = $0 { line } else { nil } }
    }

    // One typed `#expect` each for the comparisons the tests make most: an `#expect(a == [literal])`
    // at every call site costs the test build 10-60 ms more of type-checking than a call of these
    // (the literal's type is inferred through the macro's expansion), and a failure still shows both sides.

    static func expectSent(
        _ steps: [OverlayStep], _ expected: [OverlayRequest], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sent(steps) == expected, comment, sourceLocation: sourceLocation)
    }

    static func expectLogged(_ steps: [OverlayStep], _ expected: [String], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(logged(steps) == expected, comment, sourceLocation: sourceLocation)
    }

    // MARK: What the brief asks of the controller

    /// While the island morphs, a click on what is appearing does nothing for the app; once
    /// the morph has ended and the settle time passed, the same click presses the button.
    @Test func aClickDuringAMorphDoesNothing() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        desk.wait(1)
        desk.send(.update(Self.delta(2, island: Self.expanded)))
        #expect(desk.controller.wantsFrames)
        desk.frame()
        desk.frame()
        #expect(desk.controller.motion.shapesMoving)
        _ = desk.take()

        let pause = OverlayTarget.button(id: "a", action: "pause")
        try desk.click(pause)
        try desk.click(.tap(id: "a", url: "https://example.org/whole"))
        Self.expectSent(desk.take(), [])

        desk.settle()
        desk.wait(0.5)
        try desk.click(pause)
        Self.expectSent(desk.take(), [.button(id: "a", action: "pause")])
    }

    @Test func expandThenOpenTheListThenCollapse() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        // Expanding acts for no app: not held back by the settle time.
        try desk.click(.expand(id: "a"))
        Self.expectSent(desk.take(), [.expand(id: "a")])
        desk.send(.answered(.expand(id: "a"), url: nil))
        Self.expectLogged(desk.take(), ["expand a"])

        desk.send(.update(Self.delta(2, island: Self.expanded)))
        desk.settle()
        expectForm(desk.form, .expanded)
        try desk.click(.tap(id: "a", url: "https://example.org/whole"), button: 3)
        let opened = desk.take()
        Self.expectLogged(opened, ["list opened"])
        #expect(opened.contains(.raiseWindow))
        #expect(desk.controller.listOpen && desk.controller.motion.target?.listOpen == true)
        desk.settle()

        desk.send(.escapePressed)
        let collapsed = desk.take()
        Self.expectSent(collapsed, [.collapse(id: "a")])
        #expect(!desk.controller.listOpen && desk.controller.motion.target?.listOpen == false)
        desk.send(.update(Self.delta(3, island: Self.compact)))
        desk.settle()
        expectForm(desk.form, .compact)
    }

    /// An update of the expanded activity (a new state) changes what is drawn, not what is
    /// open: the pointer-away countdown keeps running, and the buttons that did not move stay
    /// pressable.
    @Test func aDeltaWhileExpanded() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.settle()
        desk.wait(1)
        desk.send(.pointerMoved(x: 430, y: 600))
        #expect(desk.take().contains(.schedule(.pointerAway, milliseconds: 4000)))

        desk.send(.update(Self.delta(2, items: [Scenes.simpleItem("a", text: "Pouring", done: 3)])))
        let changed = desk.take()
        #expect(!changed.contains(.cancel(.pointerAway)))
        let described = changed.compactMap { if case .describe(let frame) = $0 { frame } else { nil } }
        #expect(described.count == 1)
        #expect(described.first?.hits.contains { $0.name.contains("Pouring") } == true)
        #expect(!desk.controller.motion.shapesMoving, "only the content crossfades")
        try desk.click(.button(id: "a", action: "stop"))
        Self.expectSent(desk.take(), [.button(id: "a", action: "stop")])

        desk.settle()
        desk.wait(4)
        let away = desk.take()
        Self.expectLogged(away, ["pointer away for 4.0 s: collapsing"])
        Self.expectSent(away, [.collapse(id: "a")])
    }

    /// The connection lost: said once (not at every failed attempt), the island hidden and
    /// nothing of the old one clickable; the next snapshot brings it back, its targets new.
    @Test func reconnection() throws {
        var desk = Desk()
        desk.send(.disconnected(reason: "cannot connect"))
        desk.send(.disconnected(reason: "cannot connect"))
        Self.expectLogged(desk.take(), ["disconnected: cannot connect; reconnecting"])

        desk.send(.update(Self.snapshot(Self.expanded)))
        Self.expectLogged(desk.take(), ["subscribed; 1 activities, island expanded"])
        desk.settle()
        desk.wait(1)
        let stop = try desk.place(.button(id: "a", action: "stop"))

        desk.send(.disconnected(reason: "the daemon is shutting down"))
        desk.send(.disconnected(reason: "cannot connect"))
        Self.expectLogged(desk.take(), ["disconnected: the daemon is shutting down; reconnecting"])
        desk.settle()
        expectForm(desk.form, .hidden)
        desk.send(.pressed(x: stop.x, y: stop.y, button: 1))
        Self.expectSent(desk.take(), [])

        desk.send(.update(Self.snapshot(Self.expanded)))
        Self.expectLogged(desk.take(), ["subscribed; 1 activities, island expanded"])
        desk.settle()
        // Back where it was, but new on screen: it waits its settle time again.
        desk.send(.pressed(x: stop.x, y: stop.y, button: 1))
        Self.expectSent(desk.take(), [])
        desk.wait(0.5)
        desk.send(.pressed(x: stop.x, y: stop.y, button: 1))
        Self.expectSent(desk.take(), [.button(id: "a", action: "stop")])
    }

    @Test func escapeCollapses() {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        _ = desk.take()
        desk.send(.escapePressed)
        #expect(desk.take() == [] as [OverlayStep], "nothing is open")

        desk.send(.update(Self.delta(2, island: Self.expanded)))
        desk.settle()
        _ = desk.take()
        desk.send(.escapePressed)
        Self.expectSent(desk.take(), [.collapse(id: "a")])
        desk.send(.focusLost)
        Self.expectSent(desk.take(), [.collapse(id: "a")])
    }

    /// ClickGuard's rule through the controller: a target acts once it has stood still on
    /// screen for the settle time, counted from the first frame painted at rest, and not before;
    /// the frame log says when, and why a click was ignored.
    @Test func theClickGuardSettleRuleIsHonoured() throws {
        var desk = Desk(settings: .init(settleTime: 0.8, frameLog: true))
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.settle()
        let actionableAt = try #require(desk.controller.clicks.nextActionable(after: desk.clock.monotonic))
        #expect(desk.timers[.actionableLog].map { $0 > actionableAt && $0 < actionableAt + 0.0025 } == true, "logged when it happens")
        _ = desk.take()

        desk.wait(actionableAt - 0.01 - desk.clock.monotonic)
        try desk.click(.button(id: "a", action: "pause"))
        let early = desk.take()
        Self.expectSent(early, [])
        #expect(Self.logged(early).first?.hasSuffix("on button a pause ignored: not on screen, still, for 0.8 s yet") == true)

        desk.wait(0.02)
        #expect(Self.logged(desk.take()).first?.hasPrefix("actionable: button a pause; button a stop; tap a ") == true)
        try desk.click(.button(id: "a", action: "pause"))
        let pressed = desk.take()
        Self.expectSent(pressed, [.button(id: "a", action: "pause")])
        #expect(Self.logged(pressed).first?.hasSuffix("on button a pause") == true)
    }

    @Test func theSettleTimeFromTheEnvironmentIsNeverShorter() {
        #expect(OverlayController.Settings(environment: [:]).settleTime == 0.5)
        #expect(OverlayController.Settings(environment: ["ISLAND_OVERLAY_CLICK_SETTLE_MS": "2000"]).settleTime == 2)
        #expect(OverlayController.Settings(environment: ["ISLAND_OVERLAY_CLICK_SETTLE_MS": "100"]).settleTime == 0.5)
        #expect(OverlayController.Settings(environment: ["ISLAND_OVERLAY_CLICK_SETTLE_MS": "nan"]).settleTime == 0.5)
        #expect(OverlayController.Settings(environment: ["ISLAND_OVERLAY_FRAME_LOG": "1"]).frameLog)
    }

    // MARK: More of its rules

    /// A tap opens the web address of the region clicked, else the URL the daemon answers;
    /// never anything an opener would read as an option.
    @Test func aTapOpensTheRegionsWebAddressElseTheAnswer() {
        var desk = Desk(config: OverlayConfig(text: "[Overlay]\nOpener=firefox --new-tab"))
        desk.send(.answered(.tap(id: "a", url: "https://example.org/help"), url: "https://example.org/whole"))
        #expect(desk.take() == [.open("https://example.org/help", opener: ["firefox", "--new-tab"])] as [OverlayStep])
        desk.send(.answered(.tap(id: "a", url: nil), url: "https://example.org/whole"))
        #expect(desk.take() == [.open("https://example.org/whole", opener: ["firefox", "--new-tab"])] as [OverlayStep])
        desk.send(.answered(.tap(id: "a", url: nil), url: "--help"))
        desk.send(.answered(.tap(id: "a", url: nil), url: nil))
        #expect(desk.take() == [] as [OverlayStep])
        desk.send(.failed(.tap(id: "a", url: nil), message: "the connection closed"))
        Self.expectLogged(desk.take(), ["tap failed: the connection closed"])
        #expect(OverlayController.web("file:///etc/passwd") == nil)
        #expect(OverlayController.web("HTTPS://example.org") == "HTTPS://example.org")
    }

    /// The frame clock runs only while something moves; with motion off, nothing does.
    @Test func framesAreAskedForOnlyWhileSomethingMoves() {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        #expect(desk.take().filter { $0 == .startFrames }.count == 1)
        desk.settle()
        #expect(!desk.controller.wantsFrames)
        _ = desk.take()
        desk.send(.frame(microseconds: 0))
        #expect(desk.take() == [] as [OverlayStep], "a late frame after settling draws nothing")

        var still = Desk(motion: false)
        still.send(.update(Self.snapshot(Self.compact)))
        #expect(!still.take().contains(.startFrames))
        expectForm(still.form, .compact)
    }

    /// A timer on screen redraws on each whole second (5 ms past it), without crossfading;
    /// once nothing on screen depends on time, the ticks stop.
    @Test func aTimerOnScreenTicksOnTheSecond() {
        let timer: JSON = ["compactLeading": ["type": "symbol", "name": "⏱"], "compactTrailing": ["type": "timer", "to": "{{state.endsAt}}"]]
        let item = Scenes.item("t", layout: timer, state: ["endsAt": .double(Scenes.now + 600)])
        var desk = Desk()
        desk.clock.wall += 0.25
        desk.send(.update(Self.snapshot(["mode": "compact", "attached": "t"], items: [item])))
        #expect(desk.take().contains(.schedule(.secondTick, milliseconds: 755)))
        desk.settle()
        _ = desk.take()
        let before = desk.controller.motion.target
        desk.wait(1)
        let ticked = desk.take()
        #expect(desk.controller.motion.target != before, "the countdown moved on")
        #expect(ticked.contains(.redraw) && !ticked.contains(.startFrames), "a tick replaces the text at once")
        #expect(desk.timers[.secondTick] != nil, "and the next second is awaited")

        desk.send(.update(Self.delta(2, island: ["mode": "none"])))
        #expect(desk.take().contains(.cancel(.secondTick)))
        #expect(desk.timers.isEmpty)
    }

    /// CollapseAfter=0: the pointer away never collapses; a new configuration applies to the
    /// next countdown.
    @Test func theConfigurationDecidesThePointerAwayCountdown() {
        var desk = Desk(config: OverlayConfig(text: "[Overlay]\nCollapseAfter=0"))
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.settle()
        desk.send(.pointerMoved(x: 430, y: 600))
        #expect(!desk.take().contains { if case .schedule(.pointerAway, _) = $0 { true } else { false } })

        desk.send(.configured(OverlayConfig(text: "[Overlay]\nCollapseAfter=2")))
        desk.send(.pointerMoved(x: 431, y: 600))
        #expect(desk.take().contains(.schedule(.pointerAway, milliseconds: 2000)))
        // Back on the island: the countdown stops.
        desk.send(.pointerMoved(x: 220, y: 40))
        #expect(desk.take().contains(.cancel(.pointerAway)))
    }

    /// Reserve=no: the pointer resting on the compact island for a second fades it (the shell
    /// paints it faint), moving on it keeps it faded, and leaving it brings it back at once.
    @Test func restingOnTheCompactIslandFadesItUntilThePointerLeaves() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        let (x, y) = try desk.place(.expand(id: "a"))
        desk.send(.pointerMoved(x: x, y: y))
        #expect(desk.take().contains(.schedule(.pointerResting, milliseconds: 1000)))
        desk.wait(0.9)
        #expect(!desk.controller.faded)
        desk.wait(0.2)
        #expect(desk.controller.faded)
        #expect(desk.take().contains(.redraw))
        desk.send(.pointerMoved(x: x + 1, y: y))
        #expect(desk.controller.faded)
        #expect(!desk.take().contains { if case .schedule(.pointerResting, _) = $0 { true } else { false } })

        desk.send(.pointerLeft)
        #expect(!desk.controller.faded)
        let left = desk.take()
        #expect(left.contains(.redraw))
        #expect(left.contains(.log("the island is drawn whole again: the pointer left it, or it took another form")))
        // Passing over it for less than the rest: no fade.
        desk.send(.pointerMoved(x: x, y: y))
        desk.wait(0.5)
        desk.send(.pointerMoved(x: 2, y: 600))
        #expect(desk.take().contains(.cancel(.pointerResting)))
        desk.wait(2)
        #expect(!desk.controller.faded)
    }

    /// The island takes another form (expanded, by a click on the faded island): whole again.
    /// With Reserve=yes no window is under it, and it never fades; nor does the expanded island,
    /// nor an island whose window cannot be translucent.
    @Test func onlyTheCompactIslandOverWindowsFades() throws {
        var desk = Desk()
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        let (x, y) = try desk.place(.expand(id: "a"))
        desk.send(.pointerMoved(x: x, y: y))
        desk.wait(1.5)
        #expect(desk.controller.faded)
        desk.send(.update(Self.delta(2, island: Self.expanded)))
        #expect(!desk.controller.faded)
        desk.settle()
        desk.send(.pointerMoved(x: 220, y: 40))
        desk.wait(3)
        #expect(!desk.controller.faded)

        var reserved = Desk(config: OverlayConfig(text: "[Overlay]\nReserve=yes"))
        reserved.send(.update(Self.snapshot(Self.compact)))
        reserved.settle()
        let (rx, ry) = try reserved.place(.expand(id: "a"))
        reserved.send(.pointerMoved(x: rx, y: ry))
        reserved.wait(3)
        #expect(!reserved.controller.faded)

        // X11 with no compositing manager blends no alpha: fading would only lose the text.
        var shaped = Desk(settings: .init(cutsWindowToShapes: true))
        shaped.send(.update(Self.snapshot(Self.compact)))
        shaped.settle()
        let (sx, sy) = try shaped.place(.expand(id: "a"))
        shaped.send(.pointerMoved(x: sx, y: sy))
        shaped.wait(3)
        #expect(!shaped.controller.faded)
    }

    // MARK: The keyboard while open (layer-shell: on-demand from version 4, exclusive on 3)

    static func keyboards(_ steps: [OverlayStep]) -> [OverlayKeyboard] {
        steps.compactMap { if case .keyboard(let keyboard) = $0 { keyboard } else { nil } }
    }

    static func expectKeyboards(
        _ steps: [OverlayStep], _ expected: [OverlayKeyboard], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(keyboards(steps) == expected, comment, sourceLocation: sourceLocation)
    }

    @Test func whatTheIslandAsksOfTheKeyboardFollowsTheLayerShellVersion() {
        #expect(OverlayKeyboard.whileOpen(layerShellVersion: 3) == .exclusive, "KWin 5.27: no on-demand")
        #expect(OverlayKeyboard.whileOpen(layerShellVersion: 4) == .onDemand)
        #expect(OverlayKeyboard.whileOpen(layerShellVersion: 5) == .onDemand)
    }

    /// The ways an open island closes.
    enum Closing: String, CaseIterable, Sendable {
        case escape, focusLost, clickAway, pointerAway, activityEnded, daemonGone
    }

    /// The keyboard is asked for when the island expands, and given back by every way it
    /// closes, in the same step, before the daemon answers a collapse: on layer-shell v3 it is
    /// held exclusively, and nothing may leave it held.
    @Test(arguments: [UInt32(3), 4], Closing.allCases)
    func everyWayTheIslandClosesGivesTheKeyboardBack(layerShellVersion: UInt32, closing: Closing) {
        let open = OverlayKeyboard.whileOpen(layerShellVersion: layerShellVersion)
        var desk = Desk(settings: .init(keyboardWhileOpen: open))
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        Self.expectKeyboards(desk.take(), [], "the compact island leaves the keyboard alone")
        desk.send(.update(Self.delta(2, island: Self.expanded)))
        Self.expectKeyboards(desk.take(), [open])
        #expect(desk.controller.keyboard == open)
        desk.settle()
        desk.wait(1)
        _ = desk.take()

        switch closing {
        case .escape: desk.send(.escapePressed)
        case .focusLost: desk.send(.focusLost)
        case .clickAway: desk.send(.pressed(x: 2, y: 600, button: 1))
        case .pointerAway:
            desk.send(.pointerMoved(x: 430, y: 600))
            desk.wait(4)
        case .activityEnded:
            var ended = Self.delta(3, island: ["mode": "none"])
            ended["removed"] = .array(["a"])
            desk.send(.update(ended))
        case .daemonGone: desk.send(.disconnected(reason: "the daemon is gone"))
        }
        let closed = desk.take()
        Self.expectKeyboards(closed, [OverlayKeyboard.none], "\(closing)")
        #expect(desk.controller.keyboard == .none)
        // The daemon's answer, when there is one, changes nothing more.
        desk.send(.update(Self.delta(4, island: Self.compact)))
        desk.settle()
        Self.expectKeyboards(desk.take(), [])
    }

    /// A daemon that never answers the collapse keeps the island drawn expanded, but not the
    /// keyboard: updates of the expanded activity do not take it again; a new expansion does.
    @Test func aCollapseTheDaemonNeverAnswersStillGivesTheKeyboardBack() {
        var desk = Desk(settings: .init(keyboardWhileOpen: .exclusive))
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.settle()
        Self.expectKeyboards(desk.take(), [.exclusive])
        desk.send(.escapePressed)
        let escaped = desk.take()
        Self.expectSent(escaped, [.collapse(id: "a")])
        Self.expectKeyboards(escaped, [OverlayKeyboard.none])
        desk.send(.failed(.collapse(id: "a"), message: "timed out"))
        desk.send(.update(Self.delta(2, items: [Scenes.simpleItem("a", text: "Pouring", done: 3)])))
        desk.settle()
        expectForm(desk.form, .expanded)
        Self.expectKeyboards(desk.take(), [])
        #expect(desk.controller.keyboard == .none)

        desk.send(.update(Self.delta(3, island: Self.compact)))
        desk.send(.update(Self.delta(4, island: Self.expanded)))
        Self.expectKeyboards(desk.take(), [.exclusive], "expanded again: Escape must reach it")
    }

    /// The list takes the keyboard too (opened with --toggle-list, no click focused the island),
    /// and closing it gives it back; a compact island under it keeps none.
    @Test(arguments: [UInt32(3), 4])
    func theListTakesTheKeyboardUntilItCloses(layerShellVersion: UInt32) {
        let open = OverlayKeyboard.whileOpen(layerShellVersion: layerShellVersion)
        var desk = Desk(settings: .init(keyboardWhileOpen: open))
        desk.send(.update(Self.snapshot(Self.compact)))
        desk.settle()
        _ = desk.take()
        desk.send(.toggleList)
        Self.expectKeyboards(desk.take(), [open])
        desk.send(.escapePressed)
        Self.expectKeyboards(desk.take(), [OverlayKeyboard.none])
        desk.send(.toggleList)
        desk.send(.toggleList)
        Self.expectKeyboards(desk.take(), [open, .none])
    }

    /// On layer-shell v3 the open island holds the keyboard exclusively, so the pointer leaving
    /// it closes it at once (a click in a window would not take the keyboard back); with an
    /// on-demand keyboard (v4) the pointer-away countdown does, as before.
    @Test(arguments: [UInt32(3), 4])
    func thePointerLeavingTheOpenIslandClosesItAtOnceOnlyWhereItHoldsTheKeyboard(layerShellVersion: UInt32) {
        let open = OverlayKeyboard.whileOpen(layerShellVersion: layerShellVersion)
        var desk = Desk(settings: .init(keyboardWhileOpen: open))
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.settle()
        desk.wait(1)
        desk.send(.pointerMoved(x: 200, y: 30))
        _ = desk.take()
        desk.send(.pointerLeft)
        let left = desk.take()
        if open == .exclusive {
            Self.expectSent(left, [.collapse(id: "a")])
            Self.expectKeyboards(left, [OverlayKeyboard.none])
        } else {
            Self.expectSent(left, [])
            #expect(left.contains(.schedule(.pointerAway, milliseconds: 4000)))
        }
    }

    /// Off layer-shell (X11, hosted) the island asks nothing of the keyboard.
    @Test func noLayerShellNoKeyboardSteps() {
        var desk = Desk(settings: .init(keyboardWhileOpen: .none))
        desk.send(.update(Self.snapshot(Self.expanded)))
        desk.send(.toggleList)
        desk.send(.escapePressed)
        Self.expectKeyboards(desk.take(), [])
    }
}
