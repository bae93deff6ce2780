package import OrderedJSON
package import IslandPresenter
import IslandProtocol
import OrderedCollections

/// The overlay's behaviour, with no GTK in it: what the daemon, the pointer, the keys, the
/// compositor's frame clock and the timers tell it goes in as an `OverlayEvent`; what to draw,
/// where input goes, what to ask the daemon, which timers to run and what to log comes out as
/// `OverlayStep`s, for the GTK shell to carry out. Time comes from the injected `OverlayClock`,
/// so every rule is tested without a display or a sleep.
///
/// It belongs to one thread (GTK's): it is a value, and the shell owns the only copy.
package struct OverlayController {
    /// What the controller is told once, at start.
    package struct Settings: Sendable, Hashable {
        /// How long a target must stand still on screen before a click acts on it.
        package var settleTime: Double
        /// ISLAND_OVERLAY_FRAME_LOG=1: log clicks, and when the targets on screen become
        /// actionable (tests click when it says so, not after a guessed delay).
        package var frameLog: Bool
        /// The window is cut to the shapes as they are drawn, each frame (X11 with no
        /// compositing manager, where alpha is not blended).
        package var cutsWindowToShapes: Bool
        /// What the island asks of the keyboard while the user has it open (expanded, or the
        /// list), for Escape to reach it: `OverlayKeyboard.whileOpen(layerShellVersion:)`.
        package var keyboardWhileOpen: OverlayKeyboard
        /// The input region is never empty: with nothing to click, one pixel at the canvas's
        /// top centre takes input (hosted on GNOME's Wayland compositor). Mutter keeps, for
        /// the pointer, the area around it where the same actor stays under it, and re-picks
        /// only when the pointer leaves that area or something is laid out anew; a surface
        /// with an empty input region is not in the pick at all, so that area then spans the
        /// island's window, and a new input region (an island shown) does not end it: the
        /// pointer could move onto the island and click without the island ever being told.
        /// A surface with any input is cut out of that area whole.
        package var inputNeverEmpty: Bool
        /// The session is locked when the daemon says so (its `lock`), not when a host does:
        /// the overlay places itself (not `--hosted`). Locked, it shows the lock-screen list
        /// and takes no input, and asks its window onto the compositor's lock screen
        /// (`.overLockScreen`) only then: what a locker shows over itself is only ever what the
        /// daemon redacted for it.
        package var followsDaemonLock: Bool

        package init(
            settleTime: Double = OverlayClicks.defaultSettleTime, frameLog: Bool = false, cutsWindowToShapes: Bool = false,
            keyboardWhileOpen: OverlayKeyboard = .onDemand, inputNeverEmpty: Bool = false, followsDaemonLock: Bool = false
        ) {
            self.settleTime = settleTime
            self.frameLog = frameLog
            self.cutsWindowToShapes = cutsWindowToShapes
            self.keyboardWhileOpen = keyboardWhileOpen
            self.inputNeverEmpty = inputNeverEmpty
            self.followsDaemonLock = followsDaemonLock
        }

        /// From the process's environment: ISLAND_OVERLAY_FRAME_LOG and
        /// ISLAND_OVERLAY_CLICK_SETTLE_MS.
        package init(
            environment: [String: String], cutsWindowToShapes: Bool = false, keyboardWhileOpen: OverlayKeyboard = .onDemand,
            inputNeverEmpty: Bool = false, followsDaemonLock: Bool = false
        ) {
            self.init(
                settleTime: Self.settleTime(environment), frameLog: environment["ISLAND_OVERLAY_FRAME_LOG"] == "1",
                cutsWindowToShapes: cutsWindowToShapes, keyboardWhileOpen: keyboardWhileOpen, inputNeverEmpty: inputNeverEmpty,
                followsDaemonLock: followsDaemonLock)
        }

        /// ISLAND_OVERLAY_CLICK_SETTLE_MS (for tests on a loaded machine): a longer settle time
        /// than the default 500 ms; never a shorter one.
        package static func settleTime(_ environment: [String: String]) -> Double {
            let base = OverlayClicks.defaultSettleTime
            guard let text = environment["ISLAND_OVERLAY_CLICK_SETTLE_MS"], let ms = Double(text), ms.isFinite else { return base }
            return max(base, min(60, ms / 1000))
        }
    }

    /// The daemon connection as the overlay last saw it.
    enum Connection: Equatable {
        /// Before the first snapshot.
        case connecting
        case connected
        /// Reconnecting after `reason`; said once, not at every failed attempt.
        case lost(reason: String)
    }

    package private(set) var config: OverlayConfig
    package let settings: Settings
    private var layout: OverlayLayout
    private let clock: OverlayClock

    package private(set) var model = PresenterModel()
    package private(set) var motion: OverlayMotion
    package private(set) var clicks: OverlayClicks
    package private(set) var listOpen = false
    /// The ids of the lock-screen list last logged (the frame log).
    private var lockScreenLogged: [String]?
    /// Reserve=no, where the island lies over windows: the pointer has rested on the compact
    /// (or minimal) island for `restBeforeFading`, and it is drawn at `fadedOpacity`, for what
    /// is under it to be seen, until the pointer leaves it or it takes another form. A click
    /// on it still acts.
    package private(set) var faded = false
    package static let restBeforeFading = 1.0
    package static let fadedOpacity = 0.15
    /// The button or dismissal under the pointer, drawn highlighted.
    package private(set) var hovered: OverlayRect?
    private(set) var connection = Connection.connecting
    /// The timers the shell runs for us now.
    package private(set) var timers: Set<OverlayTimer> = []
    /// Whether the shell is following the compositor's frame clock (sending `.frame`).
    package private(set) var wantsFrames = false
    private var lastFrameTime: Int64?
    /// What the pointer-away countdown was started under: the expanded activity, or the list.
    private var openedForPointerAway: String?
    /// What the desktop says: a fullscreen window beside the island (the compositor, or the
    /// GNOME Shell extension), Do Not Disturb (the extension).
    package private(set) var desktop = OverlayDesktopState()
    /// An alert held back by Do Not Disturb that the user expanded by clicking the island.
    private var openedHeldAlert: PresenterAlert?
    /// What the island asks of the keyboard now (`.keyboard` says each change).
    package private(set) var keyboard = OverlayKeyboard.none
    /// The expanded activity the user asked to collapse, until the daemon says it is not
    /// expanded any more: the keyboard is given back at the asking, not at the answer.
    private var collapseAsked: String?

    package init(
        layout: OverlayLayout, config: OverlayConfig = OverlayConfig(), motion: Bool = true,
        settings: Settings = Settings(), clock: OverlayClock
    ) {
        self.layout = layout
        self.config = config
        self.settings = settings
        self.clock = clock
        self.motion = OverlayMotion(enabled: motion)
        self.clicks = OverlayClicks(settleTime: settings.settleTime)
    }

    /// Handles one event; returns what the shell must do, in order.
    package mutating func handle(_ event: OverlayEvent) -> [OverlayStep] {
        var steps: [OverlayStep] = []
        // On the lock screen the list is shown, never acted on: no pointer, key or focus.
        if desktop.locked, event.isInput {
            if settings.frameLog, case .escapePressed = event { steps.append(.log("locked: a key ignored")) }
            return steps
        }
        switch event {
        case .windowShown:
            refresh(animated: false, &steps)
        case .update(let update):
            let applied = model.apply(update)
            if model.hasSnapshot, connection != .connected {
                steps.append(.log("subscribed; \(model.items.count) activities, island \(model.island.mode.rawValue)"))
                connection = .connected
            }
            let followed = followDaemonLock(&steps)
            // An alert the daemon sent while locked (it sends none for a secret activity, nor
            // under Do Not Disturb, and its text only as the level allows) lights the screen
            // the lock-screen list is on.
            if applied, update[PresenterNames.Update.alert] != nil, desktop.locked, model.sessionLocked {
                steps.append(.wakeScreen)
            }
            if followed { break }
            refresh(animated: true, &steps)
        case .disconnected(let reason):
            if connection == .connected || connection == .connecting { steps.append(.log("disconnected: \(reason); reconnecting")) }
            model.reset()
            connection = .lost(reason: reason)
            if followDaemonLock(&steps) { break }
            refresh(animated: true, &steps)
        case .pointerMoved(let x, let y):
            hover(x: x, y: y, &steps)
        case .pointerLeft:
            hover(x: -1, y: -1, &steps)
        case .pressed(let x, let y, let button):
            press(x: x, y: y, button: button, &steps)
        case .escapePressed, .focusLost:
            collapse(&steps)
        case .toggleList:
            toggleList(&steps)
        case .frame(let microseconds):
            frame(at: microseconds, &steps)
        case .painted:
            // What was just painted is what a click acts on (a morph mid-way: nothing for an app).
            clicks.painted(motion.target, shapesMoving: motion.shapesMoving, at: clock.monotonic())
            if settings.frameLog { scheduleActionableLog(&steps) }
        case .timerFired(let timer):
            timers.remove(timer)
            fired(timer, &steps)
        case .answered(let request, let url):
            if case .tap(_, let regionURL) = request {
                if let url = Self.openable(regionURL ?? url) { steps.append(.open(url, opener: config.opener)) }
            } else {
                steps.append(.log(request.description))
            }
        case .failed(let request, let message):
            steps.append(.log("\(request.action) failed: \(message)"))
        case .desktop(var state):
            // Followed from the daemon, the lock is not the host's to say.
            if settings.followsDaemonLock { state.locked = desktop.locked }
            desktopChanged(to: state, &steps)
        case .configured(let config):
            self.config = config
            if let motion = config.motion { self.motion.enabled = motion }
            // A countdown runs for the CollapseAfter= it started with: a new one starts at
            // the pointer's next move.
            cancel(.pointerAway, &steps)
        case .canvasResized(let width, let height):
            guard width != layout.canvasWidth || height != layout.canvasHeight else { break }
            layout.canvasWidth = width
            layout.canvasHeight = height
            // The island stays where it is on the screen, centred on its monitor, as the canvas
            // around it changes: drawn at its new place in the canvas at once, not morphed there.
            motion = OverlayMotion(enabled: motion.enabled, response: motion.response)
            refresh(animated: false, &steps)
        }
        return steps
    }

    private mutating func desktopChanged(to state: OverlayDesktopState, _ steps: inout [OverlayStep]) {
        // The host's room is the window's size, which the shell fits (`canvasResized`): kept,
        // and nothing shown changes for it.
        var shown = state
        shown.room = desktop.room
        guard shown != desktop else {
            desktop = state
            return
        }
        let previous = desktop
        desktop = state
        steps.append(.log("desktop: \(state.description)"))
        if keepsOutOfTheWay, listOpen { listOpen = false }
        // Unlocked, the island is as it was before the lock: the list closed.
        if !state.locked, previous.locked { listOpen = false }
        if state.locked != previous.locked, settings.followsDaemonLock { steps.append(.overLockScreen(state.locked)) }
        refresh(animated: true, &steps)
    }

    /// With `followsDaemonLock`, the lock the daemon says (none while it is not there); true
    /// if that changed the desktop (and so refreshed).
    private mutating func followDaemonLock(_ steps: inout [OverlayStep]) -> Bool {
        guard settings.followsDaemonLock, model.sessionLocked != desktop.locked else { return false }
        var state = desktop
        state.locked = model.sessionLocked
        desktopChanged(to: state, &steps)
        return true
    }

    // MARK: Scene

    /// Recomputes the frame from the model; animates to it when it changed.
    private mutating func refresh(animated: Bool, _ steps: inout [OverlayStep]) {
        if openedHeldAlert != model.alert { openedHeldAlert = nil }
        var scene = desktop.filter(IslandScene(model: model, now: clock.wall()), fullscreen: config.fullscreen, except: openedHeldAlert)
        // On the lock screen nothing is shown until the daemon has redacted every item for it
        // (its `lock`): the host may say it is locked before the daemon hears so.
        if desktop.locked, !model.sessionLocked { scene.lockScreen = [] }
        if desktop.locked { listOpen = !scene.lockScreen.isEmpty }
        if listOpen, scene.lockScreen.isEmpty, scene.mode == .none, model.hasSnapshot { listOpen = false }
        // A pointer-away countdown belongs to the expansion (or open list) it started under.
        let opened = listOpen ? "list" : model.island.mode == .expanded ? model.island.expanded : nil
        if opened != openedForPointerAway { cancel(.pointerAway, &steps) }
        openedForPointerAway = opened
        var frame = layout.frame(scene, listOpen: listOpen)
        if desktop.locked { lockScreenForm(&frame, scene, &steps) }
        if !Self.fades(frame, listOpen: listOpen) {
            cancel(.pointerResting, &steps)
            unfade(&steps)
        }
        if frame != motion.target {
            motion.show(frame, animated: animated)
            steps.append(.setInputRegion(inputRegion(frame)))
            cutWindow(&steps)
            steps.append(.describe(frame))
            steps.append(.redraw)
            if motion.isAnimating, !wantsFrames {
                wantsFrames = true
                lastFrameTime = nil
                steps.append(.startFrames)
            }
        }
        // A timer ticks on the second, and only while something on screen depends on time.
        if !OverlayLayout.isTicking(scene, listOpen: listOpen) {
            cancel(.secondTick, &steps)
        } else if !timers.contains(.secondTick) {
            let fraction = clock.wall().truncatingRemainder(dividingBy: 1)
            schedule(.secondTick, milliseconds: Int(max(1, (1 - fraction) * 1000 + 5)), &steps)
        }
        settleKeyboard(&steps)
    }

    /// The keyboard follows what the user has open: the expanded island (drawn so, not an
    /// alert) or the list take it as `settings.keyboardWhileOpen` says, anything else gives it
    /// back. On layer-shell v3 the island holds it exclusively, so a collapse the user asked for
    /// gives it back at once, whether or not the daemon answers, ever.
    private mutating func settleKeyboard(_ steps: inout [OverlayStep]) {
        let expanded = model.island.mode == .expanded ? model.island.expanded : nil
        if collapseAsked != expanded { collapseAsked = nil }
        // Locked, never: the locker's password field has the keys.
        let open = !desktop.locked && (listOpen || (motion.target?.form == .expanded && collapseAsked == nil))
        let wanted = open ? settings.keyboardWhileOpen : .none
        if wanted != keyboard {
            keyboard = wanted
            steps.append(.keyboard(wanted))
        }
    }

    /// The pixel rows of the frame's shapes (none while locked: the pointer goes through to
    /// the locker); with nothing to click and `inputNeverEmpty`, the canvas's top centre pixel.
    private func inputRegion(_ frame: OverlayFrame) -> [OverlayRect] {
        let rows = desktop.locked ? [] : OverlayLayout.pixelRows(frame.shapes)
        guard rows.isEmpty, settings.inputNeverEmpty else { return rows }
        return [OverlayRect(x: (layout.canvasWidth / 2).rounded(.down), y: 0, width: 1, height: 1)]
    }

    private func cutWindow(_ steps: inout [OverlayStep]) {
        if settings.cutsWindowToShapes { steps.append(.setWindowShape(OverlayLayout.pixelRows(motion.shapes.map(\.shape)))) }
    }

    /// A frame of the compositor's clock while something moves: the springs advance to it.
    private mutating func frame(at microseconds: Int64, _ steps: inout [OverlayStep]) {
        guard wantsFrames else { return }
        let dt = lastFrameTime.map { Double(microseconds - $0) / 1_000_000 } ?? 1.0 / 60
        lastFrameTime = microseconds
        motion.step(dt)
        cutWindow(&steps)
        steps.append(.redraw)
        // Settled: no more frames until something changes.
        if !motion.isAnimating { wantsFrames = false }
    }

    // MARK: Timers

    private mutating func schedule(_ timer: OverlayTimer, milliseconds: Int, _ steps: inout [OverlayStep]) {
        timers.insert(timer)
        steps.append(.schedule(timer, milliseconds: milliseconds))
    }

    private mutating func cancel(_ timer: OverlayTimer, _ steps: inout [OverlayStep]) {
        if timers.remove(timer) != nil { steps.append(.cancel(timer)) }
    }

    private mutating func fired(_ timer: OverlayTimer, _ steps: inout [OverlayStep]) {
        switch timer {
        case .secondTick:
            refresh(animated: false, &steps)
        case .pointerAway:
            steps.append(.log("pointer away for \(config.collapseAfter) s: collapsing"))
            collapse(&steps)
        case .pointerResting:
            faded = true
            steps.append(.log("the pointer rests on the island: faded, for what is under it to be seen"))
            steps.append(.redraw)
        case .actionableLog:
            let targets = clicks.actionable(at: clock.monotonic()).map(OverlayClicks.describe).sorted()
            steps.append(.log("actionable: \(targets.joined(separator: "; "))"))
            scheduleActionableLog(&steps)
        }
    }

    /// With the frame log: "actionable: TARGET; ..." once the targets on screen may be clicked.
    private mutating func scheduleActionableLog(_ steps: inout [OverlayStep]) {
        cancel(.actionableLog, &steps)
        let now = clock.monotonic()
        guard let next = clicks.nextActionable(after: now) else { return }
        schedule(.actionableLog, milliseconds: Int(max(1, ((next - now) * 1000).rounded(.up) + 1)), &steps)
    }

    // MARK: Input

    private mutating func press(x: Double, y: Double, button: Int, _ steps: inout [OverlayStep]) {
        if button == 3 {
            toggleList(&steps)
            return
        }
        guard button == 1 else { return }
        // Hit-tested against the frame on screen, not the one a change is about to morph to.
        let decision = clicks.click(x: x, y: y, at: clock.monotonic())
        if settings.frameLog {
            steps.append(
                .log(
                    "click at \(Int(x)),\(Int(y)) on \(OverlayClicks.describe(decision.target))"
                        + (decision.actionable ? "" : " ignored: not on screen, still, for \(clicks.settleTime) s yet")))
        }
        // Too early: nothing for the app (another app may have just moved it under the pointer).
        guard decision.actionable else { return }
        switch decision.target {
        case .expand(let id):
            // The daemon has it expanded already, for an alert Do Not Disturb held back here.
            if !desktop.alerts, let alert = model.alert, alert.id == id, model.island.expanded == id {
                openedHeldAlert = alert
                refresh(animated: true, &steps)
            } else {
                steps.append(.send(.expand(id: id)))
            }
            // Expanded again by the user, if the daemon never collapsed it.
            collapseAsked = nil
            settleKeyboard(&steps)
        case .tap(let id, let url): steps.append(.send(.tap(id: id, url: url.flatMap(Self.web))))
        case .button(let id, let action): steps.append(.send(.button(id: id, action: action)))
        case .dismiss(let id): steps.append(.send(.dismiss(id: id)))
        case .list: break
        case .outside: collapse(&steps)
        }
    }

    /// On the lock screen nothing acts: no dismiss button is drawn, and no target is there for
    /// an app (the cards stay, named, for assistive technologies). With the frame log, the ids
    /// the list shows, each time they change.
    private mutating func lockScreenForm(_ frame: inout OverlayFrame, _ scene: IslandScene, _ steps: inout [OverlayStep]) {
        frame.content.removeAll { $0.primitive == .dismiss }
        frame.hits.removeAll { OverlayClicks.actsForApp($0.target) }
        let ids = scene.lockScreen.map(\.item.id)
        if settings.frameLog, ids != lockScreenLogged {
            lockScreenLogged = ids
            steps.append(.log("lock screen: \(ids.joined(separator: " "))"))
        }
    }

    /// Beside a fullscreen window the island shows at most an alert (Fullscreen=hide|alerts).
    private var keepsOutOfTheWay: Bool { desktop.fullscreen && config.fullscreen != .always }

    /// Escape, focus lost, a click elsewhere: the expanded island collapses, the list closes.
    private mutating func collapse(_ steps: inout [OverlayStep]) {
        if model.island.mode == .expanded, let id = model.island.expanded {
            steps.append(.send(.collapse(id: id)))
            collapseAsked = id
        }
        if listOpen {
            listOpen = false
            refresh(animated: true, &steps)
        }
        settleKeyboard(&steps)
    }

    private mutating func toggleList(_ steps: inout [OverlayStep]) {
        // Beside a fullscreen window the island keeps out of the way.
        if keepsOutOfTheWay, !listOpen { return }
        listOpen.toggle()
        steps.append(.log(listOpen ? "list opened" : "list closed"))
        refresh(animated: true, &steps)
        if listOpen { steps.append(.raiseWindow) }
    }

    private mutating func hover(x: Double, y: Double, _ steps: inout [OverlayStep]) {
        let inside = motion.target.map { $0.target(x: x, y: y) != .outside } ?? false
        pointerPresence(inside: inside, &steps)
        pointerRests(onIsland: inside, &steps)
        var rect: OverlayRect?
        if let frame = clicks.onScreen ?? motion.target {
            switch frame.target(x: x, y: y) {
            case .button, .dismiss: rect = frame.hits.last { $0.rect.contains(x: x, y: y) }?.rect
            default: rect = nil
            }
        }
        if rect != hovered {
            hovered = rect
            steps.append(.redraw)
        }
    }

    /// Clicks outside the island go to the window below and focus may stay where it was, so
    /// "a click elsewhere" is seen as the pointer staying away: after CollapseAfter= seconds
    /// away, the expanded island collapses and the list closes.
    private mutating func pointerPresence(inside: Bool, _ steps: inout [OverlayStep]) {
        let open = listOpen || model.island.mode == .expanded
        // Layer-shell v3 (KWin 5.27) has no on-demand keyboard: the open island holds it
        // exclusively, so a click in a window cannot take it back and the user's typing would go
        // to the island. Leaving the island gives it back, by closing it.
        if !inside, open, keyboard == .exclusive {
            collapse(&steps)
            return
        }
        if inside || !open || config.collapseAfter <= 0 {
            cancel(.pointerAway, &steps)
            return
        }
        guard !timers.contains(.pointerAway) else { return }
        schedule(.pointerAway, milliseconds: Int(config.collapseAfter * 1000), &steps)
    }

    /// The pointer on the compact or minimal island (Reserve=no) starts the rest that fades
    /// it; anywhere else, it stops it and the island is drawn whole again.
    private mutating func pointerRests(onIsland: Bool, _ steps: inout [OverlayStep]) {
        // A window cut to its shapes (X11 with no compositing manager) blends no alpha: a
        // faded island would be drawn as dark as ever, its text lost.
        guard onIsland, !config.reserve, !settings.cutsWindowToShapes, let frame = motion.target,
            Self.fades(frame, listOpen: listOpen)
        else {
            cancel(.pointerResting, &steps)
            unfade(&steps)
            return
        }
        if !faded, !timers.contains(.pointerResting) {
            schedule(.pointerResting, milliseconds: Int(Self.restBeforeFading * 1000), &steps)
        }
    }

    /// Only the small forms fade: the expanded island, an alert and the list are what the user
    /// is looking at.
    private static func fades(_ frame: OverlayFrame, listOpen: Bool) -> Bool {
        !listOpen && (frame.form == .compact || frame.form == .minimal)
    }

    private mutating func unfade(_ steps: inout [OverlayStep]) {
        guard faded else { return }
        faded = false
        steps.append(.log("the island is drawn whole again: the pointer left it, or it took another form"))
        steps.append(.redraw)
    }

    // MARK: URLs

    /// A region's own URL is opened only when it is a web address; otherwise the tap's answer
    /// (the layout's URL, which the daemon checked) is.
    static func web(_ url: String) -> String? {
        ["http", "https"].contains(url.prefix { $0 != ":" }.lowercased()) ? url : nil
    }

    /// A URL the opener may be given: never empty, never one an opener would read as an option.
    static func openable(_ url: String?) -> String? {
        guard let url, !url.isEmpty, !url.hasPrefix("-") else { return nil }
        return url
    }
}

