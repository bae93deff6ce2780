import CGtk
import CWaylandProtocols
import IslandOverlay

/// The monitors and what the compositor says of them, one for every island of the process:
/// follows GDK's monitors as they are plugged in and out, change mode, scale or position, and
/// as the primary one changes (X11), and places every island again (with Output=all, the
/// islands' keeper first gives each monitor without one an island). Monitor signals come in
/// bursts: they are noted (OverlayMonitorEvents) and the islands placed once, when GLib's loop
/// is idle, from the monitors as they are then.
@MainActor final class OverlayMonitors {
    let display: OpaquePointer
    let wayland: Bool
    /// wlroots compositors: windows and connector names. Nil on X11; on compositors without
    /// wlr-foreign-toplevel-management or xdg-output it binds what there is.
    let compositor: WaylandDesktop?
    /// X11: the active window, as an EWMH window manager says it. Nil on Wayland.
    let x11: X11Desktop?
    private let config: OverlayConfig
    private var placements: [OverlayPlacement] = []
    private var events = OverlayMonitorEvents()
    /// Output=all: run at every pass before the islands are placed, to give an island to each
    /// monitor that has none.
    var reconcile: () -> Void = {}

    init(wayland: Bool, config: OverlayConfig) {
        display = gdk_display_get_default()
        self.wayland = wayland
        self.config = config
        compositor = wayland ? WaylandDesktop(gdkDisplay: display) : nil
        compositor?.log = { log($0) }
        x11 = wayland ? nil : X11Desktop(gdkDisplay: display)
    }

    func follow(_ placement: OverlayPlacement) {
        placements.append(placement)
        compositor?.observers.append { [unowned placement] in placement.place() }
        x11?.observers.append { [unowned placement] in placement.place() }
        x11?.restacked.append { [unowned placement] in placement.windowRestacked() }
    }

