import CGtk
import IslandOverlay

/// What an EWMH window manager (i3, Openbox, Xfwm, KWin and Mutter on X11) says on X11: the
/// active window (the root's _NET_ACTIVE_WINDOW), whether it is fullscreen (its _NET_WM_STATE)
/// and where it is, so the island keeps out of a fullscreen window's way on its monitor and
/// Output=focused follows the active window. The X11 counterpart of WaylandDesktop.
///
/// Listens, never polls: PropertyChangeMask on the root (and SubstructureNotifyMask, for the
/// active window's frame mapped or raised over the island) and on the active window (and
/// StructureNotifyMask there, for its moves), selected with Xlib on GDK's own Display, and the
/// events read in a GDK filter for every window, so they come on the GTK thread inside
/// gtk_main. Xlib rather than gdk_window_set_events: the root's mask is added to, as GDK set it
/// (gdk_window_set_events writes the whole mask from GDK's own record), and the active window
/// is another client's, for which GDK would make a foreign GdkWindow to no purpose. Another
/// client's window may go away at any moment: every request about it is made inside GDK's error
/// trap, so a BadWindow is ignored (the window manager names the next active window anyway).
/// What a client sets itself is bounded: at most `ActiveX11Window.maximumStates` atoms of its
/// _NET_WM_STATE are read, and nothing else of it (no title) is.
@MainActor final class X11Desktop {
    /// The active window as last read; nil: none, or no EWMH window manager.
    private(set) var active: ActiveX11Window?
    /// An EWMH window manager runs (its _NET_SUPPORTING_WM_CHECK window names itself).
    private(set) var windowManager = false
    /// Called after what the island uses changed: one for each island's placement.
    var observers: [() -> Void] = []
    /// Called when another window becomes the active one, or the active window's top-level
    /// window (its frame, with a reparenting window manager) is mapped or restacked, as window
    /// managers do to a new, focused or fullscreen window: it may now be above the island,
    /// which then raises itself if it shows something. Only the active window's: the island
    /// does not fight another program's menu or tooltip, nor another window that keeps itself
    /// on top, for the top of the stack.
    var restacked: [() -> Void] = []

    private let gdkDisplay: OpaquePointer
    private let xDisplay: OpaquePointer
    private let root: Window
    /// The window whose properties and moves are selected now; 0: none.
    private var watched: Window = 0
    /// Its ancestor that is a child of the root (its frame; itself without reparenting); 0: none.
    private var watchedTopLevel: Window = 0
    private let activeWindowAtom, wmStateAtom, fullscreenAtom, wmCheckAtom: Atom

    // Xlib's values (X.h, Xatom.h), spelled here: Swift imports neither the casting macros of
    // Xatom.h nor the shifted masks of X.h.
    private static let atomType: Atom = 4, windowType: Atom = 33
    private static let propertyChangeMask = 1 << 22, structureNotifyMask = 1 << 17, substructureNotifyMask = 1 << 19

    init?(gdkDisplay: OpaquePointer) {
        guard let xDisplay = gdk_x11_display_get_xdisplay(gdkDisplay) else { return nil }
        self.gdkDisplay = gdkDisplay
        self.xDisplay = xDisplay
        root = XDefaultRootWindow(xDisplay)
        func atom(_ name: String) -> Atom { gdk_x11_get_xatom_by_name_for_display(gdkDisplay, name) }
        activeWindowAtom = atom("_NET_ACTIVE_WINDOW")
        wmStateAtom = atom("_NET_WM_STATE")
        fullscreenAtom = atom("_NET_WM_STATE_FULLSCREEN")
        wmCheckAtom = atom("_NET_SUPPORTING_WM_CHECK")
    }

