import ArgumentParser
import Foundation
import OrderedJSON
import IslandKit
import IslandPresenter
import OrderedCollections
import IslandProtocol
import SelfWake

struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a Live Activity and print its id.",
        discussion: """
            TYPE names the activity's kind (its layout is looked up by it). Attributes are fixed for \
            the activity's life; the state changes with `island update`. With --key, starting again \
            with the same key returns the activity already started instead of a duplicate.

            In a script, say what becomes of the activity if the script is killed: --owner-gone \
            stale, and a trap for the script's own exit:
              id=$(island start Copy --attributes '{"title":"Copying"}' --owner-gone stale)
              trap 'island end "$id" 2>/dev/null' EXIT
              trap 'exit 130' INT; trap 'exit 143' TERM   # EXIT then runs too

            With --at, the activity is scheduled: `pending` until TIME (+10m, +1h 30min, or an \
            ISO 8601 date such as 2026-12-06T18:30:00Z; without a zone, local time), listed to \
            its app but shown by no presenter, then started with its alert, which --at requires \
            (--alert-title, and --alert-body if you like); a date already past is refused. It \
            counts against the start budget now.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity type, e.g. Delivery.") var type: String
    @Option(help: ArgumentHelp("The immutable attributes, a JSON object.", valueName: "json")) var attributes: String?
    @Option(help: ArgumentHelp("The initial state, a JSON object.", valueName: "json")) var state: String?
    @Option(help: ArgumentHelp("An idempotency key: a retry returns the same activity.", valueName: "key")) var key: String?
    // A score may be negative: what follows the option is its value, "-1" too.
    @Option(parsing: .unconditional, help: ArgumentHelp("The relevance score (higher shows first).", valueName: "n"))
    var relevance: Double = 0
    @Option(help: ArgumentHelp("Mark the activity stale after this many seconds.", valueName: "seconds")) var staleAfter: Double?
    @Option(help: ownerGoneHelp) var ownerGone: OwnerGoneOption = .keep
    @Flag(help: "Give the activity a push token, printed after its id, for its server (island push).") var pushToken = false
    @Option(help: ArgumentHelp("Start at TIME: +10m, +1h 30min, or an ISO 8601 date; needs an alert.", valueName: "time")) var at: String?
    @Option(help: ArgumentHelp("With --at: the alert shown as it starts, its title.", valueName: "title")) var alertTitle: String?
    @Option(help: ArgumentHelp("The start alert's body.", valueName: "body")) var alertBody: String?

    func validate() throws {
        if alertBody != nil && alertTitle == nil { throw ValidationError("--alert-body needs --alert-title") }
        if alertTitle != nil && at == nil { throw ValidationError("--alert-title is the alert of a scheduled start: give --at too") }
        // The daemon refuses both as InvalidChannel, whose hint (an id `channel create` printed)
        // cannot help: the id is fine, the pairing is not (PROTOCOL.md, channels).
        if channel != nil && pushToken {
            throw ValidationError("--channel or --push-token: an activity listens to its app's channel or has a push token of its own, not both")
        }
        try requireFinite(relevance, option: "--relevance")
        try requireFinite(staleAfter, option: "--stale-after")
    }
    @Option(help: ArgumentHelp("Listen to this broadcast channel of the app (island channel create).", valueName: "id"))
    var channel: String?

    func run() async throws {
        let attributes = try parseObject(attributes, option: "--attributes", json: global.json)
        let state = try parseObject(state, option: "--state", json: global.json)
        var start: Double?
        if let at {
            switch StartTime.scheduled(at, now: now) {
            case .success(let date): start = date
            case .failure(let refusal): throw CLIFailure.usage(refusal.message(option: "--at", text: at), json: global.json)
            }
        }
        let connection = global.producer()
        let content = RawActivityContent(state: state, staleDate: staleAfter.map { now + $0 }, relevanceScore: relevance)
        let alert = alertTitle.map { AlertConfiguration(title: $0, body: alertBody ?? "") }
        let (activity, _) = try await global.perform {
            try await connection.request(
                type: type, attributes: attributes, content: content, key: key, ownerGone: ownerGone.policy,
                pushToken: pushToken, start: start, alert: alert, channel: channel)
        }
        if global.json {
            Output.json(.object(activity.json))
        } else {
            Output.line(activity.pushToken.map { "\(activity.id) \($0)" } ?? activity.id)
        }
        await connection.close()
    }
}

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace an activity's state.",
        discussion: """
            The content is replaced as a whole, as in ActivityKit: give --relevance and \
            --stale-after again if they should stay. Prints nothing when presenters get the state now. When the activity's update rate is \
            exceeded, the state is still accepted, and `throttled, delivered at TIME` says when \
            presenters get it (later updates coalesce, the latest wins).
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id.") var id: String
    @Option(help: ArgumentHelp("The new state, a JSON object.", valueName: "json")) var state: String
    @Option(help: ArgumentHelp("Alert: expand the activity briefly with this title.", valueName: "title")) var alertTitle: String?
    @Option(help: ArgumentHelp("The alert's body.", valueName: "body")) var alertBody: String?
    @Option(help: ArgumentHelp("The update's time (epoch seconds); older updates are refused.", valueName: "t")) var timestamp: Double?
    // A score may be negative: what follows the option is its value, "-1" too.
    @Option(parsing: .unconditional, help: ArgumentHelp("The relevance score.", valueName: "n")) var relevance: Double = 0
    @Option(help: ArgumentHelp("Mark the activity stale after this many seconds.", valueName: "seconds")) var staleAfter: Double?

    func validate() throws {
        if alertBody != nil && alertTitle == nil { throw ValidationError("--alert-body needs --alert-title") }
        try requireFinite(relevance, option: "--relevance")
        try requireFinite(staleAfter, option: "--stale-after")
        try requireFinite(timestamp, option: "--timestamp")
    }

    func run() async throws {
        let state = try parseObject(state, option: "--state", json: global.json)
        let connection = global.producer()
        let alert = alertTitle.map { AlertConfiguration(title: $0, body: alertBody ?? "") }
        let content = RawActivityContent(state: state, staleDate: staleAfter.map { now + $0 }, relevanceScore: relevance)
        let (activity, delivery) = try await global.perform {
            try await connection.update(id: id, content: content, alert: alert, timestamp: timestamp)
        }
        if global.json {
            // The reply's members, as the daemon sent them.
            typealias Delivery = ProducerNames.Delivery
            var deliveryJSON: JSONObject = [
                Delivery.throttled: .bool(delivery.throttled), Delivery.deliverAt: .double(delivery.deliverAt.timeIntervalSince1970),
                Delivery.alerted: .bool(delivery.alerted), Delivery.alertSuppressed: .bool(delivery.alertSuppressed),
            ]
            if let reason = delivery.alertSuppressedReason { deliveryJSON[Delivery.alertSuppressedReason] = .string(reason.rawValue) }
            Output.json([ProducerNames.Update.activity: .object(activity.json), ProducerNames.Update.delivery: .object(deliveryJSON)])
        } else {
            if delivery.throttled {
                Output.line(throttledLine(deliverAt: delivery.deliverAt.timeIntervalSince1970))
            }
            if delivery.alertSuppressed { Output.line(alertSuppressedLine(reason: delivery.alertSuppressedReason?.rawValue)) }
        }
        await connection.close()
    }
}

