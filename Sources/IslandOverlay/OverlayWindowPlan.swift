/// What island-overlay's window is and what it says of itself, decided before GTK makes it:
/// the canvas's size, the controller's settings for this kind of window, and the log's and the
/// refusal's words. island-overlay's OverlayWindow makes the window with GTK.
package struct OverlayWindowPlan: Sendable {
    package var wayland: Bool
    /// Placed by the desktop's shell (`--hosted`).
    package var hosted: Bool
    /// The compositor's wlr-layer-shell version, as bound (0: not placed through layer-shell).
    package var layerShellVersion: UInt32
    /// X11 with no compositing manager: the window is cut to the shapes drawn.
    package var needsWindowShape: Bool
    package var canvas: (width: Double, height: Double)

    package init(wayland: Bool, hosted: Bool, layerShellVersion: UInt32, needsWindowShape: Bool, canvas: (width: Double, height: Double)) {
        self.wayland = wayland
        self.hosted = hosted
        self.layerShellVersion = layerShellVersion
        self.needsWindowShape = needsWindowShape
        self.canvas = canvas
    }

    /// The canvas follows Size=: the widest form and the list, in logical pixels, no taller
    /// than the island's monitor leaves under MarginTop= (`monitorHeight`, 0 when unknown: 720).
    /// Hosted, the window hangs under the host's bar: the host says how much room is there
    /// (`maxHeight`). As wide as the expanded island may grow on an output `outputWidth` wide
    /// (the island's; hosted, where the host chooses the monitor, the widest).
    package static func canvas(
        config: OverlayConfig, monitorHeight: Int, outputWidth: Int? = nil, hosted: Bool,
        maxHeight: Double?
    ) -> (width: Double, height: Double) {
        let island = config.geometry
        let height = Double(monitorHeight > 0 ? monitorHeight : 720)
        let room = hosted ? (maxHeight ?? height) : height - config.marginTop
        return (island.canvasWidth(outputWidth: outputWidth.map(Double.init)), max(100, min(island.canvasMaximumHeight, room)))
    }

    /// The controller's settings for this window: the keyboard while open where layer-shell
    /// places it, one input pixel always hosted on Wayland (Mutter's pick), the daemon's lock
    /// followed where the overlay places itself.
    package func settings(environment: [String: String]) -> OverlayController.Settings {
        OverlayController.Settings(
            environment: environment, cutsWindowToShapes: needsWindowShape,
            keyboardWhileOpen: layerShellVersion > 0 ? .whileOpen(layerShellVersion: layerShellVersion) : .none,
            inputNeverEmpty: hosted && wayland, followsDaemonLock: !hosted)
    }

    /// The backend and placement, for the log (the output is OverlayPlacement's to say).
    package func description(config: OverlayConfig) -> String {
        let backend =
            hosted
            ? "\(wayland ? "wayland" : "x11") (hosted: placed by the desktop's shell)"
            : wayland
                ? "wayland (layer-shell v\(layerShellVersion), layer \(config.layer.rawValue), keyboard "
                    + "\(OverlayKeyboard.whileOpen(layerShellVersion: layerShellVersion).rawValue) while open)"
                : "x11 (override-redirect\(needsWindowShape ? ", no compositor: shaped window" : ""))"
        return "backend \(backend), size ×\(config.geometry.factor), canvas \(Int(canvas.width))x\(Int(canvas.height))"
            + (hosted ? "" : ", margin-top \(Int(config.marginTop))")
    }

    /// Why there is no island on a Wayland compositor without wlr-layer-shell, and what works
    /// instead there.
    package static func noLayerShell(_ environment: [String: String]) -> String {
        let desktops = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.lowercased() }
        let instead =
            desktops.contains("gnome")
            ? "On GNOME, the Island GNOME Shell extension shows the island: gnome-extensions enable island@island.org "
                + "(package island-overlay), then log out and in once."
            : "Run it on a compositor with layer-shell (sway, Hyprland, river, niri, KDE Plasma, COSMIC, labwc, Wayfire), "
                + "or on GNOME through the Island GNOME Shell extension (gnome-extensions enable island@island.org)."
        return "this Wayland compositor offers no wlr-layer-shell, so island-overlay cannot place the island above other "
            + "windows by itself; not opening a window. \(instead) Without an island on screen, island-presenter shows the "
            + "activities in a terminal (tui) or a bar."
    }
}