    /// Starts listening and reads what is there now.
    func start() {
        trapped {
            var attributes = XWindowAttributes()
            if XGetWindowAttributes(xDisplay, root, &attributes) != 0 {
                XSelectInput(xDisplay, root, attributes.your_event_mask | Self.propertyChangeMask | Self.substructureNotifyMask)
            }
        }
        // Every X event comes by here before GDK makes its own of it; all go on to GDK.
        gdk_window_add_filter(
            nil,
            { xEvent, _, data in
                guard let xEvent else { return GDK_FILTER_CONTINUE }
                let event = xEvent.assumingMemoryBound(to: XEvent.self).pointee
                X11Desktop.with(data) { $0.handle(event) }
                return GDK_FILTER_CONTINUE
            }, Unmanaged.passUnretained(self).toOpaque())
        windowManager = ewmhWindowManager()
        refresh()
    }

    /// The desktop a filter was given, on the GTK thread, where GDK reads X events.
    private nonisolated static func with(_ data: UnsafeMutableRawPointer?, _ body: @MainActor (X11Desktop) -> Void) {
        guard let data else { return }
        let desktop = Unmanaged<X11Desktop>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { body(desktop) }
    }

    /// Whether the active window is fullscreen on `monitor`.
    func fullscreen(on monitor: OpaquePointer, among monitors: [OpaquePointer]) -> Bool {
        guard let active, let index = monitors.firstIndex(of: monitor) else { return false }
        return active.fullscreen(on: index, among: monitors.map(Self.geometry))
    }

    /// The index among `monitors` of the active window's monitor, if there is an active window.
    func focusedMonitor(among monitors: [OpaquePointer]) -> Int? {
        active?.monitor(among: monitors.map(Self.geometry))
    }

    /// A monitor's geometry in the root window's pixels (GDK's are divided by its scale).
    private static func geometry(_ monitor: OpaquePointer) -> OverlayRect {
        var geometry = GdkRectangle()
        gdk_monitor_get_geometry(monitor, &geometry)
        let scale = Double(max(1, gdk_monitor_get_scale_factor(monitor)))
        return OverlayRect(
            x: Double(geometry.x) * scale, y: Double(geometry.y) * scale,
            width: Double(geometry.width) * scale, height: Double(geometry.height) * scale)
    }

    private func handle(_ event: XEvent) {
        switch event.type {
        case PropertyNotify:
            let property = event.xproperty
            if property.window == root, property.atom == activeWindowAtom || property.atom == wmCheckAtom {
                refresh()
            } else if property.window == watched, watched != 0, property.atom == wmStateAtom {
                reread()
            }
        case MapNotify where event.xmap.event == root && event.xmap.window == watchedTopLevel && watchedTopLevel != 0:
            for observer in restacked { observer() }
        case ConfigureNotify:
            let configure = event.xconfigure
            if configure.window == watched, watched != 0 { reread() }
            if configure.event == root, configure.window == watchedTopLevel, watchedTopLevel != 0 {
                for observer in restacked { observer() }
            }
        case DestroyNotify where event.xdestroywindow.window == watched && watched != 0:
            watched = 0
            refresh()
        default:
            break
        }
    }

    /// Reads the window manager, the active window and its state again; tells the observers
    /// when what the island uses changed.
    private func refresh() {
        let hadWindowManager = windowManager
        windowManager = ewmhWindowManager()
        let window = windowManager ? (windowProperty(root, activeWindowAtom) ?? 0) : 0
        if window != watched {
            watch(window)
            for observer in restacked { observer() }
        }
        let now = window == 0 ? nil : read(window)
        if windowManager != hadWindowManager {
            log(
                windowManager
                    ? "an EWMH window manager runs: fullscreen windows and focus are followed (_NET_WM_STATE, _NET_ACTIVE_WINDOW)"
                    : "the EWMH window manager is gone: fullscreen windows and focus are not followed")
        }
        publish(now)
    }

    /// Reads the active window's state and place again, for its own events (a move during a
    /// drag comes dozens of times a second): the window manager and which window is active
    /// change only with the root's properties, which `refresh` reads.
    private func reread() {
        publish(watched == 0 ? nil : read(watched))
    }

