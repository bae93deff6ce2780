import ArgumentParser
import Foundation
import OrderedJSON
import IslandKit
import OrderedCollections
import SelfWake

struct ProgressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "Show a command's progress as a Live Activity: run it after --, or read it from stdin.",
        discussion: """
            Looks in each line of the command's standard output (or of stdin) for a percentage \
            (42%, 42.5 %) or a count (3/4), and copies that output to stdout as it comes; a \
            carriage return ends a line too, as progress meters redraw theirs. Each one updates \
            the activity (type Progress, attributes {title}, state {value, total, status}), at \
            most once per 100 ms; status says "running", then the time left once the rate is \
            known ("12 min left").

            With -- COMMAND, island runs it (standard input and error are the terminal's) and \
            ends the activity with its result: {status: succeeded} on exit status 0, else \
            {status: failed, outcome: "Exit status 3" or "Killed by SIGTERM"}, and exits with \
            the command's status (128+N for signal N). Ctrl-C reaches the command as in a \
            shell; SIGTERM and SIGHUP sent to island are passed on to it.

            Reading stdin, island cannot know whether the command before the pipe succeeded: at \
            the end of input the activity ends {status: finished}, and island exits 0. Run the \
            command after -- instead, or use `set -o pipefail` so the script at least sees the \
            failure. On SIGINT or SIGTERM it ends {status: failed} and exits with 128 + the \
            signal's number.

              island progress --title "Backup" -- rsync -a --info=progress2 ~/ /mnt/backup/
              make 2>&1 | island progress --title "Build"
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("What is in progress (default: the command).", valueName: "title")) var title: String?
    @Option(help: ownerGoneHelp) var ownerGone: OwnerGoneOption = .end
    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp(
            "The command to run and follow, after --; without one, stdin is read.",
            valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty && title == nil {
            throw ValidationError("give --title when reading stdin, or the command to run after --, e.g. island progress -- make")
        }
    }

    enum Input: Sendable { case line(String), flush, endOfOutput, interrupted(Int32), exited(Termination) }

    /// How the activity's run ended, as far as island can know.
    enum Ending: Hashable, Sendable {
        /// Stdin closed: whoever wrote it may have failed, which island cannot see.
        case inputClosed
        /// Island got the signal while reading stdin.
        case interrupted(signal: Int32)
        /// The command island ran ended so.
        case command(Termination)

        /// What the final state says of it, after value and total. Without `island run`'s
        /// duration and start, the default layout would show an exit status twice, as words
        /// and as "Exit status: 3": the outcome alone says it (and island's own exit status).
        var stateMembers: JSONObject {
            switch self {
            case .inputClosed: return ["status": "finished"]
            case .interrupted(let signal):
                return ["status": "failed", "outcome": .string("Interrupted by \(Termination.name(ofSignal: signal))")]
            case .command(let termination):
                var members = termination.stateMembers
                members.removeValue(forKey: "exitStatus")
                return members
            }
        }
    }

    /// The progress a line reports, as (value, total): the last percentage or count in it.
    static func parse(_ line: String) -> (Double, Double)? {
        let percent = #/(\d+(?:\.\d+)?)\s*%/#
        let fraction = #/(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)/#
        if let match = line.matches(of: percent).last, let value = Double(match.output.1) {
            return (value, 100)
        }
        if let match = line.matches(of: fraction).last, let value = Double(match.output.1), let total = Double(match.output.2), total > 0 {
            return (value, total)
        }
        return nil
    }

    static func number(_ value: Double) -> JSON {
        value == value.rounded() && abs(value) < 1e15 ? .int(Int(value)) : .double(value)
    }

    static func state(_ progress: (Double, Double), status: String) -> JSONObject {
        ["value": number(progress.0), "total": number(progress.1), "status": .string(status)]
    }

    func run() async throws {
        // Before the connection opens descriptors of its own.
        let inherited = ChildProcess.openDescriptors()
        let title = title ?? command.map(Run.quoted).joined(separator: " ")
        let connection = global.producer(reconnectTimeout: .seconds(2))
        var activity: ActivitySnapshot?
        var current: (Double, Double) = (0, 100)
        var status = "running"
        do {
            activity = try await connection.request(
                type: "Progress", attributes: ["title": .string(title)],
                content: RawActivityContent(state: Self.state(current, status: status)),
                ownerGone: ownerGone.policy
            ).activity
        } catch let error as ActivityAuthorizationError {
            Output.warning("no Live Activity (\(global.sentence(error))); passing the output through anyway")
        }

        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        var signals: SignalWatch?
        if command.isEmpty {
            OutputCopy.start(from: 0) { continuation.yield($0.map(Input.line) ?? .endOfOutput) }
            // Handled here, not left to the default action, which a background job may have
            // inherited as "ignore": the activity must not outlive the command.
            signals = SignalWatch([SIGINT, SIGTERM]) { continuation.yield(.interrupted($0)) }
        } else {
            var pipe: [Int32] = [-1, -1]
            guard Glibc.pipe(&pipe) == 0 else {
                throw CLIFailure(status: 71, name: "System", message: "cannot make a pipe: \(String(cString: strerror(errno)))", json: global.json)
            }
            let (readEnd, writeEnd) = (pipe[0], pipe[1])
            // The command gets the write end as its standard output and nothing else of the
            // pipe: an inherited read end would keep it from ever seeing island go away.
            for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            OutputCopy.start(from: readEnd) { continuation.yield($0.map(Input.line) ?? .endOfOutput) }
            Task { [command] in
                // Island's write end closes once the command has it, so the end of the output
                // comes when the command (and whatever it started) closes its own.
                var spawned = false
                let termination = await ChildProcess.runInForeground(
                    command, passing: inherited, standardOutput: writeEnd,
                    started: {
                        close(writeEnd); spawned = true
                    })
                if !spawned { close(writeEnd) }
                continuation.yield(.exited(termination ?? .exited(127)))
            }
        }
        defer { _ = signals }

        let interval = Duration.milliseconds(100)
        let origin = ContinuousClock.now
        var estimate = ProgressEstimate()
        var lastSent: ContinuousClock.Instant?
        var pending: JSONObject?
        var flushScheduled = false

        func sendIfDue() async {
            guard let state = pending, let id = activity?.id else { return }
            let clock = ContinuousClock.now
            if let lastSent, clock - lastSent < interval {
                if !flushScheduled {
                    flushScheduled = true
                    let wait = interval - (clock - lastSent)
                    Task {
                        try? await Task.sleep(for: wait)
                        continuation.yield(.flush)
                    }
                }
                return
            }
            pending = nil
            lastSent = clock
            do {
                _ = try await connection.update(id: id, content: RawActivityContent(state: state))
            } catch {
                Output.warning("could not update the Live Activity: \(error)")
            }
        }

        var ending: Ending?
        var outputEnded = false
        var termination: Termination?
        loop: for await input in inputs {
            switch input {
            case .line(let line):
                guard let progress = Self.parse(line) else { continue }
                current = progress
                let elapsed = (ContinuousClock.now - origin) / .seconds(1)
                estimate.record(value: progress.0, total: progress.1, at: elapsed)
                status = ProgressEstimate.text(secondsLeft: estimate.secondsLeft) ?? "running"
                pending = Self.state(current, status: status)
                await sendIfDue()
            case .flush:
                flushScheduled = false
                await sendIfDue()
            case .endOfOutput:
                outputEnded = true
            case .exited(let ended):
                termination = ended
            case .interrupted(let signal):
                ending = .interrupted(signal: signal)
                break loop
            }
            if command.isEmpty, outputEnded {
                ending = .inputClosed
                break loop
            }
            if outputEnded, let termination {
                ending = .command(termination)
                break loop
            }
        }
        let final = ending ?? .inputClosed
        if let id = activity?.id {
            var state: JSONObject = ["value": Self.number(current.0), "total": Self.number(current.1)]
            for (key, value) in final.stateMembers { state[key] = value }
            do {
                _ = try await connection.end(id: id, content: RawActivityContent(state: state))
            } catch {
                Output.warning("could not end the Live Activity: \(error)")
            }
        }
        await connection.close()
        switch final {
        case .inputClosed: return
        case .interrupted(let signal): throw ExitCode(128 + signal)
        case .command(let termination): throw ExitCode(termination.shellStatus)
        }
    }
}

/// Copies a descriptor to standard output as it comes, on a thread of its own, and hands on
/// its lines for `island progress` to read.
enum OutputCopy {
    /// Calls `line` with each line, then with nil at the end of the input, or once standard
    /// output is closed (a pipe whose reader left): the descriptor is closed then, so the
    /// command writing to it learns of it as it would in a pipeline.
    static func start(from descriptor: Int32, line: @escaping @Sendable (String?) -> Void) {
        let thread = Thread {
            var lines = LineSplitter()
            var buffer = [UInt8](repeating: 0, count: 65536)
            reading: while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                guard writeAll(buffer[..<count]) else { break reading }
                for text in lines.feed(buffer[..<count]) { line(text) }
            }
            if let last = lines.finish() { line(last) }
            if descriptor != 0 { close(descriptor) }
            line(nil)
        }
        thread.start()
    }

    /// Writes all of `bytes` to standard output; false once it is closed.
    private static func writeAll(_ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            rest = rest.dropFirst(written)
        }
        return true
    }
}

/// Splits bytes into lines ended by `\n`, `\r` or both, as text. A line longer than `limit`
/// bytes is dropped whole (nothing a progress meter writes is that long), so no input can
/// make island hold more.
struct LineSplitter: Sendable {
    var limit = 4096
    private var current: [UInt8] = []
    private var overlong = false

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if !overlong && !current.isEmpty { lines.append(String(decoding: current, as: UTF8.self)) }
                current.removeAll(keepingCapacity: true)
                overlong = false
            } else if !overlong {
                current.append(byte)
                if current.count > limit {
                    overlong = true
                    current.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }

    /// The last line, when the input did not end with a line break.
    mutating func finish() -> String? {
        defer { current.removeAll() }
        return overlong || current.isEmpty ? nil : String(decoding: current, as: UTF8.self)
    }
}