extension OverlayFrame {
    /// The island shows something: a form, or the list (what its placement lifts and reserves for).
    package var showsSomething: Bool { form != .hidden || listOpen }
}

/// What tells the overlay about fullscreen windows, focus, output names and the lock screen on
/// this desktop, as the start-up log says it: what island-overlay's WaylandDesktop and
/// X11Desktop found.
package struct OverlayDesktopSources: Sendable, Hashable {
    package var wayland: Bool
    /// X11: an EWMH window manager is there (_NET_SUPPORTING_WM_CHECK).
    package var x11WindowManager: Bool
    /// wlr-foreign-toplevel-management's version (0: none).
    package var toplevelVersion: UInt32
    /// xdg-output's version (0: none).
    package var xdgOutputVersion: UInt32
    /// KWin lets the island over its lock screen (kde_lockscreen_overlay_v1).
    package var drawsOverLockScreen: Bool
    package var fullscreen: OverlayConfig.Fullscreen

    package init(
        wayland: Bool, x11WindowManager: Bool = false, toplevelVersion: UInt32 = 0, xdgOutputVersion: UInt32 = 0,
        drawsOverLockScreen: Bool = false, fullscreen: OverlayConfig.Fullscreen = .alerts
    ) {
        self.wayland = wayland
        self.x11WindowManager = x11WindowManager
        self.toplevelVersion = toplevelVersion
        self.xdgOutputVersion = xdgOutputVersion
        self.drawsOverLockScreen = drawsOverLockScreen
        self.fullscreen = fullscreen
    }

    package var description: String {
        guard wayland else {
            guard x11WindowManager else {
                return "X11 with no EWMH window manager (no _NET_SUPPORTING_WM_CHECK): fullscreen windows and focus are not followed "
                    + "until one starts: Fullscreen= does not apply, Output=focused stays where it starts; Output= names are RandR's"
            }
            return "X11: the active window's fullscreen and monitor from the EWMH window manager (_NET_ACTIVE_WINDOW, _NET_WM_STATE): "
                + "Fullscreen=\(fullscreen.rawValue); Output= names are RandR's"
        }
        let windows: String
        switch toplevelVersion {
        case 0:
            windows =
                "this compositor offers no wlr-foreign-toplevel-management (KDE's KWin 5.27 keeps its own "
                + "org_kde_plasma_window_management for Plasma's programs): fullscreen windows and focus are not known, so Fullscreen= "
                + "does not apply (Layer=overlay shows the island over them, Layer=top under them) and Output=focused stays where it starts"
        case 1:
            windows = "wlr-foreign-toplevel-management v1 tells focus but not fullscreen: Fullscreen= does not apply"
        case let version:
            windows = "fullscreen windows and focus from wlr-foreign-toplevel-management v\(version): Fullscreen=\(fullscreen.rawValue)"
        }
        let names =
            xdgOutputVersion >= 2
            ? "connector names from xdg-output v\(xdgOutputVersion)"
            : "no xdg-output v2: connector names unknown, Output= takes a model name or a number"
        let lockScreen =
            drawsOverLockScreen
            ? "the lock screen: KWin draws the island's lock-screen list over its locker while islandd says the session is locked (kde_lockscreen_overlay_v1)"
            : "the lock screen: not offered (KWin offers kde_lockscreen_overlay_v1 only to the binary its installed desktop entry names); the locker hides the island"
        return "\(windows); \(names); \(lockScreen)"
    }
}