    /// Tells the observers when what the island uses of the active window changed.
    private func publish(_ now: ActiveX11Window?) {
        guard now != active else { return }
        active = now
        for observer in observers { observer() }
    }

    /// EWMH: the root's _NET_SUPPORTING_WM_CHECK names a window whose own property names
    /// itself (a window manager that died leaves the root's property stale).
    private func ewmhWindowManager() -> Bool {
        guard let check = windowProperty(root, wmCheckAtom), check != 0 else { return false }
        return windowProperty(check, wmCheckAtom) == check
    }

    /// Selects the active window's property changes and moves, and lets go of the last one.
    /// GDK's own windows are left alone: GDK selects on them, and a mask set here would
    /// replace its.
    private func watch(_ window: Window) {
        guard window != watched else { return }
        trapped {
            if watched != 0, gdk_x11_window_lookup_for_display(gdkDisplay, watched) == nil { XSelectInput(xDisplay, watched, 0) }
            if window != 0, gdk_x11_window_lookup_for_display(gdkDisplay, window) == nil {
                XSelectInput(xDisplay, window, Self.propertyChangeMask | Self.structureNotifyMask)
            }
        }
        watched = window
        watchedTopLevel = window == 0 ? 0 : topLevel(of: window)
    }

    /// The ancestor of `window` that is a child of the root, at most 16 levels up; 0 when the
    /// window is gone.
    private func topLevel(of window: Window) -> Window {
        trapped {
            var window = window
            for _ in 0..<16 {
                var rootReturned: Window = 0, parent: Window = 0, count: UInt32 = 0
                var children: UnsafeMutablePointer<Window>?
                guard XQueryTree(xDisplay, window, &rootReturned, &parent, &children, &count) != 0 else { return 0 }
                if let children { XFree(children) }
                if parent == root || parent == 0 { return window }
                window = parent
            }
            return 0
        }
    }

    /// The window's fullscreen state and client area on the root; nil when it is gone.
    private func read(_ window: Window) -> ActiveX11Window? {
        trapped {
            var x: Int32 = 0, y: Int32 = 0, child: Window = 0
            var parent: Window = 0, left: Int32 = 0, top: Int32 = 0, width: UInt32 = 0, height: UInt32 = 0, border: UInt32 = 0, depth: UInt32 = 0
            guard XGetGeometry(xDisplay, window, &parent, &left, &top, &width, &height, &border, &depth) != 0,
                XTranslateCoordinates(xDisplay, window, root, 0, 0, &x, &y, &child) != 0
            else { return nil }
            let states = property(window, wmStateAtom, type: Self.atomType, count: ActiveX11Window.maximumStates) ?? []
            return ActiveX11Window(
                states: states, fullscreenAtom: UInt(fullscreenAtom),
                frame: OverlayRect(x: Double(x), y: Double(y), width: Double(width), height: Double(height)))
        }
    }

    private func windowProperty(_ window: Window, _ name: Atom) -> Window? {
        trapped { property(window, name, type: Self.windowType, count: 1)?.first }
    }

    /// At most `count` 32-bit items of a property of type `type`; nil when the window is gone
    /// or the property is not there or not of that type.
    private func property(_ window: Window, _ name: Atom, type: Atom, count: Int) -> [UInt]? {
        var actualType: Atom = 0, format: Int32 = 0, items: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        guard XGetWindowProperty(xDisplay, window, name, 0, count, 0, type, &actualType, &format, &items, &after, &data) == Success
        else { return nil }
        defer { if let data { XFree(data) } }
        guard actualType == type, format == 32, let data else { return nil }
        // Xlib hands 32-bit items as C longs.
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt.self), count: min(Int(items), count)))
    }

    /// `body`, with X errors about other clients' windows (gone meanwhile) ignored.
    private func trapped<T>(_ body: () -> T) -> T {
        gdk_x11_display_error_trap_push(gdkDisplay)
        defer { gdk_x11_display_error_trap_pop_ignored(gdkDisplay) }
        return body()
    }
}
