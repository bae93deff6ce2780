import ArgumentParser
import Foundation
import IslandCore
import IslandProtocol
import MQTT
import OrderedCollections
import OrderedJSON
import Synchronization

/// `island channel`: an app's broadcast channels, as its backend manages them — straight
/// through the broker with the backend's credentials, no islandd involved, so it runs on a
/// server. A channel's record (its storage policy) is a retained message on
/// `<root>/channels/<app>/<id>/config` that only the app's backend may read or write (the
/// broker's ACL), which is what makes the per-app cap hold: no one else can create one.
struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel",
        abstract: "Create, list, read, delete and publish to an app's broadcast channels, as its backend does.",
        discussion: """
            A channel is a topic the app's backend publishes to once; every device with an \
            activity listening to it (island start --channel ID, IslandKit's \
            pushType: .channel(id)) applies the message. The storage policy is fixed at \
            creation: none (a device offline when a message is published never gets it) or \
            latest (the most recent message is retained for at most 8 hours, or until its \
            --expiration, and a device that subscribes later gets it at once).

            The broker options and their environment defaults are those of `island push`.

            Examples:
              id=$(island channel create --app org.example.Scores --storage latest)
              island channel push "$id" --app org.example.Scores \\
                  --state '{"home":2,"away":1}'
              island channel list --app org.example.Scores
              island channel delete "$id" --app org.example.Scores
            """,
        subcommands: [ChannelCreate.self, ChannelList.self, ChannelRead.self, ChannelDelete.self, ChannelPush.self])
}

/// The broker a backend reaches, with its own credentials: `island push` and `island channel`.
struct BackendBrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The broker.", discussion: "Default: $ISLAND_PUSH_BROKER, else mqtt://localhost.", valueName: "url"))
    var broker: String?
    @Option(help: ArgumentHelp("The CA certificate that signed the broker's (mqtts).", valueName: "path")) var cafile: String?
    @Option(help: ArgumentHelp("A client certificate (PEM).", valueName: "path")) var cert: String?
    @Option(help: ArgumentHelp("The client certificate's key (PEM, unencrypted).", valueName: "path")) var key: String?
    @Option(help: ArgumentHelp("The broker user name.", valueName: "name")) var username: String?
    @Option(help: ArgumentHelp("A file whose first line is the broker password.", valueName: "path")) var passwordFile: String?
    @Option(help: ArgumentHelp("The MQTT client id (default: island-push- and a random number).", valueName: "id")) var clientID: String?
    @Option(help: ArgumentHelp("MQTT 5 or 3.1.1 (a broker without 5, such as NATS).", valueName: "version"))
    var mqttVersion: String = "5"

    func configuration(json: Bool) throws(CLIFailure) -> MQTTConfiguration {
        let environment = ProcessInfo.processInfo.environment
        let url = broker ?? environment["ISLAND_PUSH_BROKER"] ?? "mqtt://localhost"
        let address: MQTTBrokerAddress
        do {
            address = try MQTTBrokerAddress(url: url)
        } catch {
            throw CLIFailure.usage("\(error)", json: json)
        }
        guard let version = MQTTConfiguration.ProtocolVersion(rawValue: mqttVersion) else {
            throw CLIFailure.usage("--mqtt-version must be 5 or 3.1.1, not \(mqttVersion)", json: json)
        }
        var password: String?
        if let file = passwordFile ?? environment["ISLAND_PUSH_PASSWORD_FILE"] {
            let text = try readNamedFile(file, limit: 64 << 10, what: "the password file", json: json)
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        // libmosquitto reads these itself and says only "Invalid function arguments provided":
        // each is read here first, so a wrong one is named with the option and the reason.
        let tls = MQTTConfiguration.TLS(caFile: cafile ?? environment["ISLAND_PUSH_CAFILE"], certificateFile: cert, keyFile: key)
        guard tls.pairsCertificateWithKey else {
            throw CLIFailure.usage("--cert and --key go together: a client certificate needs its key", json: json)
        }
        for (option, file) in [("--cafile", tls.caFile), ("--cert", tls.certificateFile), ("--key", tls.keyFile)] {
            if let file { _ = try readNamedFile(file, limit: MQTTConfiguration.TLS.maximumFileBytes, what: "\(option)", json: json) }
        }
        return MQTTConfiguration(
            broker: address, clientID: clientID ?? "island-push-\(UInt32.random(in: .min ... .max))",
            username: username ?? environment["ISLAND_PUSH_USERNAME"], password: password,
            tls: tls,
            persistentSession: false, protocolVersion: version, backoff: ReconnectBackoff(first: 0.2, maximum: 1))
    }
}

