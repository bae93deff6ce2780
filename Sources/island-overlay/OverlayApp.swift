import CGtk
import Foundation
import IslandOverlay
import IslandPresenter

/// The overlay's state. Everything here is touched on the GTK thread only (the process's main
/// thread, inside gtk_main): the subscription and interactions run in Swift tasks and hand their
/// results over with `onGTKThread`, which queues them on GLib's main context.
final class OverlayApp: @unchecked Sendable {
    var options = Options()
    var config = OverlayConfig()
    var window: UnsafeMutablePointer<GtkWidget>?
    var area: UnsafeMutablePointer<GtkWidget>?
    var painter: OverlayPainter!
    var layout: OverlayLayout!
    var model = PresenterModel()
    var motion = OverlayMotion()
    var listOpen = false
    var hovered: OverlayRect?
    var tickCallback: guint = 0
    var lastFrameTime = 0
    var secondTimer: guint = 0
    var scale: Int32 = 1
    var interactor: Interactor!
    var disconnected: String? = "connecting"
    var pidFile: String?
    var canvas = (width: 440.0, height: 640.0)
    /// What a click may act on: the frame last painted, and only targets that have stood still
    /// on screen for the settle time (issue #25, against tap-jacking by another app).
    var clicks = OverlayClicks(settleTime: OverlayApp.settleTime(ProcessInfo.processInfo.environment))
    var actionableTimer: guint = 0

    /// ISLAND_OVERLAY_CLICK_SETTLE_MS (for tests on a loaded machine): a longer settle time than
    /// the default 500 ms; never a shorter one.
    static func settleTime(_ environment: [String: String]) -> Double {
        let base = OverlayClicks.defaultSettleTime
        guard let text = environment["ISLAND_OVERLAY_CLICK_SETTLE_MS"], let ms = Double(text), ms.isFinite else { return base }
        return max(base, min(60, ms / 1000))
    }

    /// Seconds of a monotonic clock: what the click guard is given.
    func monotonic() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // MARK: Scene

    func handle(_ event: SubscriptionLoop.Event) {
        switch event {
        case .update(let update):
            model.apply(update)
            if model.hasSnapshot, disconnected != nil {
                log("subscribed; \(model.items.count) activities, island \(model.island.mode.rawValue)")
                disconnected = nil
            }
        case .disconnected(let reason):
            if disconnected == nil || disconnected == "connecting" { log("disconnected: \(reason); reconnecting") }
            model.reset()
            disconnected = reason
        }
        refresh(animated: true)
    }

    func now() -> Double { Date().timeIntervalSince1970 }

    /// Recomputes the frame from the model; animates to it when it changed.
    func refresh(animated: Bool) {
        let scene = IslandScene(model: model, now: now())
        if listOpen, scene.lockScreen.isEmpty, scene.mode == .none, model.hasSnapshot { listOpen = false }
        // A pointer-away countdown belongs to the expansion (or open list) it started under.
        let opened = listOpen ? "list" : model.island.mode == .expanded ? model.island.expanded : nil
        if opened != openedForLeaveTimer, leaveTimer != 0 {
            g_source_remove(leaveTimer)
            leaveTimer = 0
        }
        openedForLeaveTimer = opened
        let frame = layout.frame(scene, listOpen: listOpen)
        if frame != motion.target {
            motion.show(frame, animated: animated)
            updateInputShape(frame)
            updateWindowShape()
            updateAccessibility(frame)
            if let area { gtk_widget_queue_draw(area) }
            if motion.isAnimating { startAnimation() }
        }
        scheduleSecondTick(OverlayLayout.isTicking(scene, listOpen: listOpen))
    }

    /// A timer ticks on the second, and only while something on screen depends on time.
    func scheduleSecondTick(_ ticking: Bool) {
        if !ticking {
            if secondTimer != 0 { g_source_remove(secondTimer); secondTimer = 0 }
            return
        }
        guard secondTimer == 0 else { return }
        let fraction = now().truncatingRemainder(dividingBy: 1)
        let delay = guint(max(1, (1 - fraction) * 1000 + 5))
        secondTimer = g_timeout_add(delay, { _ in
            app.secondTimer = 0
            app.refresh(animated: false)
            return 0
        }, nil)
    }

    // MARK: Motion

    func startAnimation() {
        guard tickCallback == 0, let area else { return }
        lastFrameTime = 0
        tickCallback = gtk_widget_add_tick_callback(area, { _, clock, _ in
            let time = gdk_frame_clock_get_frame_time(clock)
            let dt = app.lastFrameTime == 0 ? 1.0 / 60 : Double(time - app.lastFrameTime) / 1_000_000
            app.lastFrameTime = time
            app.motion.step(dt)
            app.updateWindowShape()
            if let area = app.area { gtk_widget_queue_draw(area) }
            if app.motion.isAnimating { return 1 }
            // Settled: no more frames until something changes.
            app.tickCallback = 0
            return 0
        }, nil, nil)
    }