/// The overlay's two clocks, injected.
package struct OverlayClock {
    /// Seconds since 1970: the scene's timers and times of day.
    package let wall: () -> Double
    /// Seconds of a monotonic clock: how long a target has stood still for the click guard.
    package let monotonic: () -> Double

    package init(wall: @escaping () -> Double, monotonic: @escaping () -> Double) {
        self.wall = wall
        self.monotonic = monotonic
    }
}

/// What happens to the overlay, as the shell tells the controller.
package enum OverlayEvent: Sendable {
    /// The window is on screen: the first frame.
    case windowShown
    /// An update of the presenter subscription (the first after connecting is a snapshot).
    case update(JSONObject)
    /// The subscription ended or could not start; reconnection follows.
    case disconnected(reason: String)
    case pointerMoved(x: Double, y: Double)
    case pointerLeft
    /// A button pressed at a point of the window: 1 primary, 3 secondary.
    case pressed(x: Double, y: Double, button: Int)
    case escapePressed
    case focusLost
    /// `island-overlay --toggle-list` (SIGUSR1).
    case toggleList
    /// A frame of the compositor's frame clock, in microseconds, after `.startFrames`.
    case frame(microseconds: Int64)
    /// The window was painted from `motion` and `hovered` as they are now.
    case painted
    case timerFired(OverlayTimer)
    /// The daemon answered a request; for a tap, with the URL to open, if any.
    case answered(OverlayRequest, url: String?)
    case failed(OverlayRequest, message: String)
    /// The desktop said something new: the compositor (wlr-foreign-toplevel-management) or
    /// the shell of `island-overlay --hosted`.
    case desktop(OverlayDesktopState)
    /// A new configuration: CollapseAfter=, Opener= and Motion=on/off apply at once; the window's
    /// placement (Output=, Layer=, MarginTop=) is the shell's, decided when it opens.
    case configured(OverlayConfig)
    /// The window was made this size (in logical pixels), to fit its monitor as it is now:
    /// the island is laid out again, centred in it, the list no taller than it.
    case canvasResized(width: Double, height: Double)

    /// What a person does at the window: pointer, keys, focus and the list's toggle.
    var isInput: Bool {
        switch self {
        case .pointerMoved, .pointerLeft, .pressed, .escapePressed, .focusLost, .toggleList: true
        default: false
        }
    }
}

