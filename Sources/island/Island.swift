import ArgumentParser
import Foundation

/// `island`: the command line of Island, an app of its own (`org.island.cli`) that starts,
/// updates and ends Live Activities, plus the extension, admin and preview tools.
struct Island: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "island",
        abstract: "Show Live Activities in the Island from the command line and from scripts.",
        discussion: """
            Talks to the Island daemon (islandd) over its Varlink socket. By default it acts as the \
            app org.island.cli, whose desktop entry (org.island.cli.desktop) allows Live Activities \
            and frequent updates, so scripts work out of the box.

            Common options of the commands that call islandd (all but preview, push and channel, \
            which do not), after the subcommand: --socket PATH (default $ISLAND_SOCKET, else \
            $XDG_RUNTIME_DIR/island/islandd.sock), --app ID (default org.island.cli), --json \
            (machine-readable output: one JSON object, or one per line for streams).

            Examples:
              island start Delivery --state '{"stage":"baking"}'
              island update ID --state '{"stage":"on the way"}'
              island end ID --dismiss immediate
              island run --title "Build" -- make -j8
              island timer 25m "Focus"
              make 2>&1 | island progress --title "Build"
              island preview layout.json --state '{"eta":5}' --mode compact --svg out.svg
              island push "$TOKEN" --state '{"stage":"on the way"}'   (as the app's server)

            Exit status:
              0    success
              1    the daemon refused the call; the error's name is printed with what to do
              2    usage error (bad arguments, options or JSON)
              69   the daemon is unavailable (not running, or the wrong socket); for push
                   and channel, the broker is (unreachable, or it did not acknowledge)
              74   standard output could not be written (a full disk); a reader that
                   is gone (island list | head -1) ends island by SIGPIPE instead
              75   island push heard no feedback from the device within --wait seconds
              76   the daemon's reply is not what its interface says (islandd and island
                   of different releases)
              130  island timer was interrupted
              island run and island progress -- COMMAND exit with the command's status
              (128+N when killed by signal N).
            """,
        // As every other program of the project answers it (islandd, the presenter, the
        // overlay, the bridge).
        version: "0.1.0",
        subcommands: [
            Start.self, Update.self, End.self, List.self, Watch.self, Auth.self,
            Run.self, TimerCommand.self, ProgressCommand.self,
            PushTokenCommand.self, PushToStartTokenCommand.self, PushCommand.self, ChannelCommand.self,
            ExtensionCommand.self, Admin.self, Preview.self,
        ]
    )
}

@main
enum Main {
    static func main() async {
        do {
            var command = try Island.parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let failure as CLIFailure {
            failure.report()
            Foundation.exit(failure.status)
        } catch {
            // Usage errors exit with 2, as most Unix tools do (ArgumentParser's default is 64).
            if Island.exitCode(for: error) == .validationFailure {
                Output.error(Island.fullMessage(for: error) + "\n")
                Foundation.exit(ExitStatus.usage)
            }
            Island.exit(withError: error)
        }
    }
}

enum ExitStatus {
    static let ok: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let unavailable: Int32 = 69
    /// Standard output could not be written (EX_IOERR): a full disk, say.
    static let outputFailed: Int32 = 74
    /// The daemon's reply is not what its interface says (EX_PROTOCOL).
    static let unexpectedReply: Int32 = 76
}
