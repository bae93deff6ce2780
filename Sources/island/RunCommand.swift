import ArgumentParser
import Foundation
import Synchronization
import OrderedJSON
import OrderedCollections
import IslandKit

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with a Live Activity that shows it running, then how it ended.",
        discussion: """
            Starts an activity of type Command (attributes {title, command}, state {status: running, \
            startedAt}), runs the command with the terminal's stdin/stdout/stderr, then ends the \
            activity with {status: succeeded|failed, exitStatus, duration} and exits with the \
            command's status (128+N when killed by signal N). If the daemon is unavailable or refuses, \
            the command still runs, with a warning: your work never waits on the island.

              island run --title "Nightly backup" -- rsync -a ~/ /mnt/backup/
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The title shown (default: the command).", valueName: "title")) var title: String?
    // Only what follows `--` is the command, so `island run --help` is this command's help.
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    mutating func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, e.g. island run -- make") }
    }

    func run() async throws {
        // Before the connection opens descriptors of its own.
        let inherited = ChildProcess.openDescriptors()
        let commandLine = command.map(Self.quoted).joined(separator: " ")
        let connection = global.producer(reconnectTimeout: .seconds(2))
        let started = Date()
        var activity: ActivitySnapshot?
        do {
            activity = try await connection.request(
                type: "Command",
                attributes: ["title": .string(title ?? commandLine), "command": .string(commandLine)],
                content: RawActivityContent(state: ["status": "running", "startedAt": .double(started.timeIntervalSince1970)]),
                ownerGone: .end).activity
        } catch let error as ActivityAuthorizationError {
            Output.warning("no Live Activity (\(error.name): \(error.description)); running the command anyway")
        }

        // Like a shell: Ctrl-C reaches the command through the process group, and island stays
        // to report how it ended. A SIGTERM or SIGHUP aimed at island alone (a service manager,
        // a closed terminal) is passed on to the command, so it is not left running orphaned.
        let child = Mutex<pid_t>(0)
        let watcher = SignalWatcher([SIGINT, SIGQUIT]) { _ in }
        // Signalled under the lock, which the wait takes before it reaps the command: a pid
        // is never signalled once it could belong to another process.
        let forwarder = SignalWatcher([SIGTERM, SIGHUP]) { number in
            child.withLock { pid in
                if pid > 0 { kill(pid, number) }
            }
        }
        let status: Int32
        do {
            let pid = try ChildProcess.spawn(command, passing: inherited)
            child.withLock { $0 = pid }
            status = await ChildProcess.wait(pid, beforeReaping: { child.withLock { $0 = 0 } })
        } catch {
            Output.error("island: \(error)\n")
            status = 127
        }
        _ = (watcher, forwarder)

        if let activity {
            let duration = Date().timeIntervalSince(started)
            let state: JSONObject = [
                "status": .string(status == 0 ? "succeeded" : "failed"), "exitStatus": .int(Int(status)),
                "startedAt": .double(started.timeIntervalSince1970), "duration": .double((duration * 1000).rounded() / 1000),
            ]
            do {
                let ended = try await connection.end(id: activity.id, content: RawActivityContent(state: state))
                if global.json { Output.json(.object(ended.json)) }
            } catch let error as ActivityAuthorizationError {
                Output.warning("could not end the Live Activity (\(error.name): \(error.description))")
            }
        }
        await connection.close()
        throw ExitCode(status)
    }

    static func quoted(_ argument: String) -> String {
        let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0) }
        return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
