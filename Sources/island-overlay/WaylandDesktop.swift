import CGtk
import CWaylandProtocols
import IslandOverlay

/// What a wlroots compositor says beyond what GTK asks: the windows, fullscreen or focused, on
/// each output (wlr-foreign-toplevel-management), and each output's connector name (xdg-output);
/// and, on KDE's KWin, the way onto its lock screen (kde_lockscreen_overlay_v1).
///
/// Bound through a registry of its own on GDK's wl_display, on the display's default queue:
/// GDK's GSource reads the socket and dispatches that queue inside gtk_main, so these callbacks
/// come on the GTK thread between GTK's own signals, and nothing else reads the socket (a queue
/// of our own would need a second reader, wl_display_prepare_read_queue against GDK's, and a
/// source of its own). The wl_outputs are GDK's: the compositor names those in output_enter,
/// and xdg-output is asked about those, so every output is its GdkMonitor by pointer.
@MainActor final class WaylandDesktop {
    private(set) var windows = ForeignToplevels()
    /// The version of wlr-foreign-toplevel-management bound; 0: the compositor has none.
    private(set) var toplevelVersion: UInt32 = 0
    private(set) var xdgOutputVersion: UInt32 = 0
    private var toplevelManager: OpaquePointer?
    private var outputManager: OpaquePointer?
    /// KWin offers it only to a program whose installed desktop entry asks for it
    /// (X-KDE-Wayland-Interfaces=kde_lockscreen_overlay_v1, its Exec= this very binary).
    private var lockScreenOverlay: OpaquePointer?
    /// Connector names by GDK's wl_output, at most 64 printable characters each.
    private var connectors: [UInt: String] = [:]
    /// Our xdg_output for each of GDK's wl_outputs, and back.
    private var xdgOutputs: [UInt: OpaquePointer] = [:]
    private var outputOfXDGOutput: [UInt: UInt] = [:]
    private var saidTooMany = false
    /// A window's fullscreen, focus or outputs changed since its last `done`: only then are the
    /// placements told (a terminal's title changing at every command sends `done` too).
    private var windowsChanged = false
    /// Called after the compositor said something that may change where an island goes or what
    /// it shows: one for each island's placement.
    var observers: [() -> Void] = []
    var log: (String) -> Void = { _ in }

    /// Binds what the compositor offers on GDK's connection, and waits (two round trips) until
    /// it has said the outputs' names and the windows there are.
    init?(gdkDisplay: OpaquePointer) {
        guard let display = gdk_wayland_display_get_wl_display(gdkDisplay), let registry = wl_display_get_registry(display) else { return nil }
        wl_registry_add_listener(registry, Self.registryListener, Unmanaged.passUnretained(self).toOpaque())
        wl_display_roundtrip(display)
        wl_display_roundtrip(display)
    }

    private var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The connector name of a GdkMonitor's output, once the compositor said it.
    func connector(of monitor: OpaquePointer) -> String? {
        gdk_wayland_monitor_get_wl_output(monitor).flatMap { connectors[UInt(bitPattern: $0)] }
    }

    /// Asks the compositor for a new monitor's name (GdkDisplay::monitor-added).
    func watch(_ monitor: OpaquePointer) {
        guard let outputManager, let output = gdk_wayland_monitor_get_wl_output(monitor) else { return }
        let key = UInt(bitPattern: output)
        guard xdgOutputs[key] == nil, let xdgOutput = zxdg_output_manager_v1_get_xdg_output(outputManager, output) else { return }
        xdgOutputs[key] = xdgOutput
        outputOfXDGOutput[UInt(bitPattern: xdgOutput)] = key
        zxdg_output_v1_add_listener(xdgOutput, Self.xdgOutputListener, pointer)
    }

