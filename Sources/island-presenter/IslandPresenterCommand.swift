import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import OrderedJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@main
struct IslandPresenterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "island-presenter",
        abstract: "Show the Dynamic Island and the Live Activities of islandd: in a terminal, in a status bar, as SVG.",
        discussion: """
            island-presenter subscribes to the daemon as a presenter: it receives the arbitrated \
            island (compact, minimal, expanded or none) and the lock-screen list, draws it, and \
            sends the user's interactions back. Timers and time-based progress tick locally once \
            a second; the daemon never pushes every second. When the daemon stops or restarts, \
            the presenter reconnects (50 ms doubling to 2 s) and starts again from a fresh snapshot.

            Modes:
              tui       the live island in the terminal, with the lock-screen list
                        and keys to expand, collapse, tap, dismiss, press buttons
              waybar    Waybar custom module (return-type: json)
              i3blocks  i3blocks (format=json, interval=persist; acts on its clicks)
              eww       eww deflisten
              polybar   polybar custom/script (tail = true)
              snapshot  draw the island once (--svg FILE) and exit; the drawing
                        is island-overlay's (needs the island-overlay package)
              click     act on the island for a bar's on-click or a key binding:
                        toggle, expand, collapse, tap, dismiss, button ACTION or list

            A bar mode exits with status 74 once its standard output is closed (the bar quit \
            or was killed), and with 128+N on SIGINT or SIGTERM, even when started with SIGINT \
            ignored.

            Exit status: 0 success (tui quit, snapshot drawn); 1 click could not act; 64 invalid \
            arguments, or snapshot could not reach the daemon or write its file; 69 snapshot \
            without the island-overlay package; 74 a bar mode's output closed; 128+N a bar mode \
            stopped by signal N.

            Bar contracts (one line per change on stdout, flushed):
              waybar    {"text", "alt": the chip (the short form), "tooltip": an
                        alert, then the lock-screen list, one activity per line,
                        "class": [mode, "stale"?, "alert"?, "focus"?, "sharing"?],
                        "percentage": 0-100 when the island's activity shows
                        progress}. text, alt and
                        tooltip are Pango markup (Waybar's default, escape: false),
                        with &, < and > escaped.
              i3blocks  {"full_text", "short_text": the chip, "markup": "none"}
              eww       the text alone, as a plain string; an empty line hides the widget.
              polybar   the text alone, with a zero-width space between every % and {, so
                        producer text is never a formatting tag; an empty line hides it.
            Control characters in producer text (C0, DEL, C1) become spaces in every mode, and \
            the text is cut to --max-length cells (default 40) with an ellipsis.
            The text: while an alert lasts, its title and body; compact -> the live compact \
            leading + trailing views (the chip only when both are empty); minimal -> the \
            attached and detached minimal views, each with its activity's symbol; expanded -> \
            the expanded activity's compact text; no activity -> empty. Icon names become \
            emoji or glyphs (a bullet when none fits); snapshot draws them from the icon theme.

            Example Waybar module (packaging/waybar/island.jsonc and island.css are ready-made):
              "custom/island": {"exec": "island-presenter waybar", "return-type": "json",
                "on-click": "island-presenter click toggle",
                "on-click-right": "island-presenter click tap",
                "on-click-middle": "island-presenter click list"}

            The socket: --socket, else $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock.
            """,
        version: "0.1.0",
        subcommands: [TUI.self, Waybar.self, I3blocks.self, Eww.self, Polybar.self, Snapshot.self, Click.self]
    )
}

struct BarOptions: ParsableArguments {
    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Cut the bar text to this many cells (wide characters and emoji count two), with an ellipsis.", valueName: "n"))
    var maxLength: Int = BarFormat.defaultMaxLength

    func validate() throws {
        guard maxLength >= 1 else { throw ValidationError("--max-length must be at least 1") }
    }
}

struct CommonOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon's socket (default: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock).", valueName: "path"))
    var socket: String?

    var socketPath: String {
        socket ?? SocketLocation.client(environment: ProcessInfo.processInfo.environment, uid: getuid())
    }
}
