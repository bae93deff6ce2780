import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import IslandProtocol
import OrderedJSON
import Synchronization
import SmallFiles

#if canImport(Glibc)
import Glibc
#endif

extension BarClick: ExpressibleByArgument {}

struct Click: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Act on the island's activity, for a bar's click or a key binding.",
        discussion: """
            Actions:
              toggle    expand the island's activity, or collapse it when expanded
              expand    expand it (a long press)
              collapse  collapse the island
              tap       tap it: the URL the daemon returns opens with xdg-open (and
                        is printed)
              dismiss   dismiss it from the lock-screen list
              button ACTION
                        press its layout's button whose action is ACTION (as the
                        app's Watch sees it); refused, exit status 1, when it has no
                        such button (the ones it has are listed) or has ended. With
                        --id ID, the button of that activity only (on the island or
                        in the lock-screen list), whatever the island shows
              list      open the lock-screen list: the terminal UI in a new terminal
                        ($TERMINAL, else x-terminal-emulator, foot, alacritty, kitty
                        or xterm, the first on PATH) on the display; exit status 1
                        without one ($WAYLAND_DISPLAY and $DISPLAY unset)
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

    @Argument(help: ArgumentHelp("For button: the button's action.", valueName: "button-action"))
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
    static func perform(
        _ action: BarClick, button: String? = nil, activity: String? = nil, options: CommonOptions,
        clickedAt: Double, shown: [BarShown]? = nil
    ) async -> Bool {
        if action == .list { return openList(socket: options.socket) }
        let shown = shown ?? runningBarsShown(socket: options.socketPath)
        let model: PresenterModel
        do {
            model = try await fetchSnapshot(socketPath: options.socketPath)
        } catch {
            writeAll("island-presenter: no snapshot from \(options.socketPath): \(ConnectFailure.describe("\(error)", socket: options.socketPath))\n", to: 2)
            return false
        }
        let interaction: String, id: String
        switch action.decide(button: button, activity: activity, model: model, shown: shown, clickedAt: clickedAt, now: now()) {
        case .act(let decided, let target): (interaction, id) = (decided, target)
        case .refuse(let reason):
            writeAll("island-presenter: \(reason)\n", to: 2)
            return false
        }
        do {
            let url = try await Interactor(socketPath: options.socketPath).interact(interaction, id: id, button: button)
            if interaction == PresenterNames.Interact.Action.tap, let url {
                writeAll(TerminalText.display(url) + "\n")
                _ = openWithXDG(url)
            }
            return true
        } catch {
            writeAll("island-presenter: \(interaction) failed: \(TerminalText.display(SubscriptionLoop.describe(error)))\n", to: 2)
            return false
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
            // A record is named by its bar's process (`BarShown.fileName`). One whose process
            // is gone is removed unread, whatever it holds: any program of the user's can write
            // the runtime directory, and 100,000 files named like records once cost every
            // click 5 s of reading them. What is read is bounded by the processes that run.
            let named = name.dropFirst(prefix.count).dropLast(".json".count)
            guard let pid = Int32(named), pid > 0, String(pid) == named else { continue }
            guard kill(pid, 0) == 0 || errno == EPERM else {
                unlink(path)
                continue
            }
            // Only a small regular file is read (a file of gigabytes was read whole, 4 GiB held
            // for one click), and only a record of the process it is named by.
            guard let data = try? readRegularFile(path, limit: BarShown.maximumRecordBytes, followingLinks: false),
                let shown = BarShown(serialized: data), shown.pid == pid
            else { continue }
            records.append(shown)
        }
        return records
    }

    /// Starts the terminal UI in a terminal emulator of its own.
    static func openList(socket: String?) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        // A terminal started without a display exits at once, unseen (its output goes nowhere,
        // so that a bar waiting for the click's output is not held open by it): say so instead.
        guard ["WAYLAND_DISPLAY", "DISPLAY"].contains(where: { !(environment[$0] ?? "").isEmpty }) else {
            writeAll(
                "island-presenter: no display to open a terminal on ($WAYLAND_DISPLAY and $DISPLAY are unset); "
                    + "run `island-presenter tui` in a terminal instead\n", to: 2)
            return false
        }
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        let candidates = [environment["TERMINAL"], "x-terminal-emulator", "foot", "alacritty", "kitty", "xterm"].compactMap { $0 }
        guard
            let terminal = candidates.lazy.compactMap({ name -> String? in
                name.hasPrefix("/") ? (access(name, X_OK) == 0 ? name : nil) : path.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
            }).first
        else {
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