/// What every channel subcommand takes: the app, the topics' root, the broker.
struct ChannelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app whose channels these are.", valueName: "id")) var app: String
    @Option(help: ArgumentHelp("The levels every topic starts with ([Push] TopicRoot=).", valueName: "root")) var topicRoot = "island"
    @OptionGroup var broker: BackendBrokerOptions
    @Flag(help: "Machine-readable output: JSON.") var json = false

    func channel(_ id: String) throws(CLIFailure) -> PushChannel {
        do {
            return try PushChannel(root: topicRoot, app: app, id: id)
        } catch {
            throw CLIFailure(refusal: error.name, parameters: error.parameters, json: json)
        }
    }

    /// A connection to the broker that has read what is retained on `topics` (and collects
    /// what comes later): `body` runs with it, and it is closed after.
    func withBroker<T>(reading topics: [String], _ body: (BackendLink) async throws -> T) async throws -> T {
        var configuration = try broker.configuration(json: json)
        // A clean session that reads what is retained and what comes while it waits: QoS 0
        // subscriptions, which no broker needs a queue for.
        configuration.subscriptionQoS = 0
        let link = try await BackendLink.connect(
            configuration, reading: topics, probeRoot: "\(topicRoot)/\(PushChannel.level)/\(app)",
            json: json)
        do {
            let result = try await body(link)
            await link.close()
            return result
        } catch {
            await link.close()
            throw error
        }
    }
}

/// A channel's record, as retained on its config topic.
struct ChannelRecord {
    var storage: PushChannel.Storage
    var created: Double
    /// Devices answer every message (for testing).
    var feedback: Bool

    var json: JSON {
        ["storage": .string(storage.rawValue), "created": .double(created), "feedback": .bool(feedback)]
    }

    init(storage: PushChannel.Storage, created: Double, feedback: Bool) {
        (self.storage, self.created, self.feedback) = (storage, created, feedback)
    }

    init?(_ bytes: [UInt8]) {
        guard let object = try? JSONParser.parse(bytes).objectValue,
            let storage = object["storage"]?.stringValue.flatMap(PushChannel.Storage.init(rawValue:))
        else { return nil }
        self.init(storage: storage, created: object["created"]?.doubleValue ?? 0, feedback: object["feedback"]?.boolValue == true)
    }
}

/// A backend's connection, clean, with what it received. What a broker retains on a topic
/// comes right after the subscription; a message the link publishes to a probe topic of its
/// own after subscribing comes back after it, so once the probe is back everything retained
/// has been read.
final class BackendLink: Sendable {
    let client: MQTTClient
    private let received = Mutex<[MQTTMessage]>([])

    private let probeRoot: String
    private let json: Bool

    private init(client: MQTTClient, probeRoot: String, json: Bool) {
        (self.client, self.probeRoot, self.json) = (client, probeRoot, json)
    }

    static func connect(_ configuration: MQTTConfiguration, reading topics: [String], probeRoot: String, json: Bool) async throws -> BackendLink {
        let events = Mutex<MQTTConnectionEvent?>(nil)
        let box = Mutex<BackendLink?>(nil)
        let client: MQTTClient
        do {
            client = try MQTTClient(
                configuration,
                onMessage: { message in
                    box.withLock { $0 }?.received.withLock { $0.append(message) }
                }, onConnection: { event in events.withLock { $0 = event } })
        } catch {
            throw CLIFailure.usage("\(error)", json: json)
        }
        let link = BackendLink(client: client, probeRoot: probeRoot, json: json)
        box.withLock { $0 = link }
        for topic in topics { try client.subscribe(topic) }
        client.start()
        try await PushCommand.connection(of: client, to: configuration, until: .now + .seconds(10), lastEvent: events, json: json)
        do {
            try await link.settle()
        } catch {
            await client.shutdown()
            throw error
        }
        return link
    }