    /// Forgets a monitor that is gone (GdkDisplay::monitor-removed).
    func forget(_ monitor: OpaquePointer) {
        guard let output = gdk_wayland_monitor_get_wl_output(monitor) else { return }
        let key = UInt(bitPattern: output)
        connectors[key] = nil
        windows.remove(output: key)
        if let xdgOutput = xdgOutputs.removeValue(forKey: key) {
            outputOfXDGOutput[UInt(bitPattern: xdgOutput)] = nil
            zxdg_output_v1_destroy(xdgOutput)
        }
    }

    func fullscreen(on monitor: OpaquePointer) -> Bool {
        gdk_wayland_monitor_get_wl_output(monitor).map { windows.fullscreen(on: UInt(bitPattern: $0)) } ?? false
    }

    /// The compositor draws surfaces it is asked to over its lock screen (KWin granted
    /// kde_lockscreen_overlay_v1).
    var drawsOverLockScreen: Bool { lockScreenOverlay != nil }

    /// Asks the compositor to keep `surface` visible over its lock screen. KWin takes it only
    /// for a surface whose window it made (a layer surface has one from get_layer_surface on)
    /// and never mapped: for a mapped one it ends the connection with a protocol error, so the
    /// caller asks between GTK's map (which makes the role) and the first buffer, which GTK
    /// attaches once the compositor has configured the surface. The grant lasts as long as
    /// that window: a surface mapped anew is an ordinary one again.
    func allowOverLockScreen(_ surface: OpaquePointer) {
        guard let lockScreenOverlay else { return }
        kde_lockscreen_overlay_v1_allow(lockScreenOverlay, surface)
    }

    /// The wl_output of the focused window, to be matched with GDK's monitors.
    var focusedOutput: UInt? { windows.focusedOutput }

    // MARK: The compositor's events

