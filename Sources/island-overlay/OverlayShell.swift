import CGtk
import Foundation
import IslandOverlay
import IslandPresenter
import SpawnDescriptors

/// The GTK side of the overlay: turns GTK's signals, the compositor's frame clock, GLib's
/// timers and signals and the daemon's subscription into `OverlayEvent`s, and carries out the
/// controller's `OverlayStep`s with GTK, cairo and Varlink. Every decision is the controller's.
///
/// It lives on the main actor: GTK runs on the process's main thread inside gtk_main, and calls
/// back there. GTK's C callbacks cannot capture, so each gets the shell as its user data and
/// checks it is on the main thread (`MainActor.assumeIsolated`, in `with`); Swift tasks hand
/// results over with `onGTKThread`.
@MainActor final class OverlayShell {
    private var controller: OverlayController
    /// The GLib sources of the controller's timers that are running.
    private var timers: [OverlayTimer: guint] = [:]
    private let window: OverlayWindow
    private let painter: OverlayPainter
    private let interactor: Interactor
    private let socketPath: String
    private let frameLog: Bool
    /// Standard input of a hosted overlay, cut into lines.
    private var hostLines = OverlayHostLines()
    /// The monitor and what is beside the island there; nil hosted (the desktop's shell places it).
    private let placement: OverlayPlacement?
    /// The window's size now, in logical pixels: made at start, then fitted to its monitor.
    private var canvas: (width: Double, height: Double)
    /// Where the window takes the pointer (the island's shapes), as last set: a surface mapped
    /// anew is given it again.
    private var inputRows: [OverlayRect]?