/// What the shell does for the controller.
package enum OverlayStep: Sendable, Hashable {
    /// Paint again from `motion` and `hovered`.
    case redraw
    /// Only these pixel rows take input: clicks anywhere else reach the windows below.
    case setInputRegion([OverlayRect])
    /// Cut the window itself to these pixel rows (only with `cutsWindowToShapes`).
    case setWindowShape([OverlayRect])
    /// What assistive technologies are told the window holds.
    case describe(OverlayFrame)
    /// Send `.frame` at each frame of the compositor's clock until `wantsFrames` is false.
    case startFrames
    /// Run `timer` once after `milliseconds` (it is not running: the controller cancels first).
    case schedule(OverlayTimer, milliseconds: Int)
    case cancel(OverlayTimer)
    /// Ask the daemon; answer with `.answered` or `.failed`.
    case send(OverlayRequest)
    /// Give `url` to `opener` (nil: the default opener) as one argument, with no shell.
    case open(String, opener: [String]?)
    /// Bring the window forward (the list opened: Escape should reach it).
    case raiseWindow
    /// Ask the compositor for the keyboard so (layer-shell keyboard interactivity).
    case keyboard(OverlayKeyboard)
    /// The daemon says the session is locked (true) or not any more: ask the compositor to
    /// draw the window over its lock screen, or to stop (`Settings.followsDaemonLock`).
    case overLockScreen(Bool)
    /// An alert came while locked: ask the desktop to wake the screen (the locker stays).
    case wakeScreen
    case log(String)
}

