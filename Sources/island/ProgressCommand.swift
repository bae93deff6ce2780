import ArgumentParser
import Foundation
import OrderedJSON
import IslandKit
import OrderedCollections

struct ProgressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "Show the progress read from stdin as a Live Activity.",
        discussion: """
            Copies stdin to stdout and looks in each line for a percentage (42%, 42.5 %) or a count \
            (3/4). Each one updates the activity (type Progress, attributes {title}, state {value, \
            total}), at most once per 100 ms. When stdin closes, the activity ends with \
            {value, total, status: succeeded}; on SIGINT or SIGTERM it ends with status failed, \
            and the command exits with 128 + the signal's number.

              make 2>&1 | island progress --title "Build"
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("What is in progress.", valueName: "title")) var title: String

    enum Input: Sendable { case line(String), flush, end, interrupted(Int32) }

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

    func run() async throws {
        let connection = global.producer(reconnectTimeout: .seconds(2))
        var activity: ActivitySnapshot?
        var current: (Double, Double) = (0, 100)
        func state(_ progress: (Double, Double)) -> JSONObject {
            ["value": Self.number(progress.0), "total": Self.number(progress.1)]
        }
        do {
            activity = try await connection.request(type: "Progress", attributes: ["title": .string(title)],
                                                     content: RawActivityContent(state: state(current)), ownerGone: .end).activity
        } catch let error as ActivityAuthorizationError {
            Output.warning("no Live Activity (\(error.name): \(error.description)); passing the input through anyway")
        }

        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        Task {
            for await line in StandardInput.lines() { continuation.yield(.line(line)) }
            continuation.yield(.end)
        }
        // Handled here, not left to the default action, which a background job may have
        // inherited as "ignore": the activity must not outlive the command.
        let signals = SignalWatcher([SIGINT, SIGTERM]) { continuation.yield(.interrupted($0)) }
        defer { _ = signals }
        var interruption: Int32?
        let interval = Duration.milliseconds(100)
        var lastSent: ContinuousClock.Instant?
        var pending: (Double, Double)?
        var flushScheduled = false

        func sendIfDue() async {
            guard let progress = pending, let id = activity?.id else { return }
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
                _ = try await connection.update(id: id, content: RawActivityContent(state: state(progress)))
            } catch {
                Output.warning("could not update the Live Activity: \(error)")
            }
        }

        loop: for await input in inputs {
            switch input {
            case .line(let line):
                Output.passthrough(line)
                if let progress = Self.parse(line) {
                    current = progress
                    pending = progress
                    await sendIfDue()
                }
            case .flush:
                flushScheduled = false
                await sendIfDue()
            case .end:
                break loop
            case .interrupted(let signal):
                interruption = signal
                break loop
            }
        }
        if let id = activity?.id {
            var final = state(current)
            final["status"] = interruption == nil ? "succeeded" : "failed"
            do {
                _ = try await connection.end(id: id, content: RawActivityContent(state: final))
            } catch {
                Output.warning("could not end the Live Activity: \(error)")
            }
        }
        await connection.close()
        if let interruption { throw ExitCode(128 + interruption) }
    }
}