    /// ISLAND_OVERLAY_FRAME_LOG=1: one stderr line per frame painted, with its paint time, for
    /// the benchmark (frame times of morphs, redraws per second while a timer ticks).
    let frameLog = ProcessInfo.processInfo.environment["ISLAND_OVERLAY_FRAME_LOG"] == "1"

    func draw(_ cr: OpaquePointer) {
        let start = frameLog ? DispatchTime.now().uptimeNanoseconds : 0
        defer {
            if frameLog {
                let micros = (DispatchTime.now().uptimeNanoseconds - start) / 1000
                log("frame \(micros) us \(motion.isAnimating ? "animating" : "settled") \(motion.target?.form.rawValue ?? "none")")
            }
        }
        cairo_save(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgba(cr, 0, 0, 0, 0)
        cairo_paint(cr)
        cairo_restore(cr)
        painter.paint(motion, cairo: cr, hovered: hovered, scale: Int(scale))
        // What was just painted is what a click acts on (a morph mid-way: nothing for an app).
        clicks.painted(motion.target, shapesMoving: motion.shapesMoving, at: monotonic())
        if frameLog { scheduleActionableLog() }
    }

    /// With the frame log: "actionable: TARGET; ..." once the targets on screen may be clicked
    /// (tests click when it says so, not after a guessed delay).
    func scheduleActionableLog() {
        if actionableTimer != 0 { g_source_remove(actionableTimer); actionableTimer = 0 }
        let now = monotonic()
        guard let next = clicks.nextActionable(after: now) else { return }
        actionableTimer = g_timeout_add(guint(max(1, ((next - now) * 1000).rounded(.up) + 1)), { _ in
            app.actionableTimer = 0
            let targets = app.clicks.actionable(at: app.monotonic()).map(OverlayClicks.describe).sorted()
            log("actionable: \(targets.joined(separator: "; "))")
            app.scheduleActionableLog()
            return 0
        }, nil)
    }

    // MARK: Input

    /// Only the drawn shapes take input; clicks anywhere else reach the windows below.
    func updateInputShape(_ frame: OverlayFrame) {
        guard let window else { return }
        let region = Self.region(frame.shapes)
        gtk_widget_input_shape_combine_region(window, region)
        cairo_region_destroy(region)
    }

    /// On X11 with no compositing manager, alpha is not blended: the window itself is cut to
    /// the shapes as they are drawn now (X Shape), or its transparent parts would show black.
    var needsWindowShape = false

    func updateWindowShape() {
        guard needsWindowShape, let window else { return }
        let region = Self.region(motion.shapes.map(\.shape))
        gtk_widget_shape_combine_region(window, region)
        cairo_region_destroy(region)
    }

    static func region(_ shapes: [OverlayShape]) -> OpaquePointer {
        let region = cairo_region_create()!
        for row in OverlayLayout.pixelRows(shapes) {
            var rect = cairo_rectangle_int_t(x: Int32(row.x), y: Int32(row.y), width: Int32(row.width), height: Int32(row.height))
            cairo_region_union_rectangle(region, &rect)
        }
        return region
    }

    func updateAccessibility(_ frame: OverlayFrame) {
        guard let area, let accessible = gtk_widget_get_accessible(area) else { return }
        // Topmost first, as a pointer would find them; each name is bounded producer text.
        let regions = frame.hits.reversed().filter { !$0.name.isEmpty }.prefix(64)
        atk_object_set_name(accessible, frame.form == .hidden && !frame.listOpen ? "Island (nothing live)" : "Island, \(frame.form.rawValue)")
        atk_object_set_description(accessible, String(regions.map(\.name).joined(separator: "; ").prefix(2000)))
        let names = regions.map { strdup(String($0.name.prefix(300))) }
        defer { names.forEach { free($0) } }
        let roles: [Int32] = regions.map { region in
            switch region.target {
            case .button, .dismiss: Int32(ATK_ROLE_PUSH_BUTTON.rawValue)
            case .tap(_, let url) where url != nil: Int32(ATK_ROLE_LINK.rawValue)
            case .list: Int32(ATK_ROLE_LIST.rawValue)
            default: Int32(ATK_ROLE_PANEL.rawValue)
            }
        }
        names.map { UnsafePointer($0) }.withUnsafeBufferPointer { namePointers in
            roles.withUnsafeBufferPointer { rolePointers in
                island_accessible_set_regions(area, namePointers.baseAddress, rolePointers.baseAddress, Int32(regions.count))
            }
        }
        if frameLog {
            let count = atk_object_get_n_accessible_children(accessible)
            let first = count > 0 ? atk_object_ref_accessible_child(accessible, 0) : nil
            let firstName = first.flatMap { atk_object_get_name($0) }.map { String(cString: $0) } ?? ""
            if let first { g_object_unref(UnsafeMutableRawPointer(first)) }
            log("accessible: \(count) regions, first \"\(firstName)\"")
        }
    }

    func click(x: Double, y: Double, button: guint) {
        if button == 3 {
            toggleList()
            return
        }
        guard button == 1 else { return }
        // Hit-tested against the frame on screen, not the one a change is about to morph to.
        let decision = clicks.click(x: x, y: y, at: monotonic())
        if frameLog {
            log("click at \(Int(x)),\(Int(y)) on \(OverlayClicks.describe(decision.target))"
                + (decision.actionable ? "" : " ignored: not on screen, still, for \(clicks.settleTime) s yet"))
        }
        // Too early: nothing for the app (another app may have just moved it under the pointer).
        guard decision.actionable else { return }
        switch decision.target {
        case .expand(let id):
            send("expand", id: id)
        case .tap(let id, let url):
            let regionURL = url.flatMap { url in ["http", "https"].contains(url.prefix { $0 != ":" }.lowercased()) ? url : nil }
            let interactor = self.interactor!
            Task {
                do {
                    let returned = try await interactor.interact("tap", id: id)
                    onGTKThread { app.open(regionURL ?? returned) }
                } catch {
                    let message = "\(error)"
                    onGTKThread { log("tap failed: \(message)") }
                }
            }
        case .button(let id, let action):
            send("button", id: id, button: action)
        case .dismiss(let id):
            send("dismiss", id: id)
        case .list:
            break
        case .outside:
            collapse()
        }
    }

    func send(_ action: String, id: String?, button: String? = nil) {
        let interactor = self.interactor!
        Task {
            do {
                _ = try await interactor.interact(action, id: id, button: button)
                let what = [action, id, button].compactMap { $0 }.joined(separator: " ")
                onGTKThread { log(what) }
            } catch {
                let message = "\(error)"
                onGTKThread { log("\(action) failed: \(message)") }
            }
        }
    }

    /// Escape, focus lost, a click elsewhere: the expanded island collapses, the list closes.
    func collapse() {
        if model.island.mode == .expanded, let id = model.island.expanded { send("collapse", id: id) }
        if listOpen {
            listOpen = false
            refresh(animated: true)
        }
    }

    func toggleList() {
        listOpen.toggle()
        log(listOpen ? "list opened" : "list closed")
        refresh(animated: true)
        if listOpen, let window { gtk_window_present(island_window(window)) }
    }

    var leaveTimer: guint = 0
    var openedForLeaveTimer: String?

    /// Clicks outside the island go to the window below and focus may stay where it was, so
    /// "a click elsewhere" is seen as the pointer staying away: after CollapseAfter= seconds
    /// away, the expanded island collapses and the list closes.
    func pointerPresence(inside: Bool) {
        let open = listOpen || model.island.mode == .expanded
        if inside || !open || config.collapseAfter <= 0 {
            if leaveTimer != 0 { g_source_remove(leaveTimer); leaveTimer = 0 }
            return
        }
        guard leaveTimer == 0 else { return }
        leaveTimer = g_timeout_add(guint(config.collapseAfter * 1000), { _ in
            app.leaveTimer = 0
            log("pointer away for \(app.config.collapseAfter) s: collapsing")
            app.collapse()
            return 0
        }, nil)
    }

    func hover(x: Double, y: Double) {
        pointerPresence(inside: motion.target.map { $0.target(x: x, y: y) != .outside } ?? false)
        var rect: OverlayRect?
        if let frame = clicks.onScreen ?? motion.target {
            switch frame.target(x: x, y: y) {
            case .button, .dismiss: rect = frame.hits.last { $0.rect.contains(x: x, y: y) }?.rect
            default: rect = nil
            }
        }
        if rect != hovered {
            hovered = rect
            if let area { gtk_widget_queue_draw(area) }
        }
    }

    // MARK: Opening URLs

    /// Runs the opener with the URL as one argument: no shell ever sees it.
    func open(_ url: String?) {
        guard let url, !url.isEmpty, !url.hasPrefix("-") else { return }
        let argv = (config.opener ?? defaultOpener()) + [url]
        guard let program = argv.first else { return }
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let status = posix_spawnp(&pid, program, &actions, nil, cArgs, environ)
        if status != 0 {
            log("cannot run \(program): \(String(cString: strerror(status)))")
            return
        }
        log("opened \(url) with \(program)")
        // GLib reaps it when it exits.
        g_child_watch_add(pid, { _, _, _ in }, nil)
    }

    func defaultOpener() -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init)
        if directories.contains(where: { access($0 + "/gio", X_OK) == 0 }) { return ["gio", "open"] }
        return ["xdg-open"]
    }
}

let app = OverlayApp()

func log(_ message: String) {
    _ = writeAll("island-overlay: \(message)\n", to: 2)
}

/// Runs `work` on the GTK thread, from any thread.
func onGTKThread(_ work: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
    g_idle_add_full(G_PRIORITY_DEFAULT, { data in
        Unmanaged<WorkBox>.fromOpaque(data!).takeRetainedValue().work()
        return 0
    }, box, nil)
}

final class WorkBox: Sendable {
    let work: @Sendable () -> Void
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}
