import Foundation
import IslandCore
import Logging
import MQTT
import SmallFiles
import Synchronization

/// The push gateway's line to the broker: one MQTT session per app holding tokens on this device
/// (client id `<ClientID>/<app>`), so that each app's pushes wait in a queue of their own at
/// the broker — a broker bounds and drops per session (mosquitto's `max_queued_messages`), and
/// one app's flood must not crowd out another app's pushes (docs/design.md §12, Isolation).
/// Sessions are made as an app's first token is subscribed to; their number is bounded by the
/// apps that hold tokens. Feedback goes out through the session of the app it is about.
///
/// The device's own session (`ClientID=`, clean) subscribes to nothing: it is the device's
/// presence, what status reports and what tells of a ClientID shared by two devices.
final class MQTTPushLink: PushBroker {
    typealias MakeSession = @Sendable (MQTTConfiguration) throws(MQTTError) -> any MQTTSession

    let device: any MQTTSession
    private let configuration: MQTTConfiguration
    private let makeSession: MakeSession
    private let sessions = Mutex<[String: any MQTTSession]>([:])
    private let started = Mutex(false)
    /// What waits for the broker's answer to each topic's subscription (`subscribe(_:answered:)`).
    private let awaitingAnswer = Mutex<[String: [@Sendable (SubscriptionAnswer) -> Void]]>([:])
    let logger: Logger

    /// `makeSession` makes a session (not started) with the configuration given, whose
    /// messages and events go where the daemon wants them.
    init(configuration: MQTTConfiguration, logger: Logger, makeSession: @escaping MakeSession) throws(MQTTError) {
        self.configuration = configuration
        self.makeSession = makeSession
        self.logger = logger
        var presence = configuration
        presence.persistentSession = false
        device = try makeSession(presence)
    }

