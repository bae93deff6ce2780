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

            Bar contracts (one line per change on stdout, flushed):
              waybar    {"text", "alt": the chip (the short form), "tooltip": an
                        alert, then the lock-screen list, one activity per line,
                        "class": [mode, "stale"?, "alert"?], "percentage": 0-100
                        when the island's activity shows progress}. text, alt and
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

    @Option(help: ArgumentHelp("Cut the bar text to this many characters, with an ellipsis (default: 40).", valueName: "n"))
    var maxLength: Int = BarFormat.defaultMaxLength

    func validate() throws {
        guard maxLength >= 1 else { throw ValidationError("--max-length must be at least 1") }
    }
}

struct CommonOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The daemon's socket (default: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock).", valueName: "path"))
    var socket: String?

    var socketPath: String {
        socket ?? SocketLocation.client(environment: ProcessInfo.processInfo.environment, uid: getuid())
    }
}

@Sendable func now() -> Double { Date().timeIntervalSince1970 }

/// Sleeps to just past the next whole second, so timers turn over when a clock would.
func sleepToNextSecond() async throws {
    let fraction = now().truncatingRemainder(dividingBy: 1)
    try await Task.sleep(for: .milliseconds(Int((1 - fraction) * 1000) + 5))
}

/// The exit status of a bar presenter whose bar went away (EX_IOERR): a presenter that outlived
/// its bar would stay subscribed, and reconnect, forever.
let outputClosedStatus: Int32 = 74

/// Called from the stdout watcher's thread or the driver's: `_exit`, because exit handlers
/// running while the other threads still work is what sanitizers report as races; every
/// write is unbuffered, so nothing is lost.
@Sendable func exitOutputClosed() -> Never {
    removeBarRecord()
    writeAll("island-presenter: standard output closed; exiting\n", to: 2)
    Glibc._exit(outputClosedStatus)
}

/// Ends the process on SIGINT or SIGTERM with the shell's status for it (128 + N), whatever
/// disposition it inherited: a bar started as a background job of a non-interactive shell
/// has SIGINT ignored, and the default action would then never stop it.
func exitOnInterrupt(cleanup: @escaping @Sendable () -> Void = {}) -> Task<Void, Never> {
    let signals = signalStream([SIGINT, SIGTERM])
    return Task.detached {
        for await number in signals {
            cleanup()
            Glibc._exit(128 + number)
        }
    }
}

/// Where the bar presenters record what their clicks may act on.
func barShownDirectory() -> String {
    BarShown.directory(runtimeDirectory: SocketLocation.userRuntimeDirectory(environment: ProcessInfo.processInfo.environment, uid: getuid()))
}

/// The bar's driver: its lines on standard output, what its clicks may act on in a record of
/// its own in `barShownDirectory` (replaced atomically at each change).
func makeBarDriver(_ format: BarFormat, options: BarOptions) -> BarDriver {
    let directory = barShownDirectory()
    let path = directory + "/" + BarShown.fileName(socket: options.common.socketPath, pid: getpid())
    barRecord.withLock { $0 = path }
    let reported = Once()
    return BarDriver(
        format: format, maxLength: options.maxLength, clock: now, monotonic: BootClock.now,
        settleTime: clickSettleTime(environment: ProcessInfo.processInfo.environment), pid: getpid(),
        publish: { record in
            mkdir(directory, 0o700)
            do {
                try Data(record.serialized).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                // Clicks then act on the island as the daemon has it: said once, not per line.
                guard reported.first() else { return }
                writeAll("island-presenter: cannot record what the bar shows in \(path) (its clicks will not be checked against it): \(error)\n", to: 2)
            }
        },
        output: { line in
            if !writeAll(line + "\n") { exitOutputClosed() }
        })
}

/// This bar presenter's record of what its clicks may act on, removed when it exits (a record
/// left by one killed outright is removed by the next click: its pid is gone).
let barRecord = Mutex<String?>(nil)

@Sendable func removeBarRecord() {
    if let path = barRecord.withLock({ $0 }) { unlink(path) }
}