    private func global(_ registry: OpaquePointer, name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "zwlr_foreign_toplevel_manager_v1" where toplevelManager == nil:
            // Version 2 says fullscreen; 3 adds the parent event, which is ignored.
            toplevelVersion = min(version, 3)
            toplevelManager = island_bind_foreign_toplevel_manager(registry, name, toplevelVersion)
            zwlr_foreign_toplevel_manager_v1_add_listener(toplevelManager, Self.managerListener, pointer)
        case "zxdg_output_manager_v1" where outputManager == nil && version >= 2:
            // Version 2 says the connector's name.
            xdgOutputVersion = min(version, 3)
            outputManager = island_bind_xdg_output_manager(registry, name, xdgOutputVersion)
            if let gdkDisplay = gdk_display_get_default() {
                for index in 0..<gdk_display_get_n_monitors(gdkDisplay) {
                    if let monitor = gdk_display_get_monitor(gdkDisplay, index) { watch(monitor) }
                }
            }
        case "kde_lockscreen_overlay_v1" where lockScreenOverlay == nil:
            lockScreenOverlay = island_bind_lockscreen_overlay(registry, name, 1)
        default:
            break
        }
    }

    private func toplevel(_ handle: OpaquePointer) {
        guard windows.add(UInt(bitPattern: handle)) else {
            // One too many to track: let go of it (libwayland drops what still comes for it).
            zwlr_foreign_toplevel_handle_v1_destroy(handle)
            if !saidTooMany { log("more than \(ForeignToplevels.maximumToplevels) windows: the rest are not followed") }
            saidTooMany = true
            return
        }
        zwlr_foreign_toplevel_handle_v1_add_listener(handle, Self.handleListener, pointer)
    }

    private func closed(_ handle: OpaquePointer) {
        windows.close(UInt(bitPattern: handle))
        zwlr_foreign_toplevel_handle_v1_destroy(handle)
        changed()
    }

    private func changed() {
        for observer in observers { observer() }
    }

    private func named(_ xdgOutput: UInt, _ name: String) {
        guard let output = outputOfXDGOutput[xdgOutput] else { return }
        connectors[output] = OverlayOutput.connector(said: name)
        changed()
    }

    // MARK: Listeners (C function pointers capture nothing: the desktop is their data)

    /// The desktop a listener was given, on the GTK thread, where GDK dispatches its queue.
    /// Wayland objects cross into it as their addresses (`UInt(bitPattern:)`): pointers are
    /// not Sendable, and the main actor is the thread they were made on anyway.
    nonisolated private static func with(_ data: UnsafeMutableRawPointer?, _ body: @MainActor (WaylandDesktop) -> Void) {
        guard let data else { return }
        let desktop = Unmanaged<WaylandDesktop>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { body(desktop) }
    }

    /// The states of a state event, at most 64 of them (the protocol defines four).
    nonisolated private static func values(_ array: UnsafeMutablePointer<wl_array>) -> [UInt32] {
        let count = min(64, array.pointee.size / MemoryLayout<UInt32>.size)
        guard count > 0, let data = array.pointee.data else { return [] }
        return Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt32.self), count: count))
    }

    private static func object(_ address: UInt) -> OpaquePointer { OpaquePointer(bitPattern: address)! }

    /// Allocated once and never freed: libwayland keeps the listener's address.
    private static func listener<Listener>(_ value: Listener) -> UnsafeMutablePointer<Listener> {
        let pointer = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }

    private static let registryListener = listener(
        wl_registry_listener(
            global: { data, registry, name, interface, version in
                guard let registry, let interface else { return }
                let interfaceName = String(cString: interface), address = UInt(bitPattern: registry)
                with(data) { $0.global(object(address), name: name, interface: interfaceName, version: version) }
            },
            global_remove: { _, _, _ in }))

    private static let managerListener = listener(
        zwlr_foreign_toplevel_manager_v1_listener(
            toplevel: { data, _, handle in
                guard let handle else { return }
                let address = UInt(bitPattern: handle)
                with(data) { $0.toplevel(object(address)) }
            },
            finished: { data, _ in
                with(data) { desktop in
                    desktop.log("the compositor stopped telling its windows (foreign-toplevel finished)")
                    if let manager = desktop.toplevelManager { zwlr_foreign_toplevel_manager_v1_destroy(manager) }
                    desktop.toplevelManager = nil
                }
            }))

    private static let handleListener = listener(
        zwlr_foreign_toplevel_handle_v1_listener(
            // Titles and app ids are not kept: the island needs neither.
            title: { _, _, _ in },
            app_id: { _, _, _ in },
            output_enter: { data, handle, output in
                guard let handle, let output else { return }
                let window = UInt(bitPattern: handle), screen = UInt(bitPattern: output)
                with(data) { if $0.windows.enter(window, output: screen) { $0.windowsChanged = true } }
            },
            output_leave: { data, handle, output in
                guard let handle, let output else { return }
                let window = UInt(bitPattern: handle), screen = UInt(bitPattern: output)
                with(data) { if $0.windows.leave(window, output: screen) { $0.windowsChanged = true } }
            },
            state: { data, handle, array in
                guard let handle, let array else { return }
                let window = UInt(bitPattern: handle), states = values(array)
                with(data) { if $0.windows.setStates(window, states) { $0.windowsChanged = true } }
            },
            done: { data, _ in
                with(data) { desktop in
                    guard desktop.windowsChanged else { return }
                    desktop.windowsChanged = false
                    desktop.changed()
                }
            },
            closed: { data, handle in
                guard let handle else { return }
                let address = UInt(bitPattern: handle)
                with(data) { $0.closed(object(address)) }
            },
            parent: { _, _, _ in }))

    private static let xdgOutputListener = listener(
        zxdg_output_v1_listener(
            logical_position: { _, _, _, _ in },
            logical_size: { _, _, _, _ in },
            done: { _, _ in },
            name: { data, xdgOutput, name in
                guard let xdgOutput, let name else { return }
                let text = String(cString: name), address = UInt(bitPattern: xdgOutput)
                with(data) { $0.named(address, text) }
            },
            description: { _, _, _ in }))
}
