import ArgumentParser
import Foundation
import IslandCore
import OrderedJSON
import MQTT
import OrderedCollections
import Synchronization

/// `island push`: what an app's server does, from a shell — publish an APNs-shaped payload
/// to a push token through the broker, and print what the device made of it (its feedback).
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Update, end or start a Live Activity through the MQTT broker, as an app's server does.",
        discussion: """
            TOKEN is an activity's push token (or a push-to-start token, with --event start), as \
            the app got it: the token's text (island/DEVICE/APP/SECRET, which is the MQTT topic) \
            or its bytes in hexadecimal, as Apple's push tokens are sent to servers.

            The payload is APNs' Live Activity payload ({"aps": {"timestamp", "event", \
            "content-state", …}}); the device applies it as a local update of the app and \
            publishes the outcome on the token's feedback topic (named by a hash of its \
            secret), which is printed: applied, throttled (with \
            when presenters get it), refused (with the error's name) or, for a token that \
            no longer works (its activity was dismissed, or the token rotated), revoked. \
            --wait 0 publishes without waiting for it.

            The broker's credentials are the backend's, not the device's: --username with \
            --password-file, or a client certificate (--cert, --key). Defaults come from \
            $ISLAND_PUSH_BROKER, $ISLAND_PUSH_CAFILE, $ISLAND_PUSH_USERNAME and \
            $ISLAND_PUSH_PASSWORD_FILE.

            Examples:
              island push "$TOKEN" --state '{"stage":"on the way"}'
              island push "$TOKEN" --event end --state '{"stage":"delivered"}' \\
                  --dismissal-date now
              island push "$START_TOKEN" --event start --type Delivery \\
                  --attributes '{"order":42}' --state '{"stage":"ordered"}' \\
                  --input-push-token

            Exit status: 0 applied or throttled, 1 refused or revoked, 2 usage, 69 the broker could not be \
            reached, 75 no feedback within --wait seconds.
            """)

    @Argument(help: "The push token.") var token: String
    @Option(help: ArgumentHelp("start, update or end.", valueName: "event")) var event: String = "update"
    @Option(help: ArgumentHelp("The content state, a JSON object (required but for end).", valueName: "json")) var state: String?
    @Option(help: ArgumentHelp("The push's time, epoch seconds (default: now); older pushes are refused.", valueName: "t"))
    var timestamp: Double?
    @Option(help: ArgumentHelp("Mark the activity stale at this time (epoch seconds).", valueName: "t")) var staleDate: Double?
    // A score may be negative: what follows the option is its value, "-1" too.
    @Option(parsing: .unconditional, help: ArgumentHelp("The relevance score.", valueName: "n")) var relevance: Double?
    @Option(help: ArgumentHelp("Alert title: presenters expand the activity briefly.", valueName: "title")) var alertTitle: String?
    @Option(help: ArgumentHelp("The alert's body.", valueName: "body")) var alertBody: String?
    @Option(help: ArgumentHelp("end: when it leaves the lock screen, epoch seconds or `now`.", valueName: "t")) var dismissalDate: String?
    @Option(help: ArgumentHelp("start: the activity's type.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("start: the activity's attributes, a JSON object.", valueName: "json")) var attributes: String?
    @Flag(help: "start: give the new activity a push token of its own (sent to the app and in the feedback).")
    var inputPushToken = false
    @Option(help: ArgumentHelp("start: schedule it for TIME (+10m, or an ISO 8601 date); needs --alert-title.", valueName: "time"))
    var startDate: String?
    @Option(
        help: ArgumentHelp(
            "10 (default: at once, counts against the app's push budget) or 5 (coalesced, spends nothing).",
            valueName: "n")) var priority: Int?
    @Option(
        help: ArgumentHelp(
            "Not applied after this time: epoch seconds, +DURATION, or 0 (now or never: kept for no offline device).",
            valueName: "t")) var expiration: String?
    @Option(help: ArgumentHelp("start: the new activity listens to this broadcast channel of the app.", valueName: "id"))
    var inputPushChannel: String?

    @OptionGroup var brokerOptions: BackendBrokerOptions
    @Option(help: ArgumentHelp("Seconds to wait for the device's feedback; 0 to not wait.", valueName: "seconds")) var wait: Double = 10
    @Flag(help: "Print the feedback as JSON.") var json = false

    func validate() throws {
        try requireFinite(timestamp, option: "--timestamp")
        try requireFinite(staleDate, option: "--stale-date")
        try requireFinite(relevance, option: "--relevance")
        try requireWait(wait)
    }

    func run() async throws {
        let token = try pushToken()
        let payload = try payload()
        let configuration = try brokerOptions.configuration(json: json)
        let feedback = Mutex<[UInt8]?>(nil)
        let ourTimestamp = payload.timestamp
        let connected = Mutex<MQTTConnectionEvent?>(nil)
        let client: MQTTClient
        do {
            client = try MQTTClient(
                configuration,
                onMessage: { message in
                    // Feedback for other pushes to the same token may come too: ours repeats our
                    // timestamp. A revoked token's notice, which the broker retains, answers any push.
                    guard let object = try? JSONParser.parse(message.payload).objectValue,
                        object["timestamp"]?.doubleValue == ourTimestamp || object["outcome"]?.stringValue == "revoked"
                    else { return }
                    feedback.withLock { if $0 == nil { $0 = message.payload } }
                }, onConnection: { event in connected.withLock { $0 = event } })
        } catch {
            throw CLIFailure.usage("\(error)", json: json)
        }
        if wait > 0 { try client.subscribe(token.feedbackTopic) }
        client.start()

        // One deadline for the connection and the publish's acknowledgement.
        let deadline = ContinuousClock.now + .seconds(max(wait, 5))
        try await Self.connection(of: client, to: configuration, until: deadline, lastEvent: connected, json: json)
        // After the SUBSCRIBE on the same connection, which the broker handles first: the
        // feedback cannot come before the subscription.
        let delivery = try delivery()
        try client.publish(token.topic, payload: payload.bytes, qos: delivery.qos, expiry: delivery.expiry)
        while client.unacknowledgedPublishes > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard wait > 0 else {
            await client.shutdown()
            return
        }
        let feedbackDeadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        while feedback.withLock({ $0 }) == nil && ContinuousClock.now < feedbackDeadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        await client.shutdown()
        guard let bytes = feedback.withLock({ $0 }), let object = try? JSONParser.parse(bytes).objectValue else {
            throw CLIFailure(
                status: 75, name: "NoFeedback",
                message: "no feedback on \(token.feedbackTopic) within \(wait) s",
                hint: "is the device's islandd connected to the broker, and does the token belong to it?", json: json)
        }
        try report(object)
    }

    /// Prints the outcome; a refusal fails the command with its error's name.
    private func report(_ object: JSONObject) throws {
        if json { Output.json(.object(object)) }
        switch object["outcome"]?.stringValue {
        case "applied":
            if !json {
                var line = "applied to \(object["activity"]?.stringValue ?? "?")"
                if let token = object["pushToken"]?.stringValue { line += ", push token \(token)" }
                Output.line(line)
            }
        case "throttled":
            if !json { Output.line(throttledLine(deliverAt: object["deliverAt"]?.doubleValue ?? 0)) }
        case "revoked":
            let reason = object["reason"]?.stringValue ?? "revoked"
            throw CLIFailure(
                status: ExitStatus.refused, name: "TokenRevoked",
                message: "the token was revoked (\(reason)): the device takes no pushes to it any more",
                hint: Self.revokedHint(reason: reason), json: false)
        default:
            let name = object["error"]?.stringValue ?? "Refused"
            let parameters = object["parameters"]?.objectValue ?? [:]
            throw CLIFailure(refusal: name, parameters: parameters, json: false)
        }
        if object["alertSuppressed"]?.boolValue == true, !json {
            Output.line(alertSuppressedLine(reason: object["alertSuppressedReason"]?.stringValue))
        }
    }

    // MARK: What to send

    private func pushToken() throws(CLIFailure) -> PushToken {
        var text = token
        // The hexadecimal form of the token's bytes, as Apple's tokens travel to servers.
        if text.count % 2 == 0, !text.contains("/"), text.allSatisfy(\.isHexDigit) {
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                bytes.append(UInt8(text[index..<next], radix: 16)!)
                index = next
            }
            text = String(decoding: bytes, as: UTF8.self)
        }
        do {
            return try PushToken(text)
        } catch {
            throw CLIFailure.usage("\(token) is not a push token: \(error.reason)", json: json)
        }
    }

    private func payload() throws(CLIFailure) -> (bytes: [UInt8], timestamp: Double) {
        guard let event = PushRequest.Event(rawValue: event) else {
            throw CLIFailure.usage("--event must be start, update or end, not \(self.event)", json: json)
        }
        if event != .end && state == nil { throw CLIFailure.usage("--state is required for --event \(event.rawValue)", json: json) }
        if event == .start && type == nil { throw CLIFailure.usage("--type is required for --event start", json: json) }
        if event != .start && (type != nil || attributes != nil || inputPushToken || inputPushChannel != nil) {
            throw CLIFailure.usage("--type, --attributes, --input-push-token and --input-push-channel go with --event start", json: json)
        }
        let timestamp = timestamp ?? now
        var aps = try PushCommand.apsFields(
            event: event, timestamp: timestamp, state: state, staleDate: staleDate, relevance: relevance, alertTitle: alertTitle,
            alertBody: alertBody, dismissalDate: dismissalDate, now: now, json: json)
        if let type {
            aps["attributes-type"] = .string(type)
            aps["attributes"] = .object(try parseObject(attributes, option: "--attributes", json: json))
        }
        if inputPushToken { aps["input-push-token"] = .int(1) }
        if let startDate {
            guard event == .start else { throw CLIFailure.usage("--start-date goes with --event start", json: json) }
            switch StartTime.scheduled(startDate, now: now) {
            case .success(let date): aps["start-date"] = .double(date)
            case .failure(let refusal): throw CLIFailure.usage(refusal.message(option: "--start-date", text: startDate), json: json)
            }
        }
        if let priority {
            guard priority == 10 || priority == 5 else { throw CLIFailure.usage("--priority must be 10 or 5, not \(priority)", json: json) }
            aps["priority"] = .int(priority)
        }
        if let expiration = try expirationDate() { aps["expiration"] = .double(expiration) }
        if let inputPushChannel { aps["input-push-channel"] = .string(inputPushChannel) }
        return (JSON.object(["aps": .object(aps)]).serialized(), timestamp)
    }

    /// `--expiration` as a date, 0 for now or never.
    private func expirationDate() throws(CLIFailure) -> Double? {
        try Self.expirationDate(expiration, now: now, json: json)
    }

    /// Waits until `client` (started) is connected to the broker, at most until `deadline`; past
    /// it, shuts the client down and fails with `BrokerUnavailable` and the last reason it gave.
    static func connection(
        of client: MQTTClient, to configuration: MQTTConfiguration, until deadline: ContinuousClock.Instant,
        lastEvent: borrowing Mutex<MQTTConnectionEvent?>, json: Bool
    ) async throws {
        while !client.isConnected {
            var reason = "no answer"
            if case .disconnected(let why, _)? = lastEvent.withLock({ $0 }) { reason = why }
            let noVersion5 = configuration.protocolVersion == .v5 && Self.refusesTheProtocolVersion(reason)
            guard ContinuousClock.now < deadline, !noVersion5 else {
                await client.shutdown()
                throw CLIFailure(
                    status: ExitStatus.unavailable, name: "BrokerUnavailable",
                    message: "could not connect to \(configuration.broker): \(reason)",
                    hint: noVersion5 ? "the broker does not speak MQTT 5 (NATS's listener speaks 3.1.1 only): add --mqtt-version 3.1.1" : nil,
                    json: json)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What to do about a revoked token, by the notice's `reason` (PROTOCOL.md, feedback): a
    /// rotated token's activity lives on under its new token, a dismissed one's is gone.
    static func revokedHint(reason: String) -> String {
        switch reason {
        case "rotated": "the token was replaced: push to its activity's new token, which the app sends its server"
        default: "a dismissed activity's token is dead; the app sends a new token when it asks for one"
        }
    }

    /// Whether a broker's refusal names the protocol version (MQTT 5's reason 0x84, "Unsupported
    /// Protocol Version"; 3.1.1's CONNACK 1, "unacceptable protocol version"). Retrying will not
    /// change it, so the command stops at once and says which version to ask for.
    static func refusesTheProtocolVersion(_ reason: String) -> Bool {
        let words = reason.lowercased()
        return words.contains("refused") && words.contains("protocol version")
    }

    /// The `aps` fields `island push` and `island channel push` share, checked as both check
    /// them: the event and its time, the content state, staleness, relevance, the alert and an
    /// end's dismissal date (`now` or epoch seconds).
    static func apsFields(
        event: PushRequest.Event, timestamp: Double, state: String?, staleDate: Double?, relevance: Double?, alertTitle: String?,
        alertBody: String?, dismissalDate: String?, now: Double, json: Bool
    ) throws(CLIFailure) -> JSONObject {
        if alertBody != nil && alertTitle == nil { throw CLIFailure.usage("--alert-body needs --alert-title", json: json) }
        if event != .end && dismissalDate != nil { throw CLIFailure.usage("--dismissal-date goes with --event end", json: json) }
        var aps: JSONObject = ["timestamp": .double(timestamp), "event": .string(event.rawValue)]
        if let state { aps["content-state"] = .object(try parseObject(state, option: "--state", json: json)) }
        if let staleDate { aps["stale-date"] = .double(staleDate) }
        if let relevance { aps["relevance-score"] = .double(relevance) }
        if let alertTitle { aps["alert"] = ["title": .string(alertTitle), "body": .string(alertBody ?? "")] }
        if let dismissalDate {
            guard let date = dismissalDate == "now" ? now : Double(dismissalDate) else {
                throw CLIFailure.usage("--dismissal-date must be epoch seconds or now, not \(dismissalDate)", json: json)
            }
            aps["dismissal-date"] = .double(date)
        }
        return aps
    }

    /// An `--expiration` of `island push` and `island channel push` (`aps.expiration` in both):
    /// epoch seconds, `+DURATION` from `now`, or `0` for now or never; nil when not given.
    static func expirationDate(_ text: String?, now: Double, json: Bool) throws(CLIFailure) -> Double? {
        guard let text else { return nil }
        if text == "0" { return 0 }
        if text.hasPrefix("+"), let seconds = TimeSpan.seconds(String(text.dropFirst())), seconds > 0 { return now + seconds }
        if let date = Double(text), date > 0, date.isFinite { return date }
        throw CLIFailure.usage("--expiration must be epoch seconds, +DURATION (+10m) or 0, not \(text)", json: json)
    }

    /// How the push goes to the broker: APNs' expiry becomes MQTT's. `0` (now or never) is
    /// published at QoS 0, which a broker does not queue for a device that is offline
    /// (mosquitto's `queue_qos0_messages false`, its default), and never retained; a date
    /// becomes the message expiry interval, so the broker drops it once it is late.
    private func delivery() throws(CLIFailure) -> (qos: Int, expiry: UInt32?) {
        guard let date = try expirationDate() else { return (1, nil) }
        if date == 0 { return (0, nil) }
        return (1, UInt32(max(1, min(Double(UInt32.max - 1), (date - now).rounded(.up)))))
    }
}