/// True the first time only.
final class Once: Sendable {
    private let done = Mutex(false)

    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

func runBar(_ format: BarFormat, options: BarOptions, driver: BarDriver? = nil) async {
    // A closed stdout is handled where it is seen, with a status of its own; SIGPIPE (which
    // the socket code may ignore anyway) must not decide it.
    signal(SIGPIPE, SIG_IGN)
    let interrupt = exitOnInterrupt(cleanup: removeBarRecord)
    defer { interrupt.cancel() }
    whenStandardOutputCloses { exitOutputClosed() }
    let driver = driver ?? makeBarDriver(format, options: options)
    let loop = SubscriptionLoop(socketPath: options.common.socketPath)
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await loop.run { await driver.handle($0) } }
        group.addTask {
            for await _ in driver.tickingStarts {
                while !Task.isCancelled {
                    try? await sleepToNextSecond()
                    guard await driver.tick() else { break }
                }
            }
        }
        await group.next()
        group.cancelAll()
    }
}

struct Waybar: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A Waybar custom module (return-type: json): one JSON object per line.",
        discussion: """
            Each line: {"text", "alt", "tooltip", "class", "percentage"?}; alt is the island's \
            mode, tooltip the lock-screen list (one activity per line), class the mode plus \
            "stale" and "alert" when relevant, percentage the progress of the island's activity.
            """)
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.waybar, options: options) }
}

struct I3blocks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "i3blocks",
        abstract: "An i3blocks block (format=json, interval=persist): {\"full_text\", \"short_text\"} per line.",
        discussion: """
            i3blocks writes a persistent block's clicks to its standard input (a JSON object \
            with "button" under format=json): button 1 toggles the island's activity expanded, \
            2 opens the lock-screen list in a terminal, 3 taps it (see the click mode). i3blocks 1.4 \
            drops clicks on a running persistent block: bind a key to "click toggle" there.
            """)
    @OptionGroup var options: BarOptions
    func run() async throws {
        let common = options.common
        let driver = makeBarDriver(.i3blocks, options: options)
        // Not in the bar's task group: the end of input (no i3blocks, stdin /dev/null) ends
        // only the reading.
        Task.detached {
            var pending: [UInt8] = []
            for await chunk in TerminalSession.input() {
                pending += chunk
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    guard let button = BarClick.i3blocksButton(in: line), let action = BarClick.forButton(button) else { continue }
                    // The click is about the line i3blocks shows: what this driver put out,
                    // as of when the click was read.
                    let clickedAt = BootClock.now()
                    _ = await Click.perform(action, options: common, clickedAt: clickedAt, shown: [await driver.shown])
                }
                // A click is a line of the block's properties; nothing longer is one.
                if pending.count > 1 << 16 { pending.removeAll() }
            }
        }
        await runBar(.i3blocks, options: options, driver: driver)
    }
}

struct Eww: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "An eww deflisten source: the island's text per line; an empty line when there is none.")
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.eww, options: options) }
}

struct Polybar: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A polybar custom/script (tail = true): the island's text per line; an empty line hides it.")
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.polybar, options: options) }
}

struct Snapshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the current island and lock-screen list once, as SVG, and exit.",
        discussion: """
            The drawing is island-overlay's: its geometry and painter, through island-overlay \
            --draw-svg from the island-overlay package (the core package has no cairo or Pango), \
            found beside this program, else as /usr/bin/island-overlay, else on PATH. Without it \
            the command says which package to install and exits with status 69.
            """)
    @OptionGroup var options: CommonOptions

    @Option(help: ArgumentHelp("Write the SVG here ('-' for standard output).", valueName: "file"))
    var svg: String

    func run() async throws {
        guard SVGDrawing.drawerPath() != nil else { throw Self.unavailable() }
        let updates = try await Self.firstSnapshot(socketPath: options.socketPath)
        do {
            try SVGDrawing.draw(updates: updates, now: now(), to: svg)
        } catch {
            writeAll("island-presenter: \(error)\n", to: 2)
            throw ExitCode(64)
        }
    }

    static func unavailable() -> ExitCode {
        writeAll("island-presenter: \(SVGDrawing.Failure.drawerMissing)\n", to: 2)
        return ExitCode(69)
    }

    static func firstSnapshot(socketPath: String) async throws -> [JSONObject] {
        do {
            return try await fetchSnapshotUpdates(socketPath: socketPath)
        } catch {
            throw ValidationError("no snapshot from \(socketPath): \(error)")
        }
    }
}

extension BarClick: ExpressibleByArgument {}