    /// The client id of `app`'s session on device `device`: the device's, a `/`, the app's id
    /// (neither may contain `/`, so no two pairs share one).
    ///
    /// Under MQTT 3.1.1 (NATS's MQTT listener, which refuses a client id with `/` or `.`, the
    /// separators of its subjects): the device's, a `-`, and the app's id with every character
    /// but letters and digits written `_` and two hexadecimal digits of each UTF-8 byte —
    /// `kitchen-org_2Eexample_2EPizza`. The app's part has no `-`, so the last `-` splits
    /// the two again and no two pairs share one.
    static func clientID(device: String, app: String, protocolVersion: MQTTConfiguration.ProtocolVersion = .v5) -> String {
        guard protocolVersion == .v311 else { return "\(device)/\(app)" }
        var escaped = ""
        for byte in app.utf8 {
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            {
                escaped.append(Character(Unicode.Scalar(byte)))
            } else {
                escaped += "_" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return "\(device)-\(escaped)"
    }

    func start() {
        let sessions = started.withLock { started in
            started = true
            return self.sessions.withLock { Array($0.values) }
        }
        device.start()
        for session in sessions { session.start() }
    }

    func shutdown() async {
        let all = sessions.withLock { Array($0.values) } + [device]
        await withTaskGroup(of: Void.self) { group in
            for session in all { group.addTask { await session.shutdown(timeout: .seconds(3)) } }
        }
    }

    /// Every session's client id, the device's first.
    var clientIDs: [String] { [device.clientID] + sessions.withLock { $0.values.map(\.clientID).sorted() } }

    /// `app`'s session, made (and started, once the link is) when it has none.
    private func session(app: String, make: Bool) -> (any MQTTSession)? {
        var made: (any MQTTSession)?
        let session = sessions.withLock { sessions -> (any MQTTSession)? in
            if let session = sessions[app] { return session }
            guard make else { return nil }
            var configuration = configuration
            configuration.clientID = Self.clientID(device: configuration.clientID, app: app, protocolVersion: configuration.protocolVersion)
            do {
                let session = try makeSession(configuration)
                sessions[app] = session
                made = session
                return session
            } catch {
                logger.error("cannot make the push session of an app", metadata: ["app": "\(app)", "error": "\(error)"])
                return nil
            }
        }
        if let made, started.withLock({ $0 }) { made.start() }
        return session
    }

    /// The app whose session a token's or a channel's topic goes through.
    private static func app(of topic: String) -> String? {
        (try? PushToken(topic))?.app ?? PushChannel(topic: topic)?.app
    }

    func subscribe(_ topic: String) {
        guard let app = Self.app(of: topic), let session = session(app: app, make: true) else {
            logger.error("neither a push token's topic nor a channel's", metadata: ["topic": "\(topic)"])
            return
        }
        do {
            try session.subscribe(topic)
        } catch {
            logger.error("cannot subscribe to a push topic", metadata: ["error": "\(error)"])
        }
    }

    func subscribe(_ topic: String, answered: @escaping @Sendable (SubscriptionAnswer) -> Void) {
        awaitingAnswer.withLock { $0[topic, default: []].append(answered) }
        subscribe(topic)
    }

    /// The broker's answer to a subscription of one of the sessions, on its network thread.
    /// A refusal nobody waits for is of a topic the device holds — a token handed out, an
    /// activity's channel — asked for again on a connection whose session the broker did not
    /// keep: the session asks again with its backoff, and the log says so, naming the app and
    /// never a token, whose topic is its secret.
    func answered(_ event: MQTTSubscriptionEvent) {
        let answer: SubscriptionAnswer =
            switch event {
            case .granted: .granted
            case .refused(_, let code, _): code == MQTTSubscriptionEvent.notAuthorized ? .denied : .refused
            }
        // Waiting for a grant or a denial; a refusal for now is asked for again.
        let waiting = awaitingAnswer.withLock { waiting in
            answer == .refused ? waiting[event.topic] ?? [] : waiting.removeValue(forKey: event.topic) ?? []
        }
        for answered in waiting { answered(answer) }
        guard waiting.isEmpty, case .refused(let topic, let code, let retryIn) = event else { return }
        var metadata: Logger.Metadata = ["code": "0x\(String(code, radix: 16))", "retry_in": "\(Int((retryIn * 1000).rounded())) ms"]
        if let channel = PushChannel(topic: topic) {
            metadata["app"] = "\(channel.app)"
            metadata["channel"] = "\(channel.id)"
        } else {
            metadata["app"] = "\((try? PushToken(topic))?.app ?? "?")"
            metadata["kind"] = "push token"
        }
        logger.warning(
            "the push broker refused a subscription this device holds: nothing published there arrives until it grants it",
            metadata: metadata)
    }

    func unsubscribe(_ topic: String) {
        awaitingAnswer.withLock { _ = $0.removeValue(forKey: topic) }
        guard let app = Self.app(of: topic), let session = session(app: app, make: false) else { return }
        do {
            try session.unsubscribe(topic)
        } catch {
            logger.error("cannot unsubscribe from a push token's topic", metadata: ["error": "\(error)"])
        }
    }

    /// Feedback is lost, not queued, while the broker is away or slow: the pushes it answers
    /// came through the same connection, and a server that hears nothing sends again.
    func publish(_ topic: String, payload: [UInt8], retain: Bool = false) {
        // <root>/<device>/<app>/<feedback id>/feedback
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 5, let session = session(app: String(levels[levels.count - 3]), make: false) else { return }
        do {
            try session.publish(topic, payload: payload, qos: 1, retain: retain)
        } catch {
            logger.notice("push feedback not published", metadata: ["error": "\(error)"])
        }
    }
}

/// Where the daemon runs its MQTT clients: in a link process of its own, under a memory
/// limit, whenever it can (`executable`), so that no packet a broker sends is ever allocated
/// in the daemon, whose memory stays bounded whatever a broker sends (docs/design.md §12).
package enum PushLinkProcess {
    /// The executable that runs the link process with `option`: islandd sets its own
    /// (`/proc/self/exe`) before it starts. Nil (an embedding, tests) runs the clients in
    /// the daemon's process.
    static let executable = Mutex<String?>(nil)

    /// Runs the daemon's MQTT clients in link processes started from `path`.
    package static func use(executable path: String) {
        executable.withLock { $0 = path }
    }
    /// islandd's hidden option that makes it the link process, with its data headroom in
    /// bytes (0: no limit).
    package static let option = "--mqtt-link"

    /// The link process's headroom (`MQTTLinkChild`): `configured` (`[Push] LinkHeadroom=`)
    /// or the default; none under a sanitizer (`ISLAND_SANITIZER`), whose shadow memory no
    /// data limit allows.
    static func headroom(configured: Int?, environment: [String: String]) -> Int {
        (environment["ISLAND_SANITIZER"] ?? "").isEmpty ? configured ?? MQTTLinkChild.defaultHeadroom : 0
    }

    /// Runs the link process on descriptors 3 and 4 (as `MQTTLinkProcess` starts it); never
    /// returns.
    package static func run(headroom: Int) -> Never {
        MQTTLinkChild.run(descriptor: 3, doneDescriptor: 4, headroom: headroom > 0 ? headroom : nil)
    }
}

extension MQTTConfiguration {
    /// The daemon's connection as `[Push]` describes it. `device` is the client id.
    ///
    /// - Throws: a message naming what is wrong (the URL, the password file).
    init(_ settings: PushSettings, device: String) throws(IslandDaemon.StartError) {
        guard let urls = settings.broker?.split(separator: " "), !urls.isEmpty else { throw .configuration("[Push] has no Broker=") }
        var brokers: [MQTTBrokerAddress] = []
        for url in urls {
            do {
                brokers.append(try MQTTBrokerAddress(url: String(url)))
            } catch {
                throw .configuration("[Push] Broker=: \(error)")
            }
        }
        // The link process names the node it reached by its place in the list, in a byte.
        guard brokers.count <= Self.maximumBrokers else {
            throw .configuration("[Push] Broker=: at most \(Self.maximumBrokers) brokers, not \(brokers.count)")
        }
        // One TLS setup serves every node.
        guard Set(brokers.map(\.secure)).count == 1 else {
            throw .configuration("[Push] Broker=: the nodes of a cluster are all mqtts:// or all mqtt://")
        }
        var password: String?
        if let file = settings.passwordFile {
            // A file in a folder the user's other programs may write: only a regular file is
            // read, and only as much of it as a password could be (`readRegularFile`), so a
            // FIFO there cannot stall the start nor a 2 GiB file be taken for the password.
            let text: String
            do {
                text = try readRegularText(file, limit: Self.maximumPasswordFileSize, followingLinks: true)
            } catch {
                throw .configuration("[Push] PasswordFile=\(file) cannot be read: \(error)")
            }
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        let tls = TLS(caFile: settings.caFile, certificateFile: settings.certificateFile, keyFile: settings.keyFile)
        try Self.checkFiles(of: tls)
        self.init(
            broker: brokers[0], otherBrokers: Array(brokers.dropFirst()), clientID: device, username: settings.username, password: password,
            tls: tls,
            persistentSession: true, sessionExpiry: settings.sessionExpiry ?? .max, keepAlive: Int(settings.keepAlive),
            protocolVersion: settings.mqttVersion == "3.1.1" ? .v311 : .v5,
            maximumUnacknowledgedPublishes: Self.feedbackBacklog)
    }

    /// Feedback publishes a session holds for the broker's acknowledgement, at most: more
    /// than it can owe while connected — the answers to what it has read and not yet had
    /// answered (the daemon's 64, the link's socket buffer, one read of libmosquitto's, which
    /// takes a flood in batches before it writes) — so that no answer is dropped to a flood,
    /// and small enough (under 1 KiB each) to stay well within the link process's memory.
    static let feedbackBacklog = 8192

    /// The most nodes `[Push] Broker=` lists: a cluster has a handful.
    static let maximumBrokers = 64

    /// The most of `[Push] PasswordFile=` read: a password is one line, far shorter.
    static let maximumPasswordFileSize = 64 << 10

    /// `CAFile=`, `CertificateFile=` and `KeyFile=` are read by libmosquitto in the link
    /// process, at each connection attempt, and a missing one there is only "Invalid function
    /// arguments provided", retried for ever: a configuration that names them wrong stops the
    /// start, naming the key and why, as `PasswordFile=` does. Each is read as that file is
    /// (`readRegularFile`: a FIFO would stall the link, a huge file its memory), and a client
    /// certificate and its key come together (`TLS.pairsCertificateWithKey`).
    static func checkFiles(of tls: TLS) throws(IslandDaemon.StartError) {
        guard tls.pairsCertificateWithKey else {
            throw .configuration("[Push] CertificateFile= and KeyFile= go together: a client certificate needs its key")
        }
        for (key, file) in [("CAFile", tls.caFile), ("CertificateFile", tls.certificateFile), ("KeyFile", tls.keyFile)] {
            guard let file else { continue }
            do {
                _ = try readRegularFile(file, limit: TLS.maximumFileBytes, followingLinks: true)
            } catch {
                throw .configuration("[Push] \(key)=\(file) cannot be read: \(error)")
            }
        }
    }

    /// `ClientID=` when set; otherwise the machine's id (`/etc/machine-id`), with the uid in
    /// the user scope, where every user of the machine runs a daemon of their own.
    static func defaultDevice(scope: DaemonScope) -> String {
        let machine = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines).filter(\.isHexDigit)
        let base = machine.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        return scope == .system ? base : "\(base)-\(getuid())"
    }
}
