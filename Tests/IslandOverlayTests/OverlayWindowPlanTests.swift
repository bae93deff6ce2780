import Testing
@testable import IslandOverlay

/// What island-overlay's window is before GTK makes it, and what the overlay says of the
/// desktop it found.
@Suite struct OverlayWindowPlanTests {
    static func plan(
        wayland: Bool = true, hosted: Bool = false, layerShellVersion: UInt32 = 4,
        needsWindowShape: Bool = false
    ) -> OverlayWindowPlan {
        OverlayWindowPlan(
            wayland: wayland, hosted: hosted, layerShellVersion: layerShellVersion, needsWindowShape: needsWindowShape,
            canvas: (560, 400))
    }

    @Test func theCanvasFitsUnderTheMarginOnTheFirstMonitor() {
        var config = OverlayConfig()
        let tall = OverlayWindowPlan.canvas(config: config, monitorHeight: 2160, hosted: false, maxHeight: nil)
        #expect(tall.width == config.geometry.canvasWidth)
        #expect(tall.height == config.geometry.canvasMaximumHeight)
        config.marginTop = 100
        let short = OverlayWindowPlan.canvas(config: config, monitorHeight: 300, hosted: false, maxHeight: nil)
        #expect(short.height == 200)
        // Never under 100 pixels, however little room.
        #expect(OverlayWindowPlan.canvas(config: config, monitorHeight: 150, hosted: false, maxHeight: nil).height == 100)
        // A monitor of no height (not yet known): 720.
        #expect(
            OverlayWindowPlan.canvas(config: config, monitorHeight: 0, hosted: false, maxHeight: nil).height
                == min(config.geometry.canvasMaximumHeight, 620))
    }

    /// The canvas is as wide as the expanded island may grow on the widest monitor: standard on
    /// a 1280 px one, wider on a 1920 px one, never narrower than standard.
    @Test func theCanvasWidensForTheWidestMonitor() {
        let config = OverlayConfig()
        let standard = config.geometry.canvasWidth
        #expect(OverlayWindowPlan.canvas(config: config, monitorHeight: 800, outputWidth: 1280, hosted: false, maxHeight: nil).width == standard)
        let wide = OverlayWindowPlan.canvas(config: config, monitorHeight: 1080, outputWidth: 1920, hosted: false, maxHeight: nil).width
        #expect(wide > standard)
        #expect(wide == config.geometry.canvasWidth(outputWidth: 1920))
        #expect(OverlayWindowPlan.canvas(config: config, monitorHeight: 1080, outputWidth: 0, hosted: false, maxHeight: nil).width == standard)
    }

    /// Hosted, the host says the room under its bar; MarginTop= does not apply.
    @Test func hostedTheHostSaysTheRoom() {
        var config = OverlayConfig()
        config.marginTop = 100
        #expect(OverlayWindowPlan.canvas(config: config, monitorHeight: 300, hosted: true, maxHeight: nil).height == 300)
        #expect(OverlayWindowPlan.canvas(config: config, monitorHeight: 2160, hosted: true, maxHeight: 250).height == 250)
    }

    @Test func settingsFollowTheKindOfWindow() {
        let layerShell = Self.plan(layerShellVersion: 3).settings(environment: [:])
        #expect(layerShell.keyboardWhileOpen == .whileOpen(layerShellVersion: 3))
        #expect(layerShell.followsDaemonLock)
        #expect(!layerShell.inputNeverEmpty)
        let x11 = Self.plan(wayland: false, layerShellVersion: 0, needsWindowShape: true).settings(environment: [:])
        #expect(x11.keyboardWhileOpen == .none)
        #expect(x11.cutsWindowToShapes)
        // Hosted on GNOME's Wayland compositor: one input pixel always (Mutter's pick); the
        // host, not the daemon, says when the session is locked.
        let hosted = Self.plan(hosted: true, layerShellVersion: 0).settings(environment: [:])
        #expect(hosted.inputNeverEmpty)
        #expect(!hosted.followsDaemonLock)
        #expect(hosted.keyboardWhileOpen == .none)
        #expect(!Self.plan(wayland: false, hosted: true, layerShellVersion: 0).settings(environment: [:]).inputNeverEmpty)
    }

    @Test func theLogSaysTheBackend() {
        let config = OverlayConfig()
        #expect(Self.plan().description(config: config).hasPrefix("backend wayland (layer-shell v4, layer top, keyboard "))
        #expect(Self.plan().description(config: config).hasSuffix("canvas 560x400, margin-top 8"))
        #expect(
            Self.plan(wayland: false, layerShellVersion: 0, needsWindowShape: true).description(config: config)
                .hasPrefix("backend x11 (override-redirect, no compositor: shaped window)"))
        #expect(!Self.plan(hosted: true, layerShellVersion: 0).description(config: config).contains("margin-top"))
    }

    @Test func withoutLayerShellTheRefusalSaysWhatWorks() {
        #expect(OverlayWindowPlan.noLayerShell(["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]).contains("then log out and in once"))
        let elsewhere = OverlayWindowPlan.noLayerShell([:])
        #expect(elsewhere.contains("Run it on a compositor with layer-shell"))
        #expect(elsewhere.contains("island-presenter"))
    }

    /// KDE's KWin 5.27 has no wlr-foreign-toplevel-management: the log says Fullscreen= does
    /// not apply there, rather than leaving the user to wonder.
    @Test func theLogSaysWhatTheDesktopTells() {
        let kde = OverlayDesktopSources(wayland: true, toplevelVersion: 0, xdgOutputVersion: 3, drawsOverLockScreen: true).description
        #expect(kde.contains("fullscreen windows and focus are not known, so Fullscreen= does not apply"))
        #expect(kde.contains("connector names from xdg-output v3"))
        #expect(kde.contains("KWin draws the island's lock-screen list over its locker"))
        let sway = OverlayDesktopSources(wayland: true, toplevelVersion: 3, xdgOutputVersion: 2, fullscreen: .hide).description
        #expect(sway.hasPrefix("fullscreen windows and focus from wlr-foreign-toplevel-management v3: Fullscreen=hide"))
        #expect(sway.contains("the locker hides the island"))
        #expect(OverlayDesktopSources(wayland: true, toplevelVersion: 1).description.contains("tells focus but not fullscreen"))
        #expect(OverlayDesktopSources(wayland: true).description.contains("no xdg-output v2"))
        #expect(OverlayDesktopSources(wayland: false).description.hasPrefix("X11 with no EWMH window manager"))
        #expect(OverlayDesktopSources(wayland: false, x11WindowManager: true).description.contains("Fullscreen=alerts"))
    }

    @Test func aFrameShowsSomethingWhenFormedOrListed() {
        var frame = OverlayFrame(form: .hidden, listOpen: false, shapes: [], content: [], hits: [])
        #expect(!frame.showsSomething)
        frame.listOpen = true
        #expect(frame.showsSomething)
        frame = OverlayFrame(form: .compact, listOpen: false, shapes: [], content: [], hits: [])
        #expect(frame.showsSomething)
    }
}
