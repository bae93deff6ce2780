import ArgumentParser
import Foundation
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
            command's status (128+N when killed by signal N); a failure adds outcome ("Exit status \
            3", "Killed by SIGTERM"), which the card shows. Ctrl-C reaches the command \
            as in a shell; SIGTERM and SIGHUP sent to island are passed on to it. If island itself \
            is killed outright, --owner-gone end (the default here) ends the activity. If the \
            daemon is unavailable or refuses, the command still runs, with a warning: your work \
            never waits on the island.

              island run --title "Nightly backup" -- rsync -a ~/ /mnt/backup/
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The title shown (default: the command).", valueName: "title")) var title: String?
    @Option(help: ownerGoneHelp) var ownerGone: OwnerGoneOption = .end
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
                ownerGone: ownerGone.policy
            ).activity
        } catch let error as ActivityAuthorizationError {
            Output.warning("no Live Activity (\(global.sentence(error))); running the command anyway")
        }

        // 127, as a shell says of a command it cannot start.
        let termination = await ChildProcess.runInForeground(command, passing: inherited) ?? .exited(127)

        if let activity {
            let duration = Date().timeIntervalSince(started)
            var state = termination.stateMembers
            state["startedAt"] = .double(started.timeIntervalSince1970)
            state["duration"] = .double((duration * 1000).rounded() / 1000)
            do {
                let ended = try await connection.end(id: activity.id, content: RawActivityContent(state: state))
                if global.json { Output.json(.object(ended.json)) }
            } catch let error as ActivityAuthorizationError {
                Output.warning("could not end the Live Activity (\(global.sentence(error)))")
            }
        }
        await connection.close()
        throw ExitCode(termination.shellStatus)
    }

    static func quoted(_ argument: String) -> String {
        let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0) }
        return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