    init(
        window: OverlayWindow, placement: OverlayPlacement?, config: OverlayConfig, cssPath: String, socketPath: String,
        environment: [String: String]
    ) {
        self.window = window
        self.socketPath = socketPath
        loadStyle(window.area, userCSS: cssPath)
        var style = readStyle(window.area)
        style.geometry = config.geometry
        painter = OverlayPainter(style: style, icons: GtkIconSource(), artwork: ArtworkLoader())
        let layout = OverlayLayout(
            canvasWidth: window.canvas.width, canvasHeight: window.canvas.height, top: config.geometry.top,
            geometry: config.geometry, metrics: painter.metrics, artwork: painter.artwork)
        let settings = window.plan.settings(environment: environment)
        frameLog = settings.frameLog
        controller = OverlayController(
            layout: layout, config: config, motion: config.motion ?? (island_animations_enabled() != 0), settings: settings,
            clock: OverlayClock(wall: { Date().timeIntervalSince1970 }, monotonic: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }))
        interactor = Interactor(socketPath: socketPath)
        self.placement = placement
        canvas = window.canvas
    }

    func handle(_ event: OverlayEvent) {
        apply(controller.handle(event))
        let frame = controller.motion.target
        placement?.islandChanged(showing: frame?.showsSomething ?? false)
    }

    // MARK: Events in

    /// Connects GTK's signals and the process's signals to the controller.
    func listen() {
        let area = window.area, widget = window.widget
        connect(
            area, "draw",
            unsafeBitCast(
                { (_: UnsafeMutableRawPointer?, cr: OpaquePointer?, data: UnsafeMutableRawPointer?) -> gboolean in
                    OverlayShell.with(data) { shell in if let cr { shell.draw(cr) } }
                    return 1
                } as @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
        connect(area, "button-press-event") { _, event, data in
            guard let event else { return 0 }
            var x = 0.0, y = 0.0, button: guint = 0, type: Int32 = 0
            island_button_event(event, &x, &y, &button, &type)
            if type == Int32(GDK_BUTTON_PRESS.rawValue) { OverlayShell.with(data) { $0.handle(.pressed(x: x, y: y, button: Int(button))) } }
            return 1
        }
        connect(area, "motion-notify-event") { _, event, data in
            guard let event else { return 0 }
            var x = 0.0, y = 0.0
            island_motion_event(event, &x, &y)
            OverlayShell.with(data) { $0.handle(.pointerMoved(x: x, y: y)) }
            return 0
        }
        // Arriving is a position too: a pointer that jumps onto the island (warped by a keyboard
        // pointer tool or the compositor, or the island appearing under it) and stays there
        // never moves, and must rest on it all the same. Wayland suppresses the motion to where
        // an enter already put the pointer.
        connect(area, "enter-notify-event") { _, event, data in
            guard let event else { return 0 }
            var x = 0.0, y = 0.0
            guard gdk_event_get_coords(event, &x, &y) != 0 else { return 0 }
            OverlayShell.with(data) { shell in
                if shell.frameLog { log("the pointer entered at \(Int(x)),\(Int(y))") }
                shell.handle(.pointerMoved(x: x, y: y))
            }
            return 0
        }
        connect(area, "leave-notify-event") { _, _, data in
            OverlayShell.with(data) { shell in
                if shell.frameLog { log("the pointer left") }
                shell.handle(.pointerLeft)
            }
            return 0
        }
        connect(widget, "key-press-event") { _, event, data in
            guard let event, island_key_event(event) == guint(GDK_KEY_Escape) else { return 0 }
            OverlayShell.with(data) { $0.handle(.escapePressed) }
            return 1
        }
        // On X11 without a window manager GDK moves focus with the pointer: leaving the island
        // would be "focus lost". There the pointer-away countdown does the job alone.
        if window.wayland {
            // sway 1.7, handing the keyboard to the island (OverlayPlacement gives it only while
            // open), may first take it away: that focus-out is not the user's.
            connect(widget, "focus-in-event") { _, _, data in
                OverlayShell.with(data) { $0.placement?.keyboardArrived() }
                return 0
            }
            connect(widget, "focus-out-event") { _, _, data in
                OverlayShell.with(data) { shell in
                    if shell.placement?.awaitingKeyboard != true { shell.handle(.focusLost) }
                }
                return 0
            }
        }

        // SIGUSR1 (island-overlay --toggle-list) and the terminating signals, in the GTK loop.
        g_unix_signal_add(
            SIGUSR1,
            { data in
                OverlayShell.with(data) { $0.handle(.toggleList) }
                return 1
            }, pointer)
        for number in [SIGTERM, SIGINT, SIGHUP] {
            g_unix_signal_add(
                number,
                { _ in
                    gtk_main_quit(); return 0
                }, nil)
        }
        if window.hosted {
            g_unix_fd_add(
                0, GIOCondition(rawValue: G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue),
                { _, _, data in
                    var keep: gboolean = 1
                    OverlayShell.with(data) { keep = $0.readHost() ? 1 : 0 }
                    return keep
                }, pointer)
        }
    }

    /// What the host wrote on standard input; false (and the overlay ends) once it closed it:
    /// the host is gone, or stopped the island.
    private func readHost() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR || errno == EAGAIN { return true }
        guard count > 0 else {
            log("the host closed standard input: exiting")
            gtk_main_quit()
            return false
        }
        var state = controller.desktop
        let room = state.room
        for line in hostLines.feed(buffer[..<count]) {
            switch line {
            case .tooLong:
                log("host: a line over \(OverlayHostLines.maximumLineBytes) bytes, ignored")
            case .line(let bytes):
                if let problem = state.apply(line: bytes) { log("host: \(problem), line ignored") }
            }
        }
        handle(.desktop(state))
        if let newRoom = state.room, newRoom != room { hostGaveRoom(newRoom) }
        return true
    }

    /// Hosted: the host has this much room under its bar now (monitors changed, or its bar):
    /// the canvas is made to fit it, as wide as the expanded island may grow on the widest
    /// monitor there is now (the host chooses which the island is on).
    private func hostGaveRoom(_ room: Int) {
        let canvas = OverlayWindowPlan.canvas(
            config: controller.config, monitorHeight: 0, outputWidth: OverlayWindow.widestMonitor(), hosted: true,
            maxHeight: Double(room))
        guard resize(width: canvas.width, height: canvas.height) else { return }
        log("the host has \(room) px under its bar: window \(Int(canvas.width))x\(Int(canvas.height))")
    }

    /// Makes the window `width` × `height` (logical pixels) and lays the island out again in
    /// it; false when it is that size already.
    @discardableResult
    private func resize(width: Double, height: Double) -> Bool {
        guard width != canvas.width || height != canvas.height else { return false }
        canvas = (width, height)
        gtk_widget_set_size_request(window.widget, Int32(width), Int32(height))
        gtk_window_resize(island_window(window.widget), Int32(width), Int32(height))
        handle(.canvasResized(width: width, height: height))
        return true
    }

    /// Places and shows the window and subscribes to the daemon; GTK's loop (gtk_main) runs
    /// the rest.
    func start() {
        placement?.fullscreenChanged = { [unowned self] beside in
            var state = controller.desktop
            state.fullscreen = beside
            handle(.desktop(state))
        }
        placement?.canvasChanged = { [unowned self] width, height in resize(width: width, height: height) }
        placement?.remapped = { [unowned self] in applyInputRegion() }
        placement?.start()
        gtk_widget_show_all(window.widget)
        handle(.windowShown)
        log("\(window.description), motion \(controller.motion.enabled ? "on" : "off"), socket \(socketPath)")
        let loop = SubscriptionLoop(socketPath: socketPath)
        // Detached: a task of the main actor would wait for a main queue GTK's loop never runs.
        Task.detached { [self] in
            await loop.run { event in
                onGTKThread {
                    switch event {
                    case .update(let update): self.handle(.update(update))
                    case .disconnected(let reason): self.handle(.disconnected(reason: reason))
                    }
                }
            }
        }
    }

    /// The shell that a C callback was given as its data, on the main thread. It outlives
    /// every callback: it is alive until gtk_main returns, and the process then ends.
    nonisolated static func with(_ data: UnsafeMutableRawPointer?, _ body: @MainActor (OverlayShell) -> Void) {
        guard let data else { return }
        let shell = Unmanaged<OverlayShell>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { body(shell) }
    }

    private var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func connect(_ widget: UnsafeMutablePointer<GtkWidget>, _ signal: String, _ callback: GCallback) {
        island_signal_connect(UnsafeMutableRawPointer(widget), signal, callback, pointer)
    }

    /// A GDK event signal's handler: (widget, event, the shell) -> whether the event was handled.
    private typealias EventHandler = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean

    private func connect(_ widget: UnsafeMutablePointer<GtkWidget>, _ signal: String, _ handler: EventHandler) {
        connect(widget, signal, unsafeBitCast(handler, to: GCallback.self))
    }

    // MARK: Steps out

    private func apply(_ steps: [OverlayStep]) {
        for step in steps {
            switch step {
            case .redraw:
                gtk_widget_queue_draw(window.area)
            case .setInputRegion(let rows):
                inputRows = rows
                applyInputRegion()
            case .setWindowShape(let rows):
                let region = Self.region(rows)
                gtk_widget_shape_combine_region(window.widget, region)
                cairo_region_destroy(region)
            case .describe(let frame):
                describe(frame)
            case .startFrames:
                gtk_widget_add_tick_callback(
                    window.area,
                    { _, clock, data in
                        var more: gboolean = 0
                        OverlayShell.with(data) { shell in
                            shell.handle(.frame(microseconds: Int64(gdk_frame_clock_get_frame_time(clock))))
                            more = shell.controller.wantsFrames ? 1 : 0
                        }
                        return more
                    }, pointer, nil)
            case .schedule(let timer, let milliseconds):
                timers[timer] = g_timeout_add(guint(milliseconds), Self.callback(timer), pointer)
            case .cancel(let timer):
                if let source = timers.removeValue(forKey: timer) { g_source_remove(source) }
            case .send(let request):
                send(request)
            case .open(let url, let opener):
                open(url, with: opener ?? Self.defaultOpener())
            case .raiseWindow:
                gtk_window_present(island_window(window.widget))
            case .keyboard(let wanted):
                placement?.keyboard(wanted)
            case .overLockScreen(let locked):
                placement?.lockChanged(locked)
            case .wakeScreen:
                // Hosted, the host's shell lights its own lock screen (GNOME has no call for
                // another program to do it): one line on standard output tells it.
                if window.hosted {
                    _ = writeAll("{\"wake\": true}\n", to: 1)
                } else {
                    ScreenWaker.shared.wake()
                }
            case .log(let message):
                log(message)
            }
        }
    }

    /// A timer's callback: C function pointers capture nothing, so one for each timer.
    private static func callback(_ timer: OverlayTimer) -> GSourceFunc {
        switch timer {
        case .secondTick: { data in OverlayShell.fired(.secondTick, data) }
        case .pointerAway: { data in OverlayShell.fired(.pointerAway, data) }
        case .pointerResting: { data in OverlayShell.fired(.pointerResting, data) }
        case .actionableLog: { data in OverlayShell.fired(.actionableLog, data) }
        }
    }

    private nonisolated static func fired(_ timer: OverlayTimer, _ data: UnsafeMutableRawPointer?) -> gboolean {
        with(data) { shell in
            shell.timers[timer] = nil
            shell.handle(.timerFired(timer))
        }
        return 0
    }

    private func draw(_ cr: OpaquePointer) {
        let start = frameLog ? DispatchTime.now().uptimeNanoseconds : 0
        cairo_save(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgba(cr, 0, 0, 0, 0)
        cairo_paint(cr)
        cairo_restore(cr)
        let faded = controller.faded
        if faded { cairo_push_group(cr) }
        painter.paint(controller.motion, cairo: cr, hovered: controller.hovered, scale: Int(gtk_widget_get_scale_factor(window.area)))
        if faded {
            cairo_pop_group_to_source(cr)
            cairo_paint_with_alpha(cr, OverlayController.fadedOpacity)
        }
        handle(.painted)
        if frameLog {
            let micros = (DispatchTime.now().uptimeNanoseconds - start) / 1000
            let motion = controller.motion
            log("frame \(micros) us \(motion.isAnimating ? "animating" : "settled") \(motion.target?.form.rawValue ?? "none")")
        }
    }

    private func applyInputRegion() {
        guard let inputRows else { return }
        let region = Self.region(inputRows)
        gtk_widget_input_shape_combine_region(window.widget, region)
        cairo_region_destroy(region)
    }

    private static func region(_ rows: [OverlayRect]) -> OpaquePointer {
        let region = cairo_region_create()!
        for row in rows {
            var rect = cairo_rectangle_int_t(x: Int32(row.x), y: Int32(row.y), width: Int32(row.width), height: Int32(row.height))
            cairo_region_union_rectangle(region, &rect)
        }
        return region
    }

    private func describe(_ frame: OverlayFrame) {
        let area = window.area
        guard let accessible = gtk_widget_get_accessible(area) else { return }
        let said = OverlayAccessibility(frame)
        atk_object_set_name(accessible, said.name)
        atk_object_set_description(accessible, said.description)
        let regions = said.regions
        let names = regions.map { strdup($0.name) }
        defer { names.forEach { free($0) } }
        let roles: [Int32] = regions.map { region in
            switch region.role {
            case .pushButton: Int32(ATK_ROLE_PUSH_BUTTON.rawValue)
            case .link: Int32(ATK_ROLE_LINK.rawValue)
            case .list: Int32(ATK_ROLE_LIST.rawValue)
            case .panel: Int32(ATK_ROLE_PANEL.rawValue)
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

    // MARK: The daemon

    private func send(_ request: OverlayRequest) {
        let interactor = self.interactor
        Task.detached { [self] in
            do {
                let url = try await interactor.interact(request.action, id: request.id, button: request.button)
                onGTKThread { self.handle(.answered(request, url: url)) }
            } catch {
                let message = "\(error)"
                onGTKThread { self.handle(.failed(request, message: message)) }
            }
        }
    }

    // MARK: Opening URLs

    /// Runs the opener with the URL as one argument: no shell ever sees it.
    private func open(_ url: String, with opener: [String]) {
        let argv = opener + [url]
        guard let program = argv.first else { return }
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The opener (a browser, often, that outlives the overlay) gets none of the overlay's
        // descriptors: its connection to islandd among them, which would keep the presenter
        // connected to the daemon after the overlay is gone.
        SpawnDescriptors.closeFrom(3, in: &actions)
        let status = posix_spawnp(&pid, program, &actions, nil, cArgs, environ)
        if status != 0 {
            log("cannot run \(program): \(String(cString: strerror(status)))")
            return
        }
        log("opened \(url) with \(program)")
        // GLib reaps it when it exits.
        g_child_watch_add(pid, { _, _, _ in }, nil)
    }

    private static func defaultOpener() -> [String] {
        OverlayConfig.defaultOpener(path: ProcessInfo.processInfo.environment["PATH"]) { access($0, X_OK) == 0 }
    }
}

/// Runs `work` on the GTK thread, from any thread: GLib's main context runs it in gtk_main.
func onGTKThread(_ work: @escaping @MainActor @Sendable () -> Void) {
    let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
    g_idle_add_full(
        G_PRIORITY_DEFAULT,
        { data in
            let work = Unmanaged<WorkBox>.fromOpaque(data!).takeRetainedValue().work
            MainActor.assumeIsolated { work() }
            return 0
        }, box, nil)
}

final class WorkBox: Sendable {
    let work: @MainActor @Sendable () -> Void
    init(_ work: @escaping @MainActor @Sendable () -> Void) { self.work = work }
}