struct Click: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Act on the island's activity, for a bar's click or a key binding.",
        discussion: """
            toggle    expand the island's activity, or collapse it when expanded
            expand    expand it (a long press)
            collapse  collapse the island
            tap       tap it: the URL the daemon returns opens with xdg-open (and is printed)
            dismiss   dismiss it from the lock-screen list
            button ACTION
                      press its layout's button whose action is ACTION (as the app's Watch sees \
            it); refused, exit status 1, when it has no such button (the ones it has are \
            listed) or has ended. With --id ID, the button of that activity only (on the \
            island or in the lock-screen list), whatever the island shows
            list      open the lock-screen list: the terminal UI in a new terminal ($TERMINAL, \
            else x-terminal-emulator, foot, alacritty, kitty or xterm, the first on PATH)
            The activity is the expanded one, else the attached one. Exit status 1 when the \
            island shows nothing.
            A click acts only on what the bar showed: while a bar mode runs for the daemon, \
            it records what its line is about, and a click acts on that activity only once it \
            has stood still on the bar for 0.5 s and the daemon's island still shows it; \
            otherwise it does nothing and exits with status 1 (against another app's update \
            slipping in under the pointer). Without a bar mode running (a key binding alone), \
            it acts on the island as the daemon has it.
            """)

    @Argument(help: ArgumentHelp("toggle, expand, collapse, tap, dismiss, button or list."))
    var action: BarClick

    @Argument(help: ArgumentHelp("For button: the button's action.", valueName: "action"))
    var button: String?

    @Option(name: .customLong("id"), help: ArgumentHelp("For button: press the button of this activity only.", valueName: "id"))
    var activity: String?

    @OptionGroup var options: CommonOptions

    func validate() throws {
        if action == .button && button == nil { throw ValidationError("give the button's action: click button ACTION") }
        if action != .button, let button { throw ValidationError("\(action.rawValue) takes no argument (\(button))") }
        if action != .button, activity != nil { throw ValidationError("--id goes with click button ACTION only") }
    }

    func run() async throws {
        // Judged as of when the bar started this process: the nearest to the click it knows.
        let clickedAt = BootClock.processStart() ?? BootClock.now()
        guard await Self.perform(action, button: button, activity: activity, options: options, clickedAt: clickedAt) else {
            throw ExitCode(1)
        }
    }

    /// Performs a click made at `clickedAt` (on `BootClock`); false (with the reason on standard
    /// error) when it could not. `shown` is what the bar presenter showed (i3blocks' own
    /// driver); nil reads the records of the bar presenters running for the socket, if any.
    /// `activity`: the button of this activity, named by the user, rather than the island's.
    static func perform(_ action: BarClick, button: String? = nil, activity: String? = nil, options: CommonOptions,
                        clickedAt: Double, shown: [BarShown]? = nil) async -> Bool {
        if action == .list { return openList(socket: options.socket) }
        let shown = shown ?? runningBarsShown(socket: options.socketPath)
        let model: PresenterModel
        do {
            model = try await fetchSnapshot(socketPath: options.socketPath)
        } catch {
            writeAll("island-presenter: no snapshot from \(options.socketPath): \(error)\n", to: 2)
            return false
        }
        let scene = IslandScene(model: model, now: now())
        let interaction: String, id: String
        if let activity {
            // Named by the user: what the island or a bar shows now does not choose it.
            (interaction, id) = (action.rawValue, activity)
        } else {
            guard let (islandInteraction, islandID) = action.interaction(on: model.island) else {
                writeAll("island-presenter: the island shows nothing\n", to: 2)
                return false
            }
            (interaction, id) = (islandInteraction, islandID)
            switch BarShown.decide(action, records: shown, island: model.island, at: clickedAt) {
            case .act, nil: break  // the same action and activity as the island's, checked there; or no bar runs
            case .refuse(let reason):
                writeAll("island-presenter: \(reason)\n", to: 2)
                return false
            }
        }
        if let button, let refusal = buttonRefusal(button, of: activity, scene: scene) {
            writeAll("island-presenter: \(TerminalText.display(refusal))\n", to: 2)
            return false
        }
        do {
            let url = try await Interactor(socketPath: options.socketPath).interact(interaction, id: id, button: button)
            if interaction == "tap", let url {
                writeAll(TerminalText.display(url) + "\n")
                _ = openWithXDG(url)
            }
            return true
        } catch {
            writeAll("island-presenter: \(interaction) failed: \(TerminalText.display(String(describing: error)))\n", to: 2)
            return false
        }
    }

    /// Why the island's activity (or `activity`, when given) has no button `action` to press;
    /// nil when it has. The activity is named by its app and title as well as its id.
    static func buttonRefusal(_ action: String, of activity: String? = nil, scene: IslandScene) -> String? {
        let lookup = scene.button(action, of: activity)
        func named(_ id: String) -> String { scene.entry(id).map(IslandScene.naming) ?? "activity \(id)" }
        switch lookup {
        case .found: return nil
        case .noActivity:
            return activity.map { "no activity \($0) on the island or in its list (no button \(action) to press)" }
                ?? "the island shows nothing"
        case .ended(let id): return "\(named(id)) has ended: its buttons act no more"
        case .missing(let id, let available) where available.isEmpty: return "\(named(id)) has no buttons (no button \(action))"
        case .missing(let id, let available):
            return "\(named(id)) has no button \(action); its buttons: \(available.joined(separator: ", "))"
        }
    }

    /// The records of the bar presenters running for the socket (none when none runs). The
    /// record of one that has exited is removed.
    static func runningBarsShown(socket: String) -> [BarShown] {
        let directory = barShownDirectory()
        let prefix = BarShown.filePrefix(socket: socket)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var records: [BarShown] = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path), let shown = BarShown(serialized: Array(data)) else { continue }
            if shown.pid > 0, kill(shown.pid, 0) == 0 || errno == EPERM {
                records.append(shown)
            } else {
                unlink(path)
            }
        }
        return records
    }

    /// Starts the terminal UI in a terminal emulator of its own.
    static func openList(socket: String?) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        let candidates = [environment["TERMINAL"], "x-terminal-emulator", "foot", "alacritty", "kitty", "xterm"].compactMap { $0 }
        guard let terminal = candidates.lazy.compactMap({ name -> String? in
            name.hasPrefix("/") ? (access(name, X_OK) == 0 ? name : nil) : path.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
        }).first else {
            writeAll("island-presenter: no terminal emulator found; set $TERMINAL\n", to: 2)
            return false
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: terminal)
        process.arguments = ["-e", CommandLine.arguments[0], "tui"] + (socket.map { ["--socket", $0] } ?? [])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            return true
        } catch {
            writeAll("island-presenter: cannot start \(terminal): \(error)\n", to: 2)
            return false
        }
    }
}

