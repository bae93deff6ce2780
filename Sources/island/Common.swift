import ArgumentParser
import Foundation
import IslandCore
import OrderedJSON
import IslandKit
import IslandPaths
import IslandPresenter
import IslandProtocol
import OrderedCollections
import SmallFiles
import VarlinkCore
import VarlinkNIO

/// The options every subcommand that talks to the daemon takes.
struct GlobalOptions: ParsableArguments {
    static let socketHelp = ArgumentHelp(
        "The daemon's socket.", discussion: "Default: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock.", valueName: "path")
    static let jsonHelp = ArgumentHelp("Machine-readable output: JSON (one object per line for streams).")

    @Option(help: socketHelp)
    var socket: String?

    @Option(help: ArgumentHelp("The app to act for (its .desktop file's name).", valueName: "id"))
    var app: String = RefusalSentences.defaultApp

    @Flag(help: jsonHelp)
    var json = false

    var socketPath: String { socket ?? IslandKit.defaultSocketPath() }

    /// A connection of the producer role for `app`. Calls wait at most a few seconds for a
    /// daemon that went away, so a script is never stuck.
    func producer(reconnectTimeout: Duration = .seconds(3)) -> IslandConnection {
        IslandConnection(configuration: .init(appID: app, socketPath: socketPath, reconnectTimeout: reconnectTimeout))
    }

    /// A raw Varlink connection, for the extension and admin roles.
    func raw() async throws(CLIFailure) -> VarlinkClient {
        do {
            return try await VarlinkClient.connect(unixPath: socketPath)
        } catch {
            throw CLIFailure(.daemonUnavailable(socketPath: socketPath, reason: ConnectFailure.describe("\(error)", socket: socketPath)), json: json)
        }
    }

    /// Runs `body` on a raw connection and closes it afterwards (awaited), whether `body`
    /// returned or threw.
    func withRaw<T>(_ body: (VarlinkClient) async throws(CLIFailure) -> T) async throws(CLIFailure) -> T {
        let client = try await raw()
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    /// Calls a method on a raw connection, mapping refusals.
    func call(_ client: VarlinkClient, _ method: String, _ parameters: JSONObject) async throws(CLIFailure) -> JSONObject {
        do {
            return try await client.call(method, parameters)
        } catch let error as VarlinkError {
            throw CLIFailure(ActivityAuthorizationError(error), json: json, app: app)
        } catch {
            throw CLIFailure(.daemonUnavailable(socketPath: socketPath, reason: "the connection closed: \(error)"), json: json)
        }
    }

    /// `reply` read as its interface says (`AdminReplies.Status.init`); a reply that is not
    /// ends the command, saying what differs: this island speaks another version of the interface.
    func read<Reply>(_ reply: JSONObject, as read: (JSONObject) throws(UnexpectedReply) -> Reply) throws(CLIFailure) -> Reply {
        do {
            return try read(reply)
        } catch {
            throw CLIFailure(
                status: ExitStatus.unexpectedReply, name: "UnexpectedReply", message: error.description,
                hint: "install islandd and island of the same release", json: json)
        }
    }

    /// What the CLI says of `error`, in a line (a warning's, where the command goes on).
    func sentence(_ error: ActivityAuthorizationError) -> String {
        "\(error.name): \(CLIFailure(error, json: false, app: app).message)"
    }

    /// Runs `body`, turning IslandKit's errors into the CLI's exit statuses.
    func perform<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ActivityAuthorizationError {
            throw CLIFailure(error, json: json, app: app)
        }
    }
}

/// The options of `island admin`'s commands: `GlobalOptions` without `--app`, which an admin
/// call would ignore (it acts for the user, not for an app: org.island.Admin takes none), so a
/// reader of `--help` is never offered an option that does nothing.
struct AdminOptions: ParsableArguments {
    @Option(help: GlobalOptions.socketHelp)
    var socket: String?

    @Flag(help: GlobalOptions.jsonHelp)
    var json = false

    /// Parsed only to be refused with the reason: a script that passes `--app` to an admin
    /// command expects it to mean something, and an unknown-option error would not say why.
    @Option(help: .hidden)
    var app: String?

    func validate() throws {
        if app != nil {
            throw ValidationError("admin commands act for the user, not for an app: --app means nothing here; leave it out")
        }
    }

    /// These options as the connection helpers take them, acting for the CLI's own app.
    var global: GlobalOptions {
        var options = GlobalOptions()
        options.socket = socket
        options.app = RefusalSentences.defaultApp
        options.json = json
        return options
    }
}

/// A failure that ends the command with a message and an exit status.
struct CLIFailure: Error {
    var status: Int32
    var name: String
    var message: String
    var hint: String?
    var parameters: JSONObject = [:]
    var json: Bool