struct End: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "End an activity.",
        discussion: """
            --dismiss says when it leaves the lock screen: `default` (up to 4 hours), `immediate`, \
            or a time span from now such as 90 (seconds), 5m or 1h 30min. An activity already \
            ended can be ended again: its --dismiss (counted from when it first ended) and \
            --state replace the ones it ended with; --dismiss immediate takes it down.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id.") var id: String
    @Option(help: ArgumentHelp("The final state, a JSON object.", valueName: "json")) var state: String?
    @Option(help: ArgumentHelp("default, immediate, or a time span from now.", valueName: "policy")) var dismiss: String = "default"

    func policy() throws(CLIFailure) -> ActivityUIDismissalPolicy {
        switch dismiss {
        case "default": return .default  // not Island's wire: the values of the CLI's --dismiss
        case "immediate": return .immediate  // not Island's wire: the values of the CLI's --dismiss
        default:
            guard let seconds = parseDuration(dismiss) else {
                throw CLIFailure.usage("--dismiss must be default, immediate or a time span from now (90, 5m, 1h 30min), not \(dismiss)", json: global.json)
            }
            return .after(Date(timeIntervalSinceNow: seconds))
        }
    }

    func run() async throws {
        let content = try state.map { RawActivityContent(state: try parseObject($0, option: "--state", json: global.json)) }
        let policy = try policy()
        let connection = global.producer()
        let activity = try await global.perform { try await connection.end(id: id, content: content, dismissalPolicy: policy) }
        if global.json { Output.json(.object(activity.json)) }
        await connection.close()
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the app's activities.")

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Only activities of this type.", valueName: "type")) var type: String?
    @Option(parsing: .upToNextOption, help: ArgumentHelp("Only activities in these states (pending active stale ended dismissed).", valueName: "state"))
    var state: [String] = []

    func run() async throws {
        var states: [ActivityState]?
        if !state.isEmpty {
            states = try state.map { name throws(CLIFailure) in
                guard let state = ActivityState(rawValue: name) else {
                    throw CLIFailure.usage("unknown state \(name); states are pending, active, stale, ended, dismissed", json: global.json)
                }
                return state
            }
        }
        let connection = global.producer()
        let activities = try await global.perform { try await connection.list(type: type, states: states) }
        await connection.close()
        if global.json {
            Output.json(.array(activities.map { .object($0.json) }))
            return
        }
        if activities.isEmpty {
            Output.line("no activities")
            return
        }
        var rows = [["ID", "TYPE", "STATE", "STARTED", "CONTENT"]]
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for activity in activities {
            var state = activity.state.rawValue
            if let reason = activity.endReason { state += " (\(reason.rawValue))" }
            var content = JSON.object(activity.deliveredContent.state).description
            if content.count > 60 { content = String(content.prefix(59)) + "…" }
            rows.append([
                activity.id, activity.type, state,
                formatter.string(from: Date(timeIntervalSince1970: Self.started(activity))), content,
            ])
        }
        printTable(rows)
    }

    /// The STARTED column: when the activity started, or for a pending one when it will. A
    /// scheduled activity starts at its `start`, not when it was requested (`createdAt`), and
    /// one whose date had passed when it was requested started then.
    static func started(_ activity: ActivitySnapshot) -> Double {
        activity.start.map { max($0, activity.createdAt) } ?? activity.createdAt
    }
}

func printTable(_ rows: [[String]]) {
    // Cleaned before measuring, so the columns line up with what is printed.
    let rows = rows.map { $0.map { TerminalText.display($0) } }
    guard let first = rows.first else { return }
    var widths = first.map(\.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    for row in rows {
        let cells = row.enumerated().map { i, cell in
            i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
        }
        Output.line(cells.joined(separator: "  "))
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the app's activity events as they happen (Ctrl-C to stop).",
        discussion: """
            One line per event; JSON lines with --json. Survives a daemon restart (a `resync` event \
            per activity follows it). Ends, by SIGPIPE, as soon as what reads its output is gone \
            (island watch | grep -m1 ended), not at its next event.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Only events of these activities.") var ids: [String] = []

    func run() async throws {
        let interruption = SignalWatch.exitingOnInterrupt()
        defer { _ = interruption }
        // `island watch | grep -m1 ended`: once grep is gone, watch ends then, not at the next
        // event's write, which may not come for hours (and holds its connection meanwhile).
        whenStandardOutputCloses { Output.endForAGoneReader() }
        let connection = global.producer(reconnectTimeout: .seconds(30))
        let events = try await global.perform { try await connection.events() }
        let wanted = Set(ids)
        for await event in events {
            if !wanted.isEmpty {
                guard let id = event.activity?.id, wanted.contains(id) else { continue }
            }
            if global.json {
                Output.json(.object(event.json))
                continue
            }
            let time = Date().formatted(date: .omitted, time: .standard)
            switch event.kind {
            case .state, .content, .resync:
                if let activity = event.activity { Output.line("\(time) \(event.kind.rawValue) \(describe(activity))") }
            case .tap:
                Output.line("\(time) tap \(event.activity?.id ?? "-") \(event.url ?? "")")
            case .button:
                Output.line("\(time) button \(event.activity?.id ?? "-") \(event.action ?? "")")
            case .authorization:
                if let info = event.authorization {
                    Output.line("\(time) authorization \(info.app) enabled=\(info.enabled) frequentUpdates=\(info.frequentUpdates)")
                }
            case .pushToken:
                Output.line("\(time) pushToken \(event.activity?.id ?? "-") \(event.pushToken ?? "")")
            case .pushToStartToken:
                Output.line("\(time) pushToStartToken \(event.type ?? "-") \(event.pushToken ?? "")")
            case .focus:
                if let focus = event.focus {
                    Output.line("\(time) focus \(Admin.describe(focus: focus.isOn, since: focus.since.map(Date.init(timeIntervalSince1970:))))")
                }
            }
        }
    }
}