    /// Returns once what the broker retains on the topics subscribed so far has arrived: a
    /// probe published to a topic of the link's own, subscribed after them, comes back after it.
    /// `topics` are subscribed first.
    func settle(subscribing topics: [String] = []) async throws {
        // Not a channel id (those are 22 characters): no channel's record or messages.
        let probe = "\(probeRoot)/probe-\(UInt64.random(in: .min ... .max))/probe"
        for topic in topics + [probe] { try client.subscribe(topic) }
        try client.publish(probe, payload: Array("probe".utf8))
        let deadline = ContinuousClock.now + Self.settleTimeout
        while !received.withLock({ $0.contains { $0.topic == probe } }) {
            guard ContinuousClock.now < deadline else {
                throw CLIFailure(
                    status: ExitStatus.unavailable, name: "BrokerUnavailable",
                    message: "the broker did not answer on \(probe): does the ACL let this user read and write "
                        + "\(probeRoot)/#?", json: json)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        received.withLock { $0.removeAll { $0.topic == probe } }
        try client.unsubscribe(probe)
    }

    /// How long a probe may take: a cluster electing leaders after a node died answers a
    /// subscription only after its own timeout (NATS: 5 s), perhaps more than once.
    static let settleTimeout = Duration.seconds(30)

    /// What arrived so far, retained or not.
    var messages: [MQTTMessage] { received.withLock { $0 } }

    /// Publishes and waits for the broker's acknowledgement (QoS 1) or the write (QoS 0).
    ///
    /// - Throws: `BrokerUnavailable` when a QoS 1 message is not acknowledged within 10 s, or the
    ///   connection ends first: a NATS node whose JetStream did not store it in time closes the
    ///   connection without a PUBACK, and the message is lost. The backend tries again.
    func publish(_ topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false, messageExpiry: UInt32? = nil) async throws {
        try client.publish(topic, payload: payload, qos: qos, retain: retain, expiry: messageExpiry)
        let deadline = ContinuousClock.now + .seconds(10)
        while client.unacknowledgedPublishes > 0 && client.isConnected && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // A lost connection forgets what it waited for: only one still up says it was acknowledged.
        guard qos == 0 || (client.isConnected && client.unacknowledgedPublishes == 0) else {
            throw CLIFailure(
                status: ExitStatus.unavailable, name: "BrokerUnavailable",
                message: "the broker did not acknowledge the message (it may not have it): try again", json: json)
        }
    }

    func close() async { await client.shutdown() }

    /// The record of `channel`, read again a few times when it is not there: a cluster serves
    /// what it retains eventually (NATS keeps a node's copy of the retained messages up to date
    /// asynchronously), so a channel created a moment ago, or through another node, may not be
    /// served yet. A new SUBSCRIBE has the broker send what it retains again.
    func record(of channel: PushChannel, _ options: ChannelOptions, attempts: Int = 6) async throws -> ChannelRecord? {
        for attempt in 0..<attempts {
            if let record = records(of: options, retainedOnly: true)[channel.id] { return record }
            guard attempt + 1 < attempts else { break }
            try await Task.sleep(for: .milliseconds(500))
            try client.unsubscribe(channel.configTopic)
            try await settle(subscribing: [channel.configTopic])
        }
        return nil
    }

    /// The app's channel records, by id.
    /// `retainedOnly`: what the broker serves to a new subscription, not what reached this
    /// link because it published it while subscribed.
    func records(of options: ChannelOptions, retainedOnly: Bool = false) -> OrderedDictionary<String, ChannelRecord> {
        var records: OrderedDictionary<String, ChannelRecord> = [:]
        for message in messages where message.topic.hasSuffix("/config") && (message.retained || !retainedOnly) {
            guard let channel = PushChannel(topic: String(message.topic.dropLast("/config".count))), channel.app == options.app,
                let record = ChannelRecord(message.payload)
            else { continue }
            records[channel.id] = record
        }
        records.sort { $0.value.created < $1.value.created }
        return records
    }
}

struct ChannelCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a channel and print its id.",
        discussion: """
            The id is 128 random bits, never drawn twice. An app has at most 10,000 channels \
            (TooManyChannels): the count is read from the broker, where only the app's backend \
            may write its channels' records.
            """)