    /// A refusal of a command acting for `app` (`--app`), said as `RefusalSentences` says it.
    init(_ error: ActivityAuthorizationError, json: Bool, app: String = RefusalSentences.defaultApp) {
        if case .daemonUnavailable = error {
            // How to start a daemon here, as IslandKit's suggestion says it, and the CLI's own
            // way to name another socket.
            self.init(
                status: ExitStatus.unavailable, name: error.name, message: error.description,
                hint: DaemonStartHint.current() + ", or pass the right --socket / $ISLAND_SOCKET", json: json)
            parameters = error.parameters
        } else {
            self.init(refusal: error.name, parameters: error.parameters, json: json, app: app)
        }
    }

    /// The daemon's refusal `name` with its `parameters`.
    init(refusal name: String, parameters: JSONObject, json: Bool, app: String = RefusalSentences.defaultApp) {
        status = ExitStatus.refused
        self.name = name
        self.parameters = parameters
        self.json = json
        let sentence = RefusalSentences.sentence(name: name, parameters: parameters, app: app)
        // A name this island does not know (a newer daemon's): its parameters as they came.
        message = sentence?.message ?? (parameters.isEmpty ? name : "\(name) \(JSON.object(parameters))")
        hint = sentence?.hint
    }

    init(status: Int32, name: String, message: String, hint: String? = nil, json: Bool) {
        self.status = status
        self.name = name
        self.message = message
        self.hint = hint
        self.json = json
    }

    static func usage(_ message: String, json: Bool = false) -> CLIFailure {
        CLIFailure(status: ExitStatus.usage, name: "Usage", message: message, json: json)
    }

    func report() {
        var text = "island: \(name): \(message)\n"
        if let hint { text += "  hint: \(hint)\n" }
        Output.error(text)
        if json {
            var object: JSONObject = ["error": .string(name), "parameters": .object(parameters), "message": .string(message)]
            if let hint { object["hint"] = .string(hint) }
            Output.json(.object(object))
        }
    }
}

/// Everything the CLI prints. Activities' types, states, attributes, URLs, layouts' texts and
/// the daemon's messages are other apps' text, so each line passes through
/// `TerminalText` here, the one place where it meets a terminal: no control character and no
/// bidi control in text, its grapheme clusters bounded (`TerminalText.display`), and none
/// raw in JSON (which keeps every character's meaning, escaped).
enum Output {
    static func line(_ text: String) {
        standardOutput(TerminalText.display(text) + "\n")
    }

    static func json(_ value: JSON) {
        standardOutput(TerminalText.sanitize(TerminalText.json(value.description)) + "\n")
    }

    /// Messages of one or more lines, on stderr.
    static func error(_ text: String) {
        writeAll(TerminalText.display(text, keepingNewlines: true), to: 2)
    }

    /// The CLI's own terminal control (a countdown rewriting its line), never producer text.
    static func control(_ sequence: String) {
        writeAll(sequence, to: 2)
    }

    /// Writes to standard output, or ends the command once nothing takes it. A reader that is
    /// gone (`island list | head -1`) ends it as it ends any Unix tool, by SIGPIPE, which this
    /// process otherwise ignores (its sockets report EPIPE instead): Foundation's `write`
    /// crashed with a backtrace. Any other failure (a full disk) is said, exit status 74.
    private static func standardOutput(_ text: String) {
        guard !writeAll(text, to: 1) else { return }
        let reason = errno
        if reason == EPIPE { endForAGoneReader() }
        writeAll("island: cannot write standard output: \(String(cString: strerror(reason)))\n", to: 2)
        exit(ExitStatus.outputFailed)
    }

    /// Ends island as a Unix tool ends once what reads its output is gone: by SIGPIPE.
    static func endForAGoneReader() -> Never {
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        exit(128 + SIGPIPE)
    }

    static func warning(_ text: String) {
        error("island: warning: \(text)\n")
    }
}

/// `--owner-gone`'s values: the wire's `ownerGone` policies.
enum OwnerGoneOption: String, CaseIterable, ExpressibleByArgument {
    case keep, end, stale

    var policy: ActivityOwnerGonePolicy {
        switch self {
        case .keep: .keep
        case .end: .end
        case .stale: .stale
        }
    }
}

/// `--owner-gone`, on every command that starts an activity.
let ownerGoneHelp = ArgumentHelp(
    "What happens to the activity once no island process of the app is connected: keep, end, or stale (after a grace period, 30 s by default).",
    discussion: """
        A script killed outright (kill -9, a closed session) leaves its activity as it was, "Copying 40%" \
        for hours, unless this says otherwise. end ends it once the app's last island process is gone: \
        for island start, as soon as it returns (unless something such as island watch stays connected). \
        stale marks it stale a grace period after the app's last island command, until the next \
        update: the policy for a script's island start, with a trap for the script's own exit (see \
        island start --help).
        """,
    valueName: "policy")

