import ArgumentParser
import CGtk
import FreeDesktop
import Foundation
import IslandOverlay
import IslandPaths
import IslandPresenter

@main
struct IslandOverlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "island-overlay",
        abstract: "The Dynamic Island on screen: a capsule at the top centre showing the Live Activities of islandd.",
        discussion: """
            A black capsule at the top centre shows the Live Activities of islandd as the TUI and \
            the bars do (compact, minimal with a detached bubble, expanded, alerts, and the list of \
            every activity as a panel under the island), and morphs between them. It is a \
            presenter: it subscribes to the daemon, and reconnects when the daemon restarts.

            Mouse and keys:
              click the compact or minimal island  expand that activity
              rest the pointer on it for a second  it fades, to show the window under
                                                   it (Reserve=no), until the pointer
                                                   leaves
              click in the expanded island, alert  tap: the app is told, the URL opens
              click a button                       press it (the app's Watch sees it)
              secondary click on the island        open or close the list
              click × on a card in the list        dismiss that activity
              Escape, focus lost, pointer away     collapse, close the list (clicks
                                                   outside the island reach the
                                                   windows below)
            On X11 the island is an override-redirect window and takes no keyboard focus: Escape \
            and focus loss do not reach it there; the pointer staying away (CollapseAfter=), the \
            daemon's timeout or --toggle-list close what opened.
            With gtk-enable-animations=false (reduced motion) or Motion=off, nothing animates.

            overlay.conf:
              [Overlay]
              Output=primary   the monitor: a connector name (HDMI-A-1), a model
                               name, a number (0, 1, ...), primary (default;
                               on Wayland the first output), focused (the
                               output of the focused window, followed) or
                               all (an island on every output)
              Fullscreen=alerts  beside a fullscreen window on its output: hide
                               (nothing), alerts (only an alert, for its
                               duration; default) or always (as if none)
              Layer=top        background, bottom, top (default) or overlay;
                               beside a fullscreen window top rises to overlay
                               while the island shows something there
              MarginTop=8      pixels between the top of the screen and the island
              Reserve=no       yes: while the island shows something, windows keep
                               out of its strip (MarginTop, the compact height and
                               a gap; an exclusive zone on its output, each one's
                               with Output=all); no: windows go under it, and
                               it fades while the pointer rests on it. Not
                               --hosted, not on X11. A bar in a lower layer
                               (Waybar's default, bottom) moves under the strip;
                               one in the overlay layer stays above it
              Opener=gio open  the program a tap's URL is given to, as one last
                               argument, with no shell; default: gio open, else
                               xdg-open
              CollapseAfter=4  seconds the pointer stays off the expanded island (or
                               the open list) before it collapses (closes); 0: never
              Motion=auto      auto: follow GTK's gtk-enable-animations (on Wayland
                               GTK reads it from GSettings org.gnome.desktop.interface
                               enable-animations); on; off
              Size=medium      small, medium or large, or a factor from 0.75 to 2:
                               every form, its type and the window; the
                               monitor's scale comes on top

            overlay.css: GTK CSS over the built-in dark style. The colours are named: \
            island_background, island_foreground, island_secondary, island_accent (progress and \
            rings without a tint), island_button, island_button_hover, island_track, island_panel \
            (the list), island_card, and island_foreground_on_light and island_secondary_on_light \
            (text on a card with a light backgroundTint); for example:
              @define-color island_background #000000;

            Placement: on Wayland compositors with wlr-layer-shell (sway, Hyprland, river, niri, \
            KDE, COSMIC, labwc, Wayfire) a layer surface anchored top-centre, below bars and \
            panels (their exclusive zones), with none of its own unless Reserve=yes, \
            taking the keyboard only while expanded or the list is open (on demand; exclusively \
            where layer-shell is version 3, as on KDE Plasma 5.27, given back at every collapse); on X11 an \
            override-redirect RGBA window at the top centre. Input is taken only where the island \
            is drawn. Monitors plugged in or out while it runs are followed; the log names the \
            output (connector) it is on. Fullscreen windows and focus are known where the \
            compositor offers wlr-foreign-toplevel-management (sway and other wlroots \
            compositors), on X11 from an EWMH window manager (the active window's _NET_WM_STATE; \
            the island raises itself over it to show), and on GNOME from the extension; not on KDE \
            (KWin 5.27 keeps its own protocol for Plasma's programs) nor on X11 without an EWMH \
            window manager, where Fullscreen= does not apply and Output=focused stays put. The start-up log says which. GNOME has no layer-shell: there the Island GNOME Shell extension \
            (island@island.org) starts island-overlay --hosted and places its window itself; started \
            by hand on a Wayland compositor without layer-shell, the overlay says so and exits with \
            status 69.

            A click acts on what is on screen: a tap, a button or a dismissal does nothing for \
            the app while the island morphs, nor until what was clicked has stood still in view \
            for 500 ms (against another app moving its content under the pointer). Every form's \
            size is bounded (the expanded island is at most 160 px tall) and what does not fit is \
            cut, not drawn.

            Environment: ISLAND_OVERLAY_FRAME_LOG=1 logs every frame painted and its paint time \
            ("frame N us animating|settled FORM"), the accessible regions, when the targets on \
            screen become clickable ("actionable: tap ID; button ID ACTION; ...") and clicks \
            ignored because they came too early, on stderr. ISLAND_OVERLAY_CLICK_SETTLE_MS=N \
            (tests on a slow machine): a longer wait than 500 ms before a target may be clicked; \
            never a shorter one.

            Exit status: 0 on SIGTERM/SIGINT (--hosted: or standard input closed), 64 bad usage, 69 no way to place the island (no \
            layer-shell on Wayland, or no display), 1 --toggle-list found no running overlay; \
            --draw-svg: 65 input that is not a request, 1 the SVG not written.
            """,
        version: "0.1.0")

    @Option(help: ArgumentHelp(
        "The daemon's socket (default: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("The configuration file (default: $XDG_CONFIG_HOME/island/overlay.conf).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The style sheet (default: $XDG_CONFIG_HOME/island/overlay.css).", valueName: "file"))
    var css: String?

    @Flag(help: """
        Open an ordinary window that the desktop's shell places and stacks, instead of placing \
        the island itself: what the GNOME Shell extension starts. Reads the shell's state on \
        standard input ({"fullscreen": bool, "alerts": bool}, a JSON object a line) and exits \
        when it is closed. Output=, Layer= and MarginTop= do not apply; Fullscreen= does.
        """)
    var hosted = false

    @Option(help: ArgumentHelp("""
        small, medium or large, or a factor from 0.75 to 2: the island's size, over Size= of \
        overlay.conf.
        """, valueName: "size"))
    var size: String?

    @Option(help: ArgumentHelp("""
        (--hosted only) The window's height at most, in logical pixels: the room the host has \
        under its bar, so that the list ends on screen.
        """, valueName: "pixels"))
    var maxHeight: Int?

    @Flag(help: """
        Open or close the list of the running overlay, and exit (for bars and key bindings): sends \
        SIGUSR1 to the pid in $XDG_RUNTIME_DIR/island/overlay.pid.
        """)
    var toggleList = false

    @Option(help: ArgumentHelp("""
        Draw every form of the five example apps to dir/*.png, off-screen (no display needed), and \
        exit. Times of day in UTC unless TZ is set.
        """, valueName: "dir"))
    var renderGallery: String?

    @Option(help: ArgumentHelp("""
        (--render-gallery only) The example layouts, one directory per app (default: \
        ./packaging/layouts, else /usr/share/island/layouts).
        """, valueName: "dir"))
    var layouts: String?

    @Option(help: ArgumentHelp("(--render-gallery only) Draw at n times the size, 1 to 4.", valueName: "n"))
    var scale = 1

    @Option(name: .customLong("draw-svg"), help: ArgumentHelp("""
        Draw the island as SVG to file ('-': standard output), off-screen (no display needed), \
        and exit: what island-presenter snapshot --svg and island preview --svg start. Reads \
        {"now": epoch seconds, "updates": [presenter updates, a snapshot first]} on standard \
        input; exit status 65 when that is not what came (or it is over 64 MiB), 1 when the \
        SVG could not be written. See island-overlay(1).
        """, valueName: "file"))
    var drawSVG: String?

    func validate() throws {
        if let size, IslandGeometry(named: size) == nil { throw ValidationError("--size must be small, medium, large or a factor from 0.75 to 2") }
        if let maxHeight {
            guard hosted else { throw ValidationError("--max-height applies to --hosted only") }
            guard (100...20_000).contains(maxHeight) else { throw ValidationError("--max-height must be 100-20000 pixels") }
        }
        guard (1...4).contains(scale) else { throw ValidationError("--scale must be 1-4") }
        guard renderGallery == nil || drawSVG == nil else { throw ValidationError("--render-gallery and --draw-svg cannot be combined") }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        // Off-screen modes first: neither initialises GTK nor opens a display.
        if let directory = renderGallery { return try render(to: directory, environment: environment) }
        if let path = drawSVG { return try drawSVG(to: path, environment: environment) }
        let paths = OverlayPaths(environment: environment)
        if toggleList { return try toggleRunningList(paths) }

        var overlayConfig = OverlayConfig()
        let configPath = config ?? paths.configHome + "/island/overlay.conf"
        if let text = try? String(contentsOfFile: configPath, encoding: .utf8) {
            overlayConfig = OverlayConfig(text: text, path: configPath)
            log("configuration from \(configPath)")
            for warning in overlayConfig.warnings { log(warning) }
        }
        if let size, let geometry = IslandGeometry(named: size) { overlayConfig.geometry = geometry }
        let socketPath = socket ?? SocketLocation.client(environment: environment, uid: getuid())
        // GTK calls back on this thread, the process's main thread, for as long as gtk_main runs:
        // the shell is the main actor's.
        let cssPath = css ?? paths.configHome + "/island/overlay.css"
        try MainActor.assumeIsolated {
            let window = try OverlayWindow(config: overlayConfig, hosted: hosted, maxHeight: maxHeight.map(Double.init), environment: environment)
            // Hosted, the desktop's shell places the window and says what is fullscreen.
            if overlayConfig.reserve, hosted || !window.wayland {
                log("Reserve=yes does not apply \(hosted ? "hosted (the desktop's shell places the window)" : "on X11"): windows may go under the island")
                // As with Reserve=no, then: it fades while the pointer rests on it over them.
                overlayConfig.reserve = false
            }
            let monitors = hosted ? nil : OverlayMonitors(wayland: window.wayland, config: overlayConfig)
            monitors?.start()
            let islands = OverlayIslands { window, placement in
                let shell = OverlayShell(window: window, placement: placement, config: overlayConfig, cssPath: cssPath,
                                         socketPath: socketPath, environment: environment)
                shell.listen()
                shell.start()
                return shell
            }
            if overlayConfig.output == .all, let monitors {
                try islands.everyOutput(first: window, monitors: monitors, config: overlayConfig, environment: environment)
            } else {
                islands.one(window, placement: monitors.map { OverlayPlacement(window: window, config: overlayConfig, monitors: $0) })
            }
            // Only once SIGUSR1 is ours: its default action would end the overlay.
            let pidFile = paths.writePidFile()
            // GTK's callbacks hold the islands unretained: they live until gtk_main returns.
            withExtendedLifetime(islands) { gtk_main() }
            if let pidFile { unlink(pidFile) }
        }
        log("exiting")
    }

    private func render(to directory: String, environment: [String: String]) throws {
        // Times of day in the default layout: the same images wherever they are drawn, unless a
        // zone is asked for.
        if environment["TZ"] == nil { setenv("TZ", "UTC", 1) }
        do {
            let files = try OverlayGallery.render(to: directory, layoutsDirectory: layouts ?? OverlayGallery.defaultLayoutsDirectory(), scale: scale)
            for file in files { print(file) }
        } catch {
            throw fail("cannot render the gallery: \(error)", status: 1)
        }
    }

    /// The island as SVG from presenter updates on standard input: the overlay's layout and
    /// painter on a cairo SVG surface (OverlaySnapshot), so the core binaries draw SVG without
    /// linking cairo, and the package carries no second binary for it.
    private func drawSVG(to path: String, environment: [String: String]) throws {
        guard let input = readStandardInput(limit: SVGDrawing.maximumRequestBytes),
              let request = SVGDrawing.parseRequest(input) else {
            throw fail("--draw-svg: standard input is not {\"now\": number, \"updates\": [objects]} within \(SVGDrawing.maximumRequestBytes) bytes", status: 65)
        }
        var model = PresenterModel()
        for update in request.updates { model.apply(update) }
        guard model.hasSnapshot else { throw fail("--draw-svg: the updates hold no snapshot", status: 65) }
        // GTK's icon theme needs GTK initialised: the theme ISLAND_ICON_THEME names is searched
        // on disk first, then Adwaita and hicolor.
        var themes = IconThemeSearch.defaultThemes
        if let theme = environment["ISLAND_ICON_THEME"], IconName.isValid(theme) { themes.insert(theme, at: 0) }
        let painter = OverlayPainter(icons: ThemeIconSource(themes: themes, environment: environment))
        guard let document = OverlaySnapshot.svg(IslandScene(model: model, now: request.now), painter: painter) else {
            throw fail("--draw-svg: cairo could not draw the SVG", status: 1)
        }
        if path == "-" {
            guard writeAll(document) else { throw fail("--draw-svg: cannot write to standard output", status: 1) }
        } else {
            do {
                try document.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw fail("--draw-svg: cannot write \(path): \(error.localizedDescription)", status: 1)
            }
        }
    }

    /// Standard input, or nil past `limit` bytes.
    private func readStandardInput(limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[..<count]
            if bytes.count > limit { return nil }
        }
        return bytes
    }

    private func toggleRunningList(_ paths: OverlayPaths) throws {
        guard let text = try? String(contentsOfFile: paths.pidFile, encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
            throw fail("no running overlay (no \(paths.pidFile))", status: 1)
        }
        // Only an island-overlay of ours: a stale pid may now be someone else's process.
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard comm == "island-overlay", kill(pid, SIGUSR1) == 0 else { throw fail("no running overlay (pid \(pid) is not island-overlay)", status: 1) }
    }
}

/// Where the overlay's files are: the XDG base directories as every Island program reads them
/// (FreeDesktop), and the runtime directory as the daemon's clients find it (IslandPaths).
struct OverlayPaths {
    var configHome: String
    /// <runtime directory>/island, where the running overlay's pid is kept.
    var runtimeDirectory: String

    init(environment: [String: String]) {
        configHome = BaseDirectories(environment: environment).configHome
        runtimeDirectory = SocketLocation.userRuntimeDirectory(environment: environment, uid: getuid()) + "/island"
    }

    var pidFile: String { runtimeDirectory + "/overlay.pid" }

    /// For `--toggle-list`; returns the file written, for removal at exit.
    func writePidFile() -> String? {
        mkdir(runtimeDirectory, 0o700)
        return (try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)) != nil ? pidFile : nil
    }
}

func log(_ message: String) {
    _ = writeAll("island-overlay: \(message)\n", to: 2)
}

/// Says why, and ends the command with `status`.
func fail(_ message: String, status: Int32) -> ExitCode {
    log(message)
    return ExitCode(status)
}