    @OptionGroup var options: ChannelOptions
    @Option(help: ArgumentHelp("none or latest, fixed for the channel's life.", valueName: "storage")) var storage: String
    @Flag(help: "Devices answer every message on the channel's feedback topics (for testing: off for a real audience).")
    var feedback = false

    func run() async throws {
        guard let storage = PushChannel.Storage(rawValue: storage) else {
            throw CLIFailure.usage("--storage must be none or latest, not \(self.storage)", json: options.json)
        }
        let wildcard = PushChannel.configWildcard(root: options.topicRoot, app: options.app)
        let channel = try await options.withBroker(reading: [wildcard]) { link in
            let count = link.records(of: options).count
            guard count < PushChannel.maximumPerApp else {
                throw CLIFailure(
                    status: ExitStatus.refused, name: "TooManyChannels",
                    message: "\(options.app) has \(count) channels, the most an app may have",
                    hint: "delete channels it no longer uses (island channel delete)", json: options.json)
            }
            let words = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
            let channel = try PushChannel.make(
                root: options.topicRoot, app: options.app,
                randomBytes: withUnsafeBytes(of: words) { Array($0) })
            let record = ChannelRecord(storage: storage, created: Date().timeIntervalSince1970, feedback: feedback)
            try await link.publish(channel.configTopic, payload: record.json.serialized(), retain: true)
            // Printed once the broker serves it: the backend's next command finds the channel.
            try await link.settle(subscribing: [channel.configTopic])
            guard try await link.record(of: channel, options, attempts: 20) != nil else {
                throw CLIFailure(
                    status: ExitStatus.unavailable, name: "BrokerUnavailable",
                    message: "the broker took the record of \(channel.id) but does not serve it", json: options.json)
            }
            return channel
        }
        if options.json {
            Output.json(["channel": .string(channel.id), "topic": .string(channel.topic), "storage": .string(storage.rawValue)])
        } else {
            Output.line(channel.id)
        }
    }
}

struct ChannelList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the app's channels: id and storage.")

    @OptionGroup var options: ChannelOptions

    func run() async throws {
        let wildcard = PushChannel.configWildcard(root: options.topicRoot, app: options.app)
        let records = try await options.withBroker(reading: [wildcard]) { $0.records(of: options) }
        if options.json {
            Output.json(
                .array(
                    records.map { id, record in
                        var object = record.json.objectValue ?? [:]
                        object["channel"] = .string(id)
                        return .object(object)
                    }))
        } else {
            for (id, record) in records { Output.line("\(id) \(record.storage.rawValue)\(record.feedback ? " feedback" : "")") }
        }
    }
}

struct ChannelRead: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Print a channel's storage and, for latest, the message it keeps.")

    @OptionGroup var options: ChannelOptions
    @Argument(help: "The channel's id.") var id: String

    func run() async throws {
        let channel = try options.channel(id)
        let (record, latest) = try await options.withBroker(reading: [channel.configTopic, channel.topic]) { link in
            (try await link.record(of: channel, options), link.messages.last { $0.topic == channel.topic && $0.retained })
        }
        guard let record else {
            throw CLIFailure(
                refusal: IslandErrorNames.InvalidChannel.error,
                parameters: [
                    IslandErrorNames.InvalidChannel.channel: .string(id), IslandErrorNames.InvalidChannel.reason: .string("no such channel of \(options.app)"),
                ],
                json: options.json)
        }
        var object = record.json.objectValue ?? [:]
        object["channel"] = .string(id)
        if let latest, let message = try? JSONParser.parse(latest.payload) { object["latest"] = message }
        if options.json {
            Output.json(.object(object))
        } else {
            Output.line("\(id) \(record.storage.rawValue)\(record.feedback ? " feedback" : "")")
            if let latest { Output.line(String(decoding: latest.payload, as: UTF8.self)) }
        }
    }
}

