import ArgumentParser
import Foundation
import OrderedJSON
import IslandKit
import OrderedCollections
import SelfWake

struct TimerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timer",
        abstract: "Count down in the foreground with a Live Activity.",
        discussion: """
            DURATION is like 25m, 1h30m, 90s or 90 (seconds). The activity has type Timer, \
            attributes {title, duration} and state {endsAt, paused: false}; presenters count down \
            themselves, so nothing is sent every second. The remaining time is printed to stderr \
            each second. When stdin is a terminal, p then Enter pauses (state {paused: true, \
            remaining}) and resumes. At zero the activity ends with {done: true}; Ctrl-C ends it \
            and removes it at once (exit status 130).

              island timer 25m "Focus"
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "How long, e.g. 25m or 1h 30min.") var duration: String
    @Argument(help: "What the timer is for.") var title: String = "Timer"

    enum Input: Sendable { case tick, toggle, interrupt }

    func run() async throws {
        guard let seconds = parseDuration(duration), seconds > 0 else {
            throw CLIFailure.usage("DURATION must be a time span like 25m, 1h 30min, 90s or 90, not \(duration)", json: global.json)
        }
        let connection = global.producer(reconnectTimeout: .seconds(2))
        var endsAt = now + seconds
        var activity: ActivitySnapshot?
        do {
            activity = try await connection.request(
                type: "Timer", attributes: ["title": .string(title), "duration": .double(seconds)],
                content: RawActivityContent(state: ["endsAt": .double(endsAt), "paused": false]), ownerGone: .end
            ).activity
            if let activity { if global.json { Output.json(.object(activity.json)) } else { Output.line(activity.id) } }
        } catch let error as ActivityAuthorizationError {
            if case .daemonUnavailable = error {
                Output.warning("no Live Activity (\(error.description)); counting down anyway")
            } else {
                throw CLIFailure(error, json: global.json, app: global.app)
            }
        }

        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                continuation.yield(.tick)
            }
        }
        defer { ticker.cancel() }
        let signals = SignalWatch([SIGINT, SIGTERM]) { _ in continuation.yield(.interrupt) }
        defer { _ = signals }
        let interactive = isatty(0) == 1
        if interactive {
            Task {
                for await line in StandardInput.lines() where line.trimmingCharacters(in: .whitespaces) == "p" {
                    continuation.yield(.toggle)
                }
            }
            Output.error("p + Enter pauses and resumes; Ctrl-C stops.\n")
        }

        let toTerminal = isatty(2) == 1
        var paused = false
        var remaining = seconds
        var lastShown = -1
        func show(_ value: Double, suffix: String = "") {
            let whole = Int(value.rounded(.up))
            guard whole != lastShown || !suffix.isEmpty else { return }
            lastShown = whole
            let text = "\(title) \(formatClock(value))\(suffix)"
            if toTerminal { Output.control("\r\u{1B}[K") }
            Output.error(toTerminal ? text : text + "\n")
        }
        func send(_ state: JSONObject) async {
            guard let activity else { return }
            do {
                _ = try await connection.update(id: activity.id, content: RawActivityContent(state: state))
            } catch {
                Output.warning("could not update the Live Activity: \(error)")
            }
        }
        func end(_ state: JSONObject, _ policy: ActivityUIDismissalPolicy) async {
            if toTerminal { Output.error("\n") }
            guard let activity else { return }
            do {
                _ = try await connection.end(id: activity.id, content: RawActivityContent(state: state), dismissalPolicy: policy)
            } catch {
                Output.warning("could not end the Live Activity: \(error)")
            }
        }

        show(remaining)
        for await input in inputs {
            switch input {
            case .tick:
                guard !paused else { continue }
                remaining = endsAt - now
                if remaining <= 0 {
                    show(0, suffix: " done")
                    await end(["endsAt": .double(endsAt), "paused": false, "done": true], .default)
                    await connection.close()
                    return
                }
                show(remaining)
            case .toggle:
                if paused {
                    paused = false
                    endsAt = now + remaining
                    show(remaining, suffix: " resumed")
                    await send(["endsAt": .double(endsAt), "paused": false])
                } else {
                    paused = true
                    remaining = max(0, endsAt - now)
                    show(remaining, suffix: " paused")
                    await send(["paused": true, "remaining": .double((remaining * 10).rounded() / 10)])
                }
            case .interrupt:
                let left = paused ? remaining : max(0, endsAt - now)
                await end(
                    ["endsAt": .double(endsAt), "paused": .bool(paused), "remaining": .double((left * 10).rounded() / 10), "cancelled": true],
                    .immediate)
                await connection.close()
                throw ExitCode(130)
            }
        }
    }
}
