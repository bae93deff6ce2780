import ArgumentParser
import CGtk
import Foundation
import IslandOverlay
import IslandPaths

@main
struct IslandOverlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "island-overlay",
        abstract: "The Dynamic Island on screen: a capsule at the top centre showing the Live Activities of islandd.",
        discussion: OverlayCommandLine.discussion,
        version: "0.1.0")

    @Option(
        help: ArgumentHelp(
            "The daemon's socket (default: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("The configuration file (default: $XDG_CONFIG_HOME/island/overlay.conf).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The style sheet (default: $XDG_CONFIG_HOME/island/overlay.css).", valueName: "file"))
    var css: String?

    @Flag(
        help: """
            Open an ordinary window that the desktop's shell places and stacks, instead of placing \
            the island itself: what the GNOME Shell extension starts. Reads the shell's state on \
            standard input, a JSON object a line naming any of "fullscreen" (true: a fullscreen \
            window is on the island's monitor), "alerts" (false: Do Not Disturb holds them), \
            "locked" (true: the session is locked, the lock-screen list alone is shown) and \
            "room" (the window's height at most, 100 to 20000 pixels, as --max-height), and \
            exits when it is closed; writes {"wake": true} on standard output when an alert comes \
            while locked. Output=, Layer=, MarginTop= and Reserve= do not apply; Fullscreen= does.
            """)
    var hosted = false

    @Option(
        help: ArgumentHelp(
            """
            small, medium or large, or a factor from 0.75 to 2: the island's size, over Size= of \
            overlay.conf.
            """, valueName: "size"))
    var size: String?

    @Option(
        help: ArgumentHelp(
            """
            (--hosted only) The window's height at most, in logical pixels: the room the host has \
            under its bar, so that the list ends on screen.
            """, valueName: "pixels"))
    var maxHeight: Int?

    @Flag(
        help: """
            Open or close the list of the running overlay, and exit (for bars and key bindings): sends \
            SIGUSR1 to the pid in $XDG_RUNTIME_DIR/island/overlay.pid.
            """)
    var toggleList = false

    @Option(
        help: ArgumentHelp(
            """
            Draw every form of the five example apps to dir/*.png, off-screen (no display needed), and \
            exit. Times of day in UTC unless TZ is set.
            """, valueName: "dir"))
    var renderGallery: String?

    @Option(
        help: ArgumentHelp(
            """
            (--render-gallery only) The example layouts, one directory per app (default: \
            ./packaging/layouts, else /usr/share/island/layouts).
            """, valueName: "dir"))
    var layouts: String?

    @Option(help: ArgumentHelp("(--render-gallery only) Draw at n times the size, 1 to 4.", valueName: "n"))
    var scale = 1

    @Option(
        name: .customLong("draw-svg"),
        help: ArgumentHelp(
            """
            Draw the island as SVG to file ('-': standard output), off-screen (no display needed), \
            and exit: what island-presenter snapshot --svg and island preview --svg start. Reads \
            {"now": epoch seconds, "updates": [presenter updates, a snapshot first]} on standard \
            input; exit status 65 when that is not what came (or it is over 64 MiB), 1 when the \
            SVG could not be written. See island-overlay(1).
            """, valueName: "file"))
    var drawSVG: String?

    func validate() throws {
        if let problem = OverlayCommandLine.problem(
            size: size, maxHeight: maxHeight, hosted: hosted, scale: scale,
            renderGallery: renderGallery, drawSVG: drawSVG)
        {
            throw ValidationError(problem)
        }
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
        if let text = readConfigurationFile(configPath, what: "configuration") {
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
            if let refused = OverlayCommandLine.placeReserve(&overlayConfig, hosted: hosted, wayland: window.wayland) { log(refused) }
            let monitors = hosted ? nil : OverlayMonitors(wayland: window.wayland, config: overlayConfig)
            monitors?.start()
            let islands = OverlayIslands { window, placement in
                let shell = OverlayShell(
                    window: window, placement: placement, config: overlayConfig, cssPath: cssPath,
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
}