struct ChannelDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a channel, and the message it keeps.",
        discussion: "Devices listening to it hear nothing more on it; their activities stay as they are.")

    @OptionGroup var options: ChannelOptions
    @Argument(help: "The channel's id.") var id: String

    func run() async throws {
        let channel = try options.channel(id)
        try await options.withBroker(reading: [channel.configTopic]) { link in
            guard try await link.record(of: channel, options) != nil else {
                throw CLIFailure(
                    refusal: IslandErrorNames.InvalidChannel.error,
                    parameters: [
                        IslandErrorNames.InvalidChannel.channel: .string(id),
                        IslandErrorNames.InvalidChannel.reason: .string("no such channel of \(options.app)"),
                    ],
                    json: options.json)
            }
            // An empty retained message removes what the broker retains.
            try await link.publish(channel.topic, payload: [], retain: true)
            try await link.publish(channel.configTopic, payload: [], retain: true)
        }
    }
}

struct ChannelPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Publish an update or an end to every device listening to a channel.",
        discussion: """
            The payload is APNs' (aps: timestamp, event, content-state, …), with the \
            expiry in aps.expiration as a token's push has it, which devices check on arrival. \
            --event start is \
            refused (BroadcastStart): a broadcast never starts an activity. On a channel \
            created with --feedback the devices' answers are printed, one line each, for \
            --wait seconds: `applied ID`, `throttled ID, delivered at TIME (deliverAt SECONDS)` \
            or `refused ERROR`.

            Exit status: 0 published, 1 refused (by this tool, or by a device that answered), \
            2 usage, 69 the broker could not be reached.
            """)

    @OptionGroup var options: ChannelOptions
    @Argument(help: "The channel's id.") var id: String
    @Option(help: ArgumentHelp("update or end.", valueName: "event")) var event: String = "update"
    @Option(help: ArgumentHelp("The content state, a JSON object (required but for end).", valueName: "json")) var state: String?
    @Option(help: ArgumentHelp("The message's time, epoch seconds (default: now); older ones are refused.", valueName: "t"))
    var timestamp: Double?
    @Option(help: ArgumentHelp("Mark the activities stale at this time (epoch seconds).", valueName: "t")) var staleDate: Double?
    // A score may be negative: what follows the option is its value, "-1" too.
    @Option(parsing: .unconditional, help: ArgumentHelp("The relevance score.", valueName: "n")) var relevance: Double?
    @Option(help: ArgumentHelp("Alert title.", valueName: "title")) var alertTitle: String?
    @Option(help: ArgumentHelp("The alert's body.", valueName: "body")) var alertBody: String?
    @Option(help: ArgumentHelp("end: when they leave the lock screen, epoch seconds or `now`.", valueName: "t")) var dismissalDate: String?
    @Option(
        help: ArgumentHelp(
            "latest: when the message is dropped, epoch seconds or +DURATION (at most 8 hours ahead; default 8 hours); none: 0.",
            valueName: "t"))
    var expiration: String?
    @Option(
        help: ArgumentHelp(
            "10 (default): at once, from the app's push budget; 5: exempt, coalesced; 1: only while the island is not busy.",
            valueName: "n"))
    var priority: Int?
    @Option(help: ArgumentHelp("Seconds to collect answers, on a channel with feedback.", valueName: "seconds")) var wait: Double = 3

    func validate() throws {
        try requireFinite(timestamp, option: "--timestamp")
        try requireFinite(staleDate, option: "--stale-date")
        try requireFinite(relevance, option: "--relevance")
        try requireWait(wait)
    }

    func run() async throws {
        let json = options.json
        guard let event = PushRequest.Event(rawValue: event) else {
            throw CLIFailure.usage("--event must be update or end, not \(self.event)", json: json)
        }
        let channel = try options.channel(id)
        guard event != .start else {
            throw CLIFailure(
                refusal: IslandError.broadcastStart(channel: id).name, parameters: IslandError.broadcastStart(channel: id).parameters,
                json: json)
        }
        if event == .update && state == nil { throw CLIFailure.usage("--state is required for --event update", json: json) }
        let timestamp = timestamp ?? now
        var aps = try PushCommand.apsFields(
            event: event, timestamp: timestamp, state: state, staleDate: staleDate, relevance: relevance, alertTitle: alertTitle,
            alertBody: alertBody, dismissalDate: dismissalDate, now: now, json: json)
        if let priority {
            guard PushPriority(rawValue: priority) != nil else { throw CLIFailure.usage("--priority must be 10, 5 or 1, not \(priority)", json: json) }
            aps["priority"] = .int(priority)
        }
        let expiration = try PushCommand.expirationDate(self.expiration, now: now, json: json)
        let fields = aps
        let feedbackTopic = "\(options.topicRoot)/+/\(options.app)/\(channel.id)/\(PushToken.feedbackLevel)"
        let answers = try await options.withBroker(reading: [channel.configTopic]) { link -> [JSONObject] in
            guard let record = try await link.record(of: channel, options) else {
                throw CLIFailure(
                    refusal: IslandErrorNames.InvalidChannel.error,
                    parameters: [
                        IslandErrorNames.InvalidChannel.channel: .string(id),
                        IslandErrorNames.InvalidChannel.reason: .string("no such channel of \(options.app)"),
                    ],
                    json: json)
            }
            var aps = fields
            var messageExpiry: UInt32?
            switch record.storage {
            case .none:
                // Now or never: QoS 0, which no broker queues for an absent session, and not retained.
                guard expiration == nil || expiration == 0 else {
                    throw CLIFailure.usage("a channel with storage none keeps nothing: --expiration must be 0 or absent", json: json)
                }
                aps["expiration"] = .int(0)
            case .latest:
                let latest = now + PushChannel.maximumLatestLifetime
                let expires = expiration ?? latest
                guard expires > now, expires <= latest + 1 else {
                    throw CLIFailure.usage("--expiration must be within the next 8 hours", json: json)
                }
                aps["expiration"] = .double(expires)
                messageExpiry = UInt32(max(1, (expires - now).rounded(.up)))
            }
            var message: JSONObject = ["aps": .object(aps)]
            if record.feedback {
                message["feedback"] = .bool(true)
                // Only then: a million devices' answers are no one's business otherwise.
                try await link.settle(subscribing: [feedbackTopic])
            }
            let bytes = JSON.object(message).serialized()
            guard bytes.count <= PushChannel.maximumPayloadBytes else {
                throw CLIFailure(
                    refusal: IslandErrorNames.PushPayloadTooLarge.error,
                    parameters: [
                        IslandErrorNames.PushPayloadTooLarge.limit: .int(PushChannel.maximumPayloadBytes),
                        IslandErrorNames.PushPayloadTooLarge.size: .int(bytes.count),
                    ], json: json)
            }
            try await link.publish(
                channel.topic, payload: bytes, qos: record.storage == .latest ? 1 : 0,
                retain: record.storage == .latest, messageExpiry: messageExpiry)
            guard record.feedback else { return [] }
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
            return link.messages.filter { $0.topic.hasSuffix("/\(PushToken.feedbackLevel)") }.compactMap {
                guard let object = try? JSONParser.parse($0.payload).objectValue, object["timestamp"]?.doubleValue == timestamp else { return nil }
                return object
            }
        }
        for answer in answers {
            if json {
                Output.json(.object(answer))
            } else if answer["outcome"]?.stringValue == "throttled", let at = answer["deliverAt"]?.doubleValue {
                Output.line(throttledLine(deliverAt: at, activity: answer["activity"]?.stringValue))
            } else {
                let outcome = answer["outcome"]?.stringValue ?? "?"
                Output.line("\(outcome) \(answer["activity"]?.stringValue ?? answer["error"]?.stringValue ?? "")")
            }
        }
        if let refused = answers.first(where: { $0["outcome"]?.stringValue == "refused" }) {
            throw CLIFailure(refusal: refused["error"]?.stringValue ?? "Refused", parameters: refused["parameters"]?.objectValue ?? [:], json: false)
        }
    }
}