struct Auth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show whether the app may show Live Activities, with its limits and budgets.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let connection = global.producer()
        let info = try await global.perform { try await connection.authorizationInfo() }
        await connection.close()
        if global.json {
            Output.json(.object(info.json))
            return
        }
        Output.line("app:              \(info.app)")
        Output.line("enabled:          \(info.enabled ? "yes" : "no")")
        Output.line("frequent updates: \(info.frequentUpdates ? "yes" : "no")")
        Output.line("activities:       \(info.activities) (all apps: \(info.globalActivities))")
        Output.line("starts left:      \(info.remainingStarts)")
        Output.line("alerts left:      \(info.remainingAlerts)")
        for (key, value) in info.limits { Output.line("limit \(key): \(value)") }
    }
}

struct PushTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-token",
        abstract: "Print an activity's push token, for its server (made when it has none).",
        discussion: """
            The token is the MQTT topic the app's server publishes the activity's updates to \
            (see `island push`). --rotate replaces it: the old token stops working at once. \
            Refused with PushUnavailable when islandd has no [Push] broker.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id.") var id: String
    @Flag(help: "Replace the token with a new one.") var rotate = false

    func run() async throws {
        let connection = global.producer()
        let token = try await global.perform { try await connection.pushToken(id: id, rotate: rotate) }
        if global.json { Output.json(["pushToken": .string(token)]) } else { Output.line(token) }
        await connection.close()
    }
}

struct PushToStartTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-to-start-token",
        abstract: "Print the app's push-to-start token for an activity type (made when there is none).",
        discussion: """
            With it the app's server starts activities of TYPE (`island push TOKEN --event start`). \
            --rotate replaces it: the old token stops working at once.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity type.") var type: String
    @Flag(help: "Replace the token with a new one.") var rotate = false

    func run() async throws {
        let connection = global.producer()
        let token = try await global.perform { try await connection.pushToStartToken(type: type, rotate: rotate) }
        if global.json { Output.json(["pushToken": .string(token)]) } else { Output.line(token) }
        await connection.close()
    }
}