/// What the island asks of the keyboard: the layer surface's keyboard interactivity.
package enum OverlayKeyboard: String, Sendable, Hashable {
    /// None: keys go to the user's windows.
    case none
    /// Focusable like a window (layer-shell version 4 and later): the compositor may give the
    /// keyboard to another window meanwhile, and the island sees its focus go.
    case onDemand = "on-demand"
    /// All keys go to the island until it gives them back (layer-shell version 3, KWin 5.27,
    /// which has no on-demand).
    case exclusive

    /// What the island asks for while the user has it open, on a compositor whose
    /// wlr-layer-shell is `layerShellVersion`: on-demand where there is such a thing (version
    /// 4), else exclusive, given back at every collapse; without it Escape would never reach
    /// the island.
    package static func whileOpen(layerShellVersion: UInt32) -> OverlayKeyboard {
        layerShellVersion >= 4 ? .onDemand : .exclusive
    }
}

/// The overlay's timers, each run once at a time.
package enum OverlayTimer: Sendable, Hashable, CaseIterable {
    /// The next whole second, while a timer or a time-based progress is on screen.
    case secondTick
    /// The pointer has stayed away from the open island or list for CollapseAfter=.
    case pointerAway
    /// The pointer has rested on the compact island for `OverlayController.restBeforeFading`.
    case pointerResting
    /// The frame log's "actionable:" line.
    case actionableLog
}

/// A Presenter `Interact` call.
package enum OverlayRequest: Sendable, Hashable, CustomStringConvertible {
    case expand(id: String)
    case collapse(id: String)
    /// `url`: the clicked region's own web address, opened instead of the one the daemon answers.
    case tap(id: String, url: String?)
    case button(id: String, action: String)
    case dismiss(id: String)

    package var action: String {
        switch self {
        case .expand: "expand"
        case .collapse: "collapse"
        case .tap: "tap"
        case .button: "button"
        case .dismiss: "dismiss"
        }
    }

    package var id: String {
        switch self {
        case .expand(let id), .collapse(let id), .tap(let id, _), .button(let id, _), .dismiss(let id): id
        }
    }

    package var button: String? {
        if case .button(_, let action) = self { action } else { nil }
    }

    /// "ACTION ID [BUTTON]", as the log says it was done.
    package var description: String { [action, id, button].compactMap { $0 }.joined(separator: " ") }
}