struct TUI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "The live island in the terminal.",
        discussion: """
            The island is centred at the top (compact pill, minimal pill with the detached \
            bubble, or the expanded island), the lock-screen list below, the status line last.
            Keys: ←/→ or Tab select an activity in the list (a long list scrolls to keep it \
            on screen); e expand; c collapse; Enter tap \
            (opens the returned URL with xdg-open, or shows it); d dismiss; 1-9 press the Nth \
            button of the expanded layout; q quit.
            A key acts for an activity only once what it acts on has stood still on screen for \
            0.5 s: right after an activity appears, moves or becomes the one keys act on, a key \
            says "changed just now" and sends nothing.
            """)
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let terminal = TerminalSession()
        try terminal.enter()
        defer { terminal.restore() }
        let interactor = Interactor(socketPath: options.socketPath)
        let controller = TUIController(io: .init(
            write: { writeAll($0) },
            size: { TerminalSession.size() },
            clock: now,
            open: { openWithXDG($0) },
            interact: { action, id, button in try await interactor.interact(action, id: id, button: button) },
            monotonic: BootClock.now, settleTime: clickSettleTime(environment: ProcessInfo.processInfo.environment)))
        await controller.redraw()
        let loop = SubscriptionLoop(socketPath: options.socketPath)
        let signals = signalStream([SIGINT, SIGTERM, SIGHUP, SIGWINCH])
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await loop.run { await controller.handle($0) } }
            group.addTask {
                while !Task.isCancelled {
                    try? await sleepToNextSecond()
                    await controller.tick()
                }
            }
            group.addTask {
                for await number in signals {
                    if number == SIGWINCH {
                        writeAll("\u{1B}[2J")
                        await controller.redraw()
                    } else {
                        return
                    }
                }
            }
            group.addTask {
                for await chunk in TerminalSession.input() {
                    for key in TUIKey.parse(chunk) {
                        guard await controller.press(key) else { return }
                    }
                }
            }
            // Quit, a terminating signal or the end of input ends everything.
            await group.next()
            group.cancelAll()
        }
        terminal.restore()
        // The input thread may still be blocked in read(2); leave without waiting for it.
        Glibc.exit(0)
    }
}