    /// Says what the desktop tells, and follows the monitors.
    func start() {
        x11?.start()
        log(sources)
        island_signal_connect(
            UnsafeMutableRawPointer(display), "monitor-added",
            unsafeBitCast(
                { (_: UnsafeMutableRawPointer?, monitor: OpaquePointer?, data: UnsafeMutableRawPointer?) in
                    OverlayMonitors.with(data) { monitors in
                        guard let monitor else { return }
                        log("a monitor was added (model \(monitors.output(monitor).model ?? "unknown"))")
                        monitors.compositor?.watch(monitor)
                        monitors.watchShape(of: monitor)
                        monitors.changed()
                    }
                } as @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void, to: GCallback.self), pointer)
        island_signal_connect(
            UnsafeMutableRawPointer(display), "monitor-removed",
            unsafeBitCast(
                { (_: UnsafeMutableRawPointer?, monitor: OpaquePointer?, data: UnsafeMutableRawPointer?) in
                    OverlayMonitors.with(data) { monitors in
                        guard let monitor else { return }
                        log("monitor removed: \(monitors.output(monitor).name)")
                        monitors.compositor?.forget(monitor)
                        // At once: GDK lets go of the monitor after this signal, and no island
                        // may keep it until the pass.
                        for placement in monitors.placements { placement.removed(monitor) }
                        monitors.changed()
                    }
                } as @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void, to: GCallback.self), pointer)
        // X11: RandR's primary output changed (GDK says no more than this of it), or the
        // screen's monitors were reconfigured; Wayland says it too, after a monitor's change.
        if let screen = gdk_display_get_default_screen(display) {
            island_signal_connect(
                UnsafeMutableRawPointer(screen), "monitors-changed",
                unsafeBitCast(
                    { (_: UnsafeMutableRawPointer?, data: UnsafeMutableRawPointer?) in
                        OverlayMonitors.with(data) { $0.changed() }
                    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void, to: GCallback.self), pointer)
        }
        for monitor in all { watchShape(of: monitor) }
    }

    /// A monitor's mode, scale or position changes (GdkMonitor's properties; the handlers go
    /// with the monitor when GDK lets go of it).
    private func watchShape(of monitor: OpaquePointer) {
        for property in ["notify::geometry", "notify::scale-factor"] {
            island_signal_connect(
                UnsafeMutableRawPointer(monitor), property,
                unsafeBitCast(
                    { (_: UnsafeMutableRawPointer?, _: UnsafeMutableRawPointer?, data: UnsafeMutableRawPointer?) in
                        OverlayMonitors.with(data) { $0.changed() }
                    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void,
                    to: GCallback.self), pointer)
        }
    }

    /// Something about the monitors changed, or an island's surface was closed: one pass when
    /// the loop is idle places every island, however many changes came before it.
    func changed() {
        guard events.noted() else { return }
        g_idle_add_full(
            G_PRIORITY_DEFAULT_IDLE,
            { data in
                OverlayMonitors.with(data) { $0.pass() }
                return 0
            }, pointer, nil)
    }

    /// Places every island from the monitors as they are now. Idempotent: with the monitors
    /// unchanged an island stays as it is (no resize, no move, no surface made anew), so a pass
    /// that comes with nothing new does nothing.
    private func pass() {
        _ = events.pass()
        reconcile()
        for placement in placements { placement.place() }
    }

    /// What tells the overlay about fullscreen windows, focus and output names here, for the log.
    private var sources: String {
        OverlayDesktopSources(
            wayland: wayland, x11WindowManager: x11?.windowManager == true, toplevelVersion: compositor?.toplevelVersion ?? 0,
            xdgOutputVersion: compositor?.xdgOutputVersion ?? 0, drawsOverLockScreen: compositor?.drawsOverLockScreen == true,
            fullscreen: config.fullscreen
        ).description
    }

    private var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private nonisolated static func with(_ data: UnsafeMutableRawPointer?, _ body: @MainActor (OverlayMonitors) -> Void) {
        guard let data else { return }
        let monitors = Unmanaged<OverlayMonitors>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { body(monitors) }
    }

    /// The index among `all` (GDK's monitors) of the focused window's monitor, if known.
    func focused(among all: [OpaquePointer]) -> Int? {
        if let x11 { return x11.focusedMonitor(among: all) }
        return compositor?.focusedOutput.flatMap { focused in
            all.firstIndex { gdk_wayland_monitor_get_wl_output($0).map { UInt(bitPattern: $0) } == focused }
        }
    }

    /// Whether a fullscreen window is on `monitor`, one of `all`.
    func fullscreen(on monitor: OpaquePointer, among all: [OpaquePointer]) -> Bool {
        x11?.fullscreen(on: monitor, among: all) ?? compositor?.fullscreen(on: monitor) ?? false
    }

    /// GDK's monitors, in its order.
    var all: [OpaquePointer] {
        (0..<gdk_display_get_n_monitors(display)).compactMap { gdk_display_get_monitor(display, $0) }
    }

    func output(_ monitor: OpaquePointer) -> OverlayOutput {
        let model = gdk_monitor_get_model(monitor).map { String(cString: $0) }
        // On X11 GDK's model is RandR's output name, the connector.
        let connector = wayland ? compositor?.connector(of: monitor) : model
        return OverlayOutput(connector: connector, model: model, primary: gdk_monitor_is_primary(monitor) != 0)
    }

    /// A monitor's geometry in GDK's logical pixels.
    func geometry(_ monitor: OpaquePointer) -> OverlayRect {
        var geometry = GdkRectangle()
        gdk_monitor_get_geometry(monitor, &geometry)
        return OverlayRect(x: Double(geometry.x), y: Double(geometry.y), width: Double(geometry.width), height: Double(geometry.height))
    }

    /// The log's words for where an island is.
    func describe(_ monitor: OpaquePointer) -> String {
        let output = output(monitor)
        var geometry = GdkRectangle()
        gdk_monitor_get_geometry(monitor, &geometry)
        return "\(output.name) (\(output.model ?? "unknown model") \(geometry.width)x\(geometry.height)+\(geometry.x)+\(geometry.y), "
            + "scale \(gdk_monitor_get_scale_factor(monitor)))"
    }
}

/// Which monitor one island is on (Output=, OverlayOutputChoice decides; with Output=all, the
/// monitor its keeper gave it) and what is beside it there: it moves the island as monitors
/// come and go and, for Output=focused, as focus moves to a window on another output; it says
/// when a fullscreen window is on the island's output; and it lifts the island to the overlay
/// layer while it has something to show over one. Every move is logged with the output the
/// island is really on. Not used hosted: the desktop's shell places that window and says what
/// is fullscreen.
@MainActor final class OverlayPlacement {
    private let window: OverlayWindow
    private let config: OverlayConfig
    private let monitors: OverlayMonitors
    /// Output=all: the monitor this island is for; nil once it is gone, until the keeper gives
    /// it another (the window is hidden meanwhile).
    private var pinned: OpaquePointer?
    private let pinnedToOne: Bool
    /// The GdkMonitor the island is on, and where the log last said it is (the output, its
    /// geometry and scale, and the window's fit).
    private var monitor: OpaquePointer?
    private var said: String?
    /// The window's size (and X11 corner) as last made to fit its monitor.
    private var fitted: OverlayFit?
    /// The outputs there were when the one Output= names was not among them.
    private var fallbackAmong: [String]?
    private var fullscreenBeside = false
    /// The island shows something (X11, where it keeps itself above the windows).
    private var showing = false
    /// Its layer, exclusive zone and keyboard (Wayland): OverlayLayerSurface decides them.
    private var surface: OverlayLayerSurface
    /// Accepting the keyboard, and not yet given it: a focus-out now is the compositor's shuffle.
    var awaitingKeyboard: Bool { surface.awaitingKeyboard }
    /// A fullscreen window came to, or left, the island's output.
    var fullscreenChanged: (Bool) -> Void = { _ in }
    /// The window is to be this size, to fit its monitor as it is now (the shell resizes it
    /// and lays the island out again in it).
    var canvasChanged: (_ width: Double, _ height: Double) -> Void = { _, _ in }
    /// The window was mapped anew, on a new surface: the shell gives it its input region again.
    var remapped: () -> Void = {}

    /// `pinned`: Output=all's island for that monitor.
    init(window: OverlayWindow, config: OverlayConfig, monitors: OverlayMonitors, pinned: OpaquePointer? = nil, takesKeyboard: Bool = true) {
        self.window = window
        self.config = config
        self.monitors = monitors
        self.pinned = pinned
        pinnedToOne = pinned != nil
        surface = OverlayLayerSurface(config: config, takesKeyboard: takesKeyboard)
        monitors.follow(self)
    }

    /// Output=all: an island whose monitor is gone, free for a new one.
    var isIdle: Bool { pinnedToOne && pinned == nil }

    /// Output=all: the monitor this island is for (nil: gone, until it is given another).
    var pinnedMonitor: OpaquePointer? { pinned }

    /// Output=all: puts this idle island on a new monitor.
    func pin(_ monitor: OpaquePointer) {
        pinned = monitor
        place()
    }

    /// Places the island, and keeps it when the compositor closes its surface.
    func start() {
        place()
        // Every map makes a new layer surface (a new output, a keyboard given back): each is
        // asked onto the lock screen anew while locked. GtkWindow's own map handler runs first
        // (the signal is run-first) and makes the role; the first buffer comes later, after
        // the compositor's configure.
        island_signal_connect(
            UnsafeMutableRawPointer(window.widget), "map",
            unsafeBitCast(
                { (_: UnsafeMutableRawPointer?, data: UnsafeMutableRawPointer?) in
                    OverlayPlacement.with(data) { $0.mapped() }
                } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void, to: GCallback.self), pointer)
        // The compositor closes a layer surface whose output goes away, and gtk-layer-shell then
        // closes the window: it is kept, and placed again on the monitor that remains.
        island_signal_connect(
            UnsafeMutableRawPointer(window.widget), "delete-event",
            unsafeBitCast(
                { (_: UnsafeMutableRawPointer?, _: UnsafeMutableRawPointer?, data: UnsafeMutableRawPointer?) -> gboolean in
                    OverlayPlacement.with(data) { placement in
                        log("the compositor closed the island's surface; placing it again")
                        placement.monitor = nil
                        // With the monitors' next pass: the output that went away is gone from
                        // GDK's by then, and a surface made there would only be closed again.
                        placement.monitors.changed()
                    }
                    return 1
                } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self), pointer)
    }

    /// GDK lets go of `gone`: the island forgets it now, and is placed at the monitors' next pass.
    func removed(_ gone: OpaquePointer) {
        if pinned == gone { pinned = nil }
        if monitor == gone { monitor = nil }
    }

    private var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private nonisolated static func with(_ data: UnsafeMutableRawPointer?, _ body: @MainActor (OverlayPlacement) -> Void) {
        guard let data else { return }
        let placement = Unmanaged<OverlayPlacement>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { body(placement) }
    }

    /// Puts the island where Output= says, now; then says whether a fullscreen window is beside it.
    func place() {
        let all = monitors.all
        let step: OverlayPlacementStep<OpaquePointer>
        if pinnedToOne {
            step = OverlayPlacementPolicy.pinned(pinned, all: all, current: monitor, visible: gtk_widget_get_visible(window.widget) != 0)
        } else {
            let chosen = OverlayPlacementPolicy.chosen(
                config.output, all: all, outputs: all.map(monitors.output),
                focused: monitors.focused(among: all), current: monitor)
            step = chosen.step
            fallbackAmong = chosen.fallbackAmong
        }
        switch step {
        case .stay:
            break
        case .move(let to, let show):
            move(to: to)
            if show { gtk_widget_show(window.widget) }
        case .hide:
            monitor = nil
            said = nil
            gtk_widget_hide(window.widget)
            log("an island's output is gone: hidden until another comes")
        case .wait:
            monitor = nil
            said = nil
            log("no monitor left: the island waits for one")
        }
        if let monitor { fit(to: monitor) }
        // Said at every move and every change of the output's geometry or scale, and again
        // once the compositor names an output it had not named yet (a new monitor's connector
        // comes after GDK announces it).
        if let monitor, let fitted, case let now = "\(monitors.describe(monitor)), Output=\(config.output), \(fitted)", now != said {
            said = now
            log(
                "on output \(now)"
                    + (fallbackAmong.map { ": no output \(config.output) among \($0.joined(separator: ", ")); here until it comes" } ?? ""))
        }
        let beside = monitor.map { monitors.fullscreen(on: $0, among: all) } ?? false
        if beside != fullscreenBeside {
            fullscreenBeside = beside
            fullscreenChanged(beside)
        }
    }

    private func move(to monitor: OpaquePointer) {
        self.monitor = monitor
        // gtk-layer-shell maps the surface again on the new output (an output of a layer
        // surface is fixed once made); on X11 `fit` moves the window there.
        if window.wayland { gtk_layer_set_monitor(island_window(window.widget), monitor) }
    }

    /// Makes the window fit `monitor` as it is now (OverlayPlacementPolicy.fit): resized when
    /// its mode or scale asks for another canvas, and on X11 moved to its top centre when it or
    /// the canvas changed. Nothing when the fit is the one the window has.
    private func fit(to monitor: OpaquePointer) {
        let fit = OverlayPlacementPolicy.fit(on: monitors.geometry(monitor), config: config, x11: !window.wayland)
        guard fit != fitted else { return }
        fitted = fit
        canvasChanged(fit.width, fit.height)
        if let x = fit.x, let y = fit.y { gtk_window_move(island_window(window.widget), Int32(x), Int32(y)) }
    }

    /// Follows what the island shows: its layer and exclusive zone as OverlayLayerSurface
    /// decides (Layer=top over a fullscreen window, Reserve=yes's strip).
    ///
    /// X11: an override-redirect window stays where it was stacked, under every window mapped
    /// or raised after it: it is raised when it starts showing something, and again when the
    /// window manager maps or restacks a window while it shows (`windowRestacked`).
    func islandChanged(showing: Bool) {
        guard window.wayland else {
            if showing, !self.showing {
                raise()
                if fullscreenBeside { log("raised over the fullscreen window") }
            }
            self.showing = showing
            return
        }
        let w = island_window(window.widget)
        let change = surface.islandChanged(showing: showing, fullscreenBeside: fullscreenBeside)
        if let layer = change.layer {
            gtk_layer_set_layer(w, OverlayWindow.layer(layer))
            log(surface.lifted ? "layer overlay: showing over the fullscreen window" : "layer top again")
        }
        if let zone = change.exclusiveZone {
            gtk_layer_set_exclusive_zone(w, Int32(zone))
            log(
                zone > 0
                    ? "reserving the island's strip: exclusive zone \(zone) under MarginTop \(Int(config.marginTop))"
                    : "the island's strip is free again")
        }
        if change.layer != nil || change.exclusiveZone != nil { commitNow() }
    }

    /// The keyboard as the controller asks (only while the user has the island open). sway 1.7
    /// gives it to the topmost mapped layer surface that accepts it at every change of any
    /// layer surface's state (arrange_layers), on-demand or not, taking it from the focused
    /// window; so the island accepts it only while open, and gives it back after: otherwise a
    /// move to another output, or rising over a fullscreen game, would take the user's
    /// keyboard, and no window would be focused for Output=focused to follow. On layer-shell
    /// v3 (KWin 5.27) it is exclusive meanwhile, the controller's choice.
    func keyboard(_ wanted: OverlayKeyboard) {
        guard window.wayland, let (wanted, released) = surface.keyboard(wanted) else { return }
        let mode: GtkLayerShellKeyboardMode =
            switch wanted {
            case .none: GTK_LAYER_SHELL_KEYBOARD_MODE_NONE
            case .onDemand: GTK_LAYER_SHELL_KEYBOARD_MODE_ON_DEMAND
            case .exclusive: GTK_LAYER_SHELL_KEYBOARD_MODE_EXCLUSIVE
            }
        gtk_layer_set_keyboard_mode(island_window(window.widget), mode)
        if released, gtk_widget_get_visible(window.widget) != 0 {
            // KWin 5.27 leaves the keyboard with a layer surface that stops accepting it (it
            // only ever activates one that starts to): the user's window would have no keys
            // until clicked. A surface mapped anew makes KWin activate the window before it.
            remap()
        } else {
            commitNow()
        }
    }

    /// gtk-layer-shell commits a change with GDK's next frame, which waits for the
    /// compositor's frame callback, and sway sends none to a surface a fullscreen window
    /// covers: commit it now (a commit with no new buffer applies only the pending state).
    private func commitNow() {
        if let gdkWindow = gtk_widget_get_window(window.widget), let surface = gdk_wayland_window_get_wl_surface(gdkWindow) {
            wl_surface_commit(surface)
        }
    }

    /// X11: the window manager mapped or restacked a window, maybe over the island.
    func windowRestacked() {
        if showing { raise() }
    }

    private func raise() {
        guard let gdkWindow = gtk_widget_get_window(window.widget) else { return }
        gdk_window_raise(gdkWindow)
    }

    /// The daemon says the session is locked (true) or unlocked. Where the compositor draws
    /// chosen surfaces over its lock screen (KWin), the window is mapped anew, asked there
    /// while locked and not after: so the locker shows the island only while the daemon has
    /// redacted it for the lock screen, and no longer once unlocked.
    func lockChanged(_ locked: Bool) {
        guard window.wayland, monitors.compositor?.drawsOverLockScreen == true, let layer = surface.lockChanged(locked) else { return }
        log(locked ? "locked: the island asks onto KWin's lock screen (kde_lockscreen_overlay_v1)" : "unlocked: the island leaves the lock screen")
        gtk_layer_set_layer(island_window(window.widget), OverlayWindow.layer(layer))
        if gtk_widget_get_visible(window.widget) != 0 { remap() }
    }

    /// Maps the window anew: GTK destroys its surface and makes another. GDK sends a surface's
    /// input region only when it is set, so the new surface would have none until the island's
    /// shapes next change: until then the whole transparent canvas takes the pointer, and on
    /// KWin a click there (into the window below, as the island collapses) gives the island the
    /// keyboard. `remapped` sets the region again before the new surface's first frame.
    private func remap() {
        gtk_widget_hide(window.widget)
        gtk_widget_show(window.widget)
        remapped()
    }

    private func mapped() {
        guard surface.overLockScreen, let gdkWindow = gtk_widget_get_window(window.widget),
            let surface = gdk_wayland_window_get_wl_surface(gdkWindow)
        else { return }
        monitors.compositor?.allowOverLockScreen(surface)
    }

    /// The island has the keyboard (GTK's focus-in).
    func keyboardArrived() {
        surface.keyboardArrived()
    }
}