/// Refuses a number option that is not finite. JSON has no NaN or infinity: the writer sends
/// `null`, which the daemon takes as no value at all, so `--relevance nan` or `--stale-after inf`
/// was accepted and meant nothing.
func requireFinite(_ value: Double?, option: String) throws(ValidationError) {
    guard let value, !value.isFinite else { return }
    throw ValidationError("\(option) must be a finite number, not \(value)")
}

/// The most a command waits for answers from a broker: a day. A wait becomes a `Duration`,
/// which traps on a value that is not finite or too large (`island push --wait inf` crashed).
let maximumWaitSeconds: Double = 86_400

/// Refuses a wait that is not between 0 and `maximumWaitSeconds`.
func requireWait(_ value: Double, option: String = "--wait") throws(ValidationError) {
    guard value >= 0, value <= maximumWaitSeconds else {
        throw ValidationError("\(option) must be seconds from 0 to \(Int(maximumWaitSeconds)), not \(value)")
    }
}

/// The text of a file named on the command line, at most `limit` bytes. Read as a stream
/// (`readSmallFile`), so a pipe works as the user means it (`island preview /dev/stdin`,
/// `--password-file <(pass show broker)`): Foundation's `String(contentsOfFile:)` refused
/// every pipe and device as "You don't have permission", and read a regular file whole.
func readNamedFile(_ path: String, limit: Int, what: String, json: Bool) throws(CLIFailure) -> String {
    let bytes: [UInt8]
    do {
        bytes = try readSmallFile(path, limit: limit)
    } catch {
        throw CLIFailure.usage("cannot read \(what) \(path): \(error)", json: json)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw CLIFailure.usage("cannot read \(what) \(path): not UTF-8 text", json: json)
    }
    return text
}

/// The most of a layout file the CLI reads: far more than any layout the daemon takes.
let maximumLayoutFileBytes = 1 << 20

/// Parses a JSON object given on the command line.
func parseObject(_ text: String?, option: String, json: Bool) throws(CLIFailure) -> JSONObject {
    guard let text else { return [:] }
    do {
        guard let object = try JSONParser.parse(text).objectValue else {
            throw CLIFailure.usage("\(option) must be a JSON object, like '{\"key\": \"value\"}'", json: json)
        }
        return object
    } catch let error as JSONParseError {
        throw CLIFailure.usage("\(option) is not valid JSON: \(error)", json: json)
    } catch let error as CLIFailure {
        throw error
    } catch {
        throw CLIFailure.usage("\(option): \(error)", json: json)
    }
}

/// A duration given on the command line, read as the configuration reads them (`25m`,
/// `25min`, `1h30m`, `1h 30min`, `90s`, `1.5h`, or plain seconds); nil when negative or past
/// what a timer shows (`99999999999h`), which no clock could count down.
func parseDuration(_ text: String) -> Double? {
    guard let seconds = TimeSpan.seconds(text), seconds >= 0, seconds <= RenderedTimer.maximumSeconds else { return nil }
    return seconds
}

/// `1:05:03` or `4:09`, as a countdown shows it.
func formatClock(_ seconds: Double) -> String {
    RenderedTimer(from: nil, to: nil, countsDown: true, seconds: seconds).text
}

var now: Double { Date().timeIntervalSince1970 }

/// What the CLI says of a state accepted beyond the activity's update rate: when it is
/// delivered, for a person and for a script (`deliverAt`, seconds since 1970).
func throttledLine(deliverAt: Double, activity: String? = nil) -> String {
    "throttled\(activity.map { " " + $0 } ?? ""), delivered at \(Date(timeIntervalSince1970: deliverAt).formatted(.iso8601)) (deliverAt \(deliverAt))"
}

/// What the CLI says of an alert that was not shown, by the reason the daemon gave (nil from a
/// daemon that gave none, which only ever suppressed alerts for the budget).
func alertSuppressedLine(reason: String?) -> String {
    switch reason {
    case ProducerNames.Delivery.AlertSuppressedReason.focus: "alert suppressed: Do Not Disturb is on"
    case ProducerNames.Delivery.AlertSuppressedReason.pending: "alert not shown: the activity has not started (its start shows its own alert)"
    default: "alert suppressed: the app's alert budget is spent"
    }
}

/// One line describing an activity.
func describe(_ activity: ActivitySnapshot) -> String {
    var text = "\(activity.id) \(activity.type) \(activity.state.rawValue)"
    if let reason = activity.endReason { text += " (\(reason.rawValue))" }
    text += " " + JSON.object(activity.deliveredContent.state).description
    return text
}
