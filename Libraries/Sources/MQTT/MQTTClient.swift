import CMosquitto
import Foundation
import Glibc
import SelfWake
import Synchronization

/// A message received on a subscribed topic.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retained: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 1, retained: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retained = retained
    }
}

/// What happened to the connection.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// `broker` (of the configuration's list: a cluster's node) accepted the connection; with
    /// `sessionPresent` it kept the session of the last one, with its subscriptions and what
    /// they received meanwhile.
    case connected(broker: MQTTBrokerAddress, sessionPresent: Bool)
    /// An attempt failed or the connection was lost; the next attempt is `retryIn` seconds away.
    case disconnected(reason: String, retryIn: Double)
    /// The broker gave the session to another client with the same client id (MQTT 5's
    /// "session taken over"); the next attempt is `retryIn` seconds away. Two clients with one
    /// id take the session from each other for as long as both run, ever more slowly.
    case takenOver(retryIn: Double)
    /// The client gave the connection up because a packet from the broker did not fit in the
    /// memory it may use (libmosquitto allocates each packet whole, as large as its header
    /// says, before anyone can look at it); the next attempt is `retryIn` seconds away. With
    /// `discardingSession` the connection before ended so too: a broker sends a QoS 1 message
    /// of a persistent session again at every reconnection until it is acknowledged, so the
    /// session would never move past it. The next attempt first discards the broker's session
    /// of this client id, with everything it queued and held for it (`MQTTClient`), and the
    /// connection after it subscribes again in a new one.
    case packetTooLarge(retryIn: Double, discardingSession: Bool)
}

/// What the broker answered to a subscription (its SUBACK), topic by topic: the first one, and
/// each one again on a connection whose session the broker did not keep.
public enum MQTTSubscriptionEvent: Sendable, Hashable {
    /// The broker holds the subscription: whatever is published to `topic` from now on comes.
    case granted(topic: String)
    /// The broker refused it: `code` is the SUBACK's, 0x80 or above — 0x80 alone under MQTT
    /// 3.1.1, whatever the reason; under MQTT 5 `notAuthorized` (0x87, an ACL's denial) or
    /// another (0x80 unspecified, 0x97 quota exceeded: a broker that cannot keep it now). The
    /// client asks again in `retryIn` seconds, with the backoff of its connections, for as
    /// long as it wants the topic.
    case refused(topic: String, code: Int, retryIn: Double)

    /// MQTT 5's SUBACK reason "Not authorized".
    public static let notAuthorized = 0x87

    public var topic: String {
        switch self {
        case .granted(let topic), .refused(let topic, _, _): topic
        }
    }
}

/// An MQTT client on libmosquitto, with a network thread of its own: it connects, keeps its
/// subscriptions (QoS 1) across reconnections, reconnects with backoff after every failure,
/// and hands what it receives to `onMessage` — at most `maximumPacketSize` bytes of each
/// payload: a larger one (from a broker that ignores the limit, or under MQTT 3.1.1, which
/// cannot ask for one) is cut to that, so that its receiver refuses it by size without this
/// process holding a third copy of it.
///
/// A persistent session whose broker sends a packet larger than the client can allocate again
/// at the reconnection after the one it ended (`MQTTConnectionEvent.packetTooLarge`) is
/// discarded: one connection with the clean-session flag, closed once the broker accepts it,
/// ends the broker's session and drops what it queued; the next connection starts a new one
/// and subscribes again. What was queued is lost, which a server that numbers its pushes sees.
///
/// Every method may be called from any thread and never waits for the network: it queues the
/// packet for the network thread and wakes it. `onMessage` and `onConnection` run on the
/// network thread, one at a time, in the order things happened; `onMessage` may take its time
/// (the next message waits, and the broker, not this process, holds what is behind it), but
/// must not call `shutdown()`. `onSubscription` tells, on the same thread, what the broker
/// answered to each subscription: a message published to a topic before its grant may be lost.
///
/// The thread is the client's own rather than `mosquitto_loop_start`'s: that one gives up for
/// good after a TLS or protocol error (`mosquitto_loop_forever` returns on them), cannot be
/// woken from its reconnection sleep, and waits with `select`, which fails outright on a
/// descriptor above 1023 — ordinary in a daemon that raised its descriptor limit for its
/// clients. This one waits with `poll`, retries whatever failed, and stops at once.
public final class MQTTClient: MQTTSession {
    public typealias MessageHandler = @Sendable (MQTTMessage) -> Void
    public typealias ConnectionHandler = @Sendable (MQTTConnectionEvent) -> Void
    public typealias SubscriptionHandler = @Sendable (MQTTSubscriptionEvent) -> Void

    private let core: Core

    /// Sets the client up; nothing is sent until `start()`.
    /// `clock` is seconds of a monotonic clock, for how long a connection lasted (the backoff
    /// starts again only after one that stayed up `backoff.stableAfter`).
    ///
    /// - Throws: `MQTTError.invalidConfiguration` when libmosquitto refuses a setting (an
    ///   unreadable TLS file, a client id it rejects).
    public init(
        _ configuration: MQTTConfiguration, onMessage: @escaping MessageHandler,
        onConnection: @escaping ConnectionHandler = { _ in }, onSubscription: @escaping SubscriptionHandler = { _ in },
        clock: @escaping @Sendable () -> Double = MQTTClient.monotonicSeconds
    ) throws(MQTTError) {
        core = try Core(configuration, receiver: .message(onMessage), onConnection: onConnection, onSubscription: onSubscription, clock: clock)
    }

    /// A message as libmosquitto holds it: the topic's UTF-8 bytes (libmosquitto has checked
    /// them) and the payload, cut as `onMessage`'s is; valid only during the call.
    typealias BytesHandler = @Sendable (_ topic: UnsafeBufferPointer<UInt8>, _ payload: UnsafeRawBufferPointer) -> Void

    /// The same client handing each message on as the bytes libmosquitto holds, for a caller
    /// that only copies them on (the link process, into its frame to the daemon): no topic
    /// `String`, no payload array, made and freed for every message.
    init(
        _ configuration: MQTTConfiguration, onBytes: @escaping BytesHandler, onConnection: @escaping ConnectionHandler,
        onSubscription: @escaping SubscriptionHandler
    ) throws(MQTTError) {
        core = try Core(
            configuration, receiver: .bytes(onBytes), onConnection: onConnection, onSubscription: onSubscription, clock: MQTTClient.monotonicSeconds)
    }

    /// `CLOCK_MONOTONIC`, in seconds.
    public static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Starts the network thread, which connects and stays connected until `shutdown()`.
    public func start() {
        core.start()
    }

    /// Disconnects cleanly and ends the network thread; returns once it has ended, or after
    /// `timeout` when it is stuck in a connection attempt the system has not given up on yet
    /// (the thread then ends on its own when that attempt returns).
    public func shutdown(timeout: Duration = .seconds(2)) async {
        await core.shutdown(timeout: timeout)
    }

    /// Subscribes to `topic` at QoS 1, now if connected and on every later connection.
    public func subscribe(_ topic: String) throws(MQTTError) {
        guard mosquitto_sub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalidTopic(topic) }
        core.subscribe(topic)
    }

    /// Unsubscribes from `topic`: now if connected, otherwise on the next connection.
    public func unsubscribe(_ topic: String) throws(MQTTError) {
        guard mosquitto_sub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalidTopic(topic) }
        core.unsubscribe(topic)
    }

    /// Queues a message for the broker. Refused while disconnected (nothing is held for a
    /// broker that is away) and while `maximumUnacknowledgedPublishes` wait for their
    /// acknowledgement.
    public func publish(_ topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) throws(MQTTError) {
        try publish(topic, payload: payload, qos: qos, retain: retain, expiry: nil)
    }

    /// `expiry`: MQTT 5's message expiry interval, in seconds — the broker drops the message
    /// once it has waited that long for a subscriber (nil: never; ignored by MQTT 3.1.1).
    public func publish(_ topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false, expiry: UInt32?) throws(MQTTError) {
        guard mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalidTopic(topic) }
        try core.publish(topic, payload: payload, qos: qos, retain: retain, expiry: expiry)
    }

    /// Connected to the broker now.
    public var isConnected: Bool { core.isConnected }

    /// Where the client connects, and as which client id.
    public var broker: MQTTBrokerAddress { core.currentBroker }
    public var clientID: String { core.configuration.clientID }

    /// Publishes at QoS 1 the broker has not acknowledged yet.
    public var unacknowledgedPublishes: Int { core.state.withLock { $0.unacknowledged } }

    /// The topics subscribed to (or to be, once connected).
    public var subscriptions: Set<String> { core.subscriptions }

    /// libmosquitto's version, e.g. "2.0.11".
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}

/// `mosquitto_lib_init` once per process, before the first client.
private let libraryInitialised: Int32 = mosquitto_lib_init()

extension MQTTClient {
    /// The client's state and its network thread. A class apart from `MQTTClient` because the
    /// thread keeps it alive until it ends, and libmosquitto's callbacks find it through their
    /// user-data pointer.
    fileprivate final class Core: Sendable {
        let configuration: MQTTConfiguration
        let handle: Handle
        let receiver: Receiver
        let onConnection: ConnectionHandler
        let onSubscription: SubscriptionHandler
        /// Wakes the network thread from `poll`: a packet was queued, or it should stop.
        let wakePipe: WakePipe
        let state: Mutex<State>
        /// The network thread's end, which `shutdown` waits for, at most for its timeout.
        let threadEnd = ThreadEnd()
        let clock: @Sendable () -> Double
        /// The packet the network thread just read was a message libmosquitto answers (QoS 1
        /// or 2); only that thread reads and writes it, from `serve` and the message callback.
        let answeredPacket = Atomic<Bool>(false)

        struct State {
            var subscriptions = SubscriptionSet()
            var started = false
            var stopping = false
            var finished = false
            /// When to try again: the backoff grows until a connection lasts.
            var schedule: ReconnectSchedule
            /// The broker said the session was taken over by a client with the same id.
            var takenOver = false
            /// Why the broker last refused a connection, for the disconnection's reason.
            var refusal: String?
            /// The last connection ended because a packet from the broker did not fit in memory.
            var lastEndedTooLarge = false
            /// The broker's session is to be discarded before the next connection.
            var discardPending = false
            var unacknowledged = 0
            /// The address in `configuration.brokers` the next attempt goes to.
            var brokerIndex = 0
            /// The topics of each SUBSCRIBE sent on this connection and not yet answered, by
            /// message id.
            var awaitingGrant: [Int32: [String]] = [:]
            /// The broker's refusals of each wanted topic since its last grant: the backoff's step.
            var refusals: [String: Int] = [:]
            /// When to ask again for a topic the broker refused on this connection (`clock`).
            var retries: [String: Double] = [:]
        }

        /// Who is handed the messages, and how.
        enum Receiver {
            case message(MessageHandler)
            case bytes(BytesHandler)
        }

        init(
            _ configuration: MQTTConfiguration, receiver: Receiver,
            onConnection: @escaping ConnectionHandler, onSubscription: @escaping SubscriptionHandler,
            clock: @escaping @Sendable () -> Double
        ) throws(MQTTError) {
            _ = libraryInitialised
            self.configuration = configuration
            self.onSubscription = onSubscription
            self.state = Mutex(State(schedule: ReconnectSchedule(backoff: configuration.backoff)))
            self.clock = clock
            self.receiver = receiver
            self.onConnection = onConnection
            guard let pointer = mosquitto_new(configuration.clientID, !configuration.persistentSession, nil) else {
                throw .invalidConfiguration("libmosquitto refused the client id \(configuration.clientID): \(String(cString: strerror(errno)))")
            }
            handle = Handle(pointer)
            do {
                wakePipe = try WakePipe()
            } catch {
                throw .invalidConfiguration("\(error)")
            }
            try configure()
        }

        /// The protocol, credentials and TLS of `configuration` on libmosquitto's client `mosq`.
        private static func configureTransport(_ mosq: OpaquePointer, _ configuration: MQTTConfiguration) throws(MQTTError) {
            func check(_ rc: Int32, _ what: String) throws(MQTTError) {
                guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                    throw .invalidConfiguration("\(what): \(String(cString: mosquitto_strerror(rc)))")
                }
            }
            let version: Int32 = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
            try check(mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol version")
            try check(mosquitto_threaded_set(mosq, true), "threaded mode")
            // Nagle would hold a feedback message back for the next packet.
            try check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
            if configuration.username != nil || configuration.password != nil {
                try check(mosquitto_username_pw_set(mosq, configuration.username, configuration.password), "credentials")
            }
            if configuration.broker.secure {
                let tls = configuration.tls
                if tls.caFile != nil || tls.caDirectory != nil {
                    try check(mosquitto_tls_set(mosq, tls.caFile, tls.caDirectory, tls.certificateFile, tls.keyFile, nil), "TLS files")
                } else {
                    // The system's roots; `mosquitto_tls_set` insists on a CA, so a client
                    // certificate alone names the system's directory as one.
                    try check(mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "the system's trusted certificates")
                    if tls.certificateFile != nil {
                        try check(mosquitto_tls_set(mosq, nil, "/etc/ssl/certs", tls.certificateFile, tls.keyFile, nil), "TLS files")
                    }
                }
            }
        }

        private func configure() throws(MQTTError) {
            let mosq = handle.pointer
            try Self.configureTransport(mosq, configuration)
            let user = Unmanaged.passUnretained(self).toOpaque()
            mosquitto_user_data_set(mosq, user)
            mosquitto_connect_with_flags_callback_set(mosq) { _, user, rc, flags in
                Core.from(user).connected(rc: rc, sessionPresent: flags & 1 != 0)
            }
            // MQTT 5: the broker's DISCONNECT says why; 3.1.1 brokers just close the socket.
            mosquitto_disconnect_v5_callback_set(mosq) { _, user, rc, _ in
                guard rc == Int32(MQTT_RC_SESSION_TAKEN_OVER.rawValue) else { return }
                Core.from(user).state.withLock { $0.takenOver = true }
            }
            mosquitto_message_callback_set(mosq) { _, user, message in
                guard let message = message?.pointee, let topic = message.topic else { return }
                let core = Core.from(user)
                let count = min(Int(message.payloadlen), Int(core.configuration.maximumPacketSize))
                let payload =
                    count > 0 && message.payload != nil
                    ? UnsafeRawBufferPointer(start: message.payload, count: count) : UnsafeRawBufferPointer(start: nil, count: 0)
                // libmosquitto answers it with a PUBACK (`serve`).
                if message.qos > 0 { core.answeredPacket.store(true, ordering: .relaxed) }
                switch core.receiver {
                case .message(let handler):
                    handler(MQTTMessage(topic: String(cString: topic), payload: Array(payload), qos: Int(message.qos), retained: message.retain))
                case .bytes(let handler):
                    handler(UnsafeBufferPointer(start: UnsafeRawPointer(topic).assumingMemoryBound(to: UInt8.self), count: strlen(topic)), payload)
                }
            }
            // MQTT 5 puts its reason codes where 3.1.1 puts the granted QoS: 0x80 and above
            // refuse in both.
            mosquitto_subscribe_callback_set(mosq) { _, user, mid, count, granted in
                let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, count)))) } ?? []
                Core.from(user).answered(mid: mid, codes: codes)
            }
            mosquitto_publish_callback_set(mosq) { _, user, _ in
                Core.from(user).state.withLock { $0.unacknowledged = max(0, $0.unacknowledged - 1) }
            }
        }

        static func from(_ user: UnsafeMutableRawPointer?) -> Core {
            Unmanaged<Core>.fromOpaque(user!).takeUnretainedValue()
        }

        var isConnected: Bool { state.withLock { $0.subscriptions.connected } }
        var subscriptions: Set<String> { state.withLock { $0.subscriptions.wanted } }

        // MARK: Calls from any thread

        func start() {
            let first = state.withLock { state in
                defer { state.started = true }
                return !state.started
            }
            guard first else { return }
            // The thread holds the core until it ends.
            let thread = Thread { [self] in run() }
            thread.name = "mqtt"
            // Not the default 8 MiB: the link process runs one thread per session under a
            // memory limit that counts stacks (`MQTTLinkChild`); libmosquitto and OpenSSL
            // need far less.
            thread.stackSize = 1 << 20
            thread.start()
        }

        func shutdown(timeout: Duration) async {
            let running = state.withLock { state in
                state.stopping = true
                return state.started && !state.finished
            }
            guard running else { return }
            wake()
            _ = await threadEnd.wait(timeout: timeout)
        }

        func subscribe(_ topic: String) {
            // Under the lock, so a connection being made now cannot miss the topic or
            // subscribe it after an unsubscribe: libmosquitto only queues the packet here.
            let queued = state.withLock { state in
                guard state.subscriptions.add(topic) else { return false }
                return send(subscribe: [topic], &state)
            }
            if queued { wake() }
        }

        /// Sends SUBSCRIBE for `topics` (at most 128, one packet) and remembers its message id
        /// for the SUBACK; under the state's lock, so the answer cannot be read before.
        @discardableResult
        private func send(subscribe topics: some Collection<String>, _ state: inout State) -> Bool {
            var mid: Int32 = 0
            let rc = Self.withCStrings(ArraySlice(topics)) { pointers in
                mosquitto_subscribe_multiple(
                    handle.pointer, &mid, Int32(pointers.count), pointers.baseAddress, Int32(configuration.subscriptionQoS), 0, nil)
            }
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return false }
            state.awaitingGrant[mid] = Array(topics)
            for topic in topics { state.retries[topic] = nil }
            return true
        }

        /// A SUBACK, on the network thread (from `mosquitto_loop_read`): each topic's outcome,
        /// told in order. A refused topic still wanted is asked for again after the backoff.
        fileprivate func answered(mid: Int32, codes: [Int32]) {
            let now = clock()
            let events = state.withLock { state -> [MQTTSubscriptionEvent] in
                guard let topics = state.awaitingGrant.removeValue(forKey: mid) else { return [] }
                return zip(topics, codes).compactMap { topic, code in
                    // Dropped since: the client no longer has anything to say of it.
                    guard state.subscriptions.wanted.contains(topic) else { return nil }
                    guard code >= 0x80 else {
                        state.refusals[topic] = nil
                        return .granted(topic: topic)
                    }
                    let attempt = state.refusals[topic, default: 0]
                    state.refusals[topic] = attempt + 1
                    let delay = configuration.backoff.delay(attempt: attempt, random: Double.random(in: 0...1))
                    state.retries[topic] = now + delay
                    return .refused(topic: topic, code: Int(code), retryIn: delay)
                }
            }
            for event in events { onSubscription(event) }
        }

        /// Asks again for the refused topics whose wait is over; how long until the next one
        /// is due (nil: none waits).
        private func retryRefused() -> Double? {
            let now = clock()
            return state.withLock { state -> Double? in
                // Every turn of the network thread asks: nothing made, nothing sorted, when no
                // refusal waits (the usual case).
                guard !state.retries.isEmpty else { return nil }
                let due = state.retries.filter { $0.value <= now }.keys.sorted()
                for topic in due {
                    state.retries[topic] = nil
                    if state.subscriptions.wanted.contains(topic) { send(subscribe: [topic], &state) }
                }
                return state.retries.values.min().map { max(0, $0 - now) }
            }
        }

        func unsubscribe(_ topic: String) {
            let queued = state.withLock { state in
                state.refusals[topic] = nil
                state.retries[topic] = nil
                guard state.subscriptions.remove(topic) else { return false }
                return mosquitto_unsubscribe(handle.pointer, nil, topic) == MOSQ_ERR_SUCCESS.rawValue
            }
            if queued { wake() }
        }

        func publish(_ topic: String, payload: [UInt8], qos: Int, retain: Bool, expiry: UInt32? = nil) throws(MQTTError) {
            let limit = configuration.maximumUnacknowledgedPublishes
            let admitted: Result<Void, MQTTError> = state.withLock { state in
                guard state.subscriptions.connected else { return .failure(.notConnected) }
                guard qos == 0 || state.unacknowledged < limit else { return .failure(.backlogFull(limit: limit)) }
                if qos > 0 { state.unacknowledged += 1 }
                return .success(())
            }
            try admitted.get()
            var properties: OpaquePointer? = nil
            defer { mosquitto_property_free_all(&properties) }
            if let expiry, configuration.protocolVersion == .v5 {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
            }
            let rc = payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(handle.pointer, nil, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain, properties)
            }
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                if qos > 0 { state.withLock { $0.unacknowledged = max(0, $0.unacknowledged - 1) } }
                throw rc == MOSQ_ERR_NO_CONN.rawValue ? .notConnected : Self.libraryError(rc)
            }
            wake()
        }

        private func wake() {
            wakePipe.wake()
        }

        static func libraryError(_ rc: Int32) -> MQTTError {
            .library(code: rc, message: String(cString: mosquitto_strerror(rc)))
        }

        // MARK: The network thread

        /// Connects, serves the connection until it fails, waits its backoff, and again, until
        /// asked to stop.
        private func run() {
            while !stopping {
                var reason: String
                var (served, tooLarge) = (false, false)
                if state.withLock({ $0.discardPending }), let failure = discardSession() {
                    reason = "cannot discard the broker's session: \(failure)"
                } else {
                    state.withLock { $0.discardPending = false }
                    let connection = connect()
                    if connection == MOSQ_ERR_SUCCESS.rawValue {
                        (reason, tooLarge) = serve()
                        served = true
                    } else {
                        reason = Self.describe(connection)
                    }
                }
                let now = clock()
                let (stop, delay, takenOver, discarding) = state.withLock { state in
                    state.subscriptions.disconnect()
                    // The next connection subscribes to every topic again.
                    state.awaitingGrant = [:]
                    state.retries = [:]
                    if let refusal = state.refusal { reason = refusal }
                    state.refusal = nil
                    let takenOver = state.takenOver
                    state.takenOver = false
                    let delay = state.schedule.ended(at: now, random: Double.random(in: 0...1))
                    // A cluster: the next node, whose copy of the session and of the retained
                    // messages is as good as this one's.
                    state.brokerIndex = (state.brokerIndex + 1) % configuration.brokers.count
                    // Whatever waited for an acknowledgement is resent by libmosquitto on the
                    // next connection of a persistent session, or never.
                    if !configuration.persistentSession { state.unacknowledged = 0 }
                    // Twice running: the broker sent it again, and will at every reconnection.
                    // An attempt that failed says nothing of it.
                    let discarding = tooLarge && state.lastEndedTooLarge && configuration.persistentSession
                    if discarding { state.discardPending = true }
                    if served { state.lastEndedTooLarge = tooLarge && !discarding }
                    return (state.stopping, delay, takenOver, discarding)
                }
                if stop { break }
                let event: MQTTConnectionEvent =
                    if takenOver {
                        .takenOver(retryIn: delay)
                    } else if tooLarge {
                        .packetTooLarge(retryIn: delay, discardingSession: discarding)
                    } else {
                        .disconnected(reason: reason, retryIn: delay)
                    }
                onConnection(event)
                waitForWake(milliseconds: Int32(min(delay * 1000, Double(Int32.max))))
            }
            finish()
        }

        private var stopping: Bool { state.withLock { $0.stopping } }

        /// One blocking connection attempt (DNS, TCP, TLS, CONNECT sent): on this thread, which
        /// has nothing else to do meanwhile. The CONNACK arrives in `serve`.
        /// Where the next attempt goes.
        var currentBroker: MQTTBrokerAddress {
            let index = state.withLock { $0.brokerIndex }
            return configuration.brokers[index]
        }

        private func connect() -> Int32 {
            let broker = currentBroker
            guard configuration.protocolVersion == .v5 else {
                return mosquitto_connect(handle.pointer, broker.host, Int32(broker.port), Int32(configuration.keepAlive))
            }
            // The properties go with every CONNECT: `mosquitto_reconnect` would send none, and
            // without a session expiry an MQTT 5 session ends with its connection.
            var properties: OpaquePointer? = nil
            defer { mosquitto_property_free_all(&properties) }
            if configuration.persistentSession {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), configuration.sessionExpiry)
            }
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), configuration.maximumPacketSize)
            return mosquitto_connect_bind_v5(handle.pointer, broker.host, Int32(broker.port), Int32(configuration.keepAlive), nil, properties)
        }

        /// Ends the broker's session of this client id: a connection of a client of its own with
        /// the clean-session flag (MQTT 5: a clean start, and no session expiry), closed as soon
        /// as the broker accepts it. The broker then forgets the session's subscriptions and
        /// every message it queued or held in flight for it. Blocking, on this thread, within
        /// `discardTimeout`; nil when done, otherwise why not.
        private func discardSession() -> String? {
            guard let mosq = mosquitto_new(configuration.clientID, true, nil) else { return String(cString: strerror(errno)) }
            defer { mosquitto_destroy(mosq) }
            do {
                try Self.configureTransport(mosq, configuration)
            } catch {
                return "\(error)"
            }
            let answer = Answer()
            let retained = Unmanaged.passRetained(answer)
            defer { retained.release() }
            mosquitto_user_data_set(mosq, retained.toOpaque())
            mosquitto_connect_callback_set(mosq) { _, user, rc in
                Unmanaged<Answer>.fromOpaque(user!).takeUnretainedValue().code.withLock { $0 = rc }
            }
            let broker = currentBroker
            // MQTT 5 too: no properties, so no session expiry, and the clean start's session
            // ends with this connection.
            let rc = mosquitto_connect(mosq, broker.host, Int32(broker.port), Int32(configuration.keepAlive))
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return Self.describe(rc) }
            let deadline = ContinuousClock.now + Self.discardTimeout
            while answer.code.withLock({ $0 }) == nil {
                guard !stopping, ContinuousClock.now < deadline else { return "no answer from the broker" }
                let socket = mosquitto_socket(mosq)
                guard socket >= 0 else { return "connection closed" }
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN) | (mosquitto_want_write(mosq) ? Int16(POLLOUT) : 0), revents: 0)
                _ = poll(&descriptor, 1, 100)
                if descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let rc = mosquitto_loop_read(mosq, 1)
                    if rc != MOSQ_ERR_SUCCESS.rawValue { return Self.describe(rc) }
                }
                if mosquitto_socket(mosq) >= 0 && mosquitto_want_write(mosq) {
                    let rc = mosquitto_loop_write(mosq, 1)
                    if rc != MOSQ_ERR_SUCCESS.rawValue { return Self.describe(rc) }
                }
            }
            let code = answer.code.withLock { $0 } ?? 0
            if mosquitto_disconnect(mosq) == MOSQ_ERR_SUCCESS.rawValue {
                for _ in 0..<10 where mosquitto_socket(mosq) >= 0 && mosquitto_want_write(mosq) {
                    var descriptor = pollfd(fd: mosquitto_socket(mosq), events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 100)
                    if mosquitto_loop_write(mosq, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
                }
            }
            guard code == 0 else {
                let reason = configuration.protocolVersion == .v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
                return "the broker refused the connection: \(reason.map { String(cString: $0) } ?? "code \(code)")"
            }
            return nil
        }

        /// How long discarding a session may take.
        static let discardTimeout = Duration.seconds(10)

        /// The CONNACK's code of `discardSession`'s client.
        private final class Answer: Sendable {
            let code = Mutex<Int32?>(nil)
        }

        /// Reads and writes until the connection ends or the client stops; why it ended, and
        /// whether because a packet from the broker did not fit in memory.
        private func serve() -> (reason: String, tooLarge: Bool) {
            let mosq = handle.pointer
            // A keep-alive ping is due `keepAlive` seconds after the last packet out; waking
            // four times as often sends it at most a quarter late, well within the 1.5 × the
            // broker allows.
            let tick = Int32(max(1, configuration.keepAlive / 4) * 1000)
            var descriptors = [pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0), pollfd()]
            while true {
                if stopping {
                    disconnect()
                    return ("stopped", false)
                }
                let socket = mosquitto_socket(mosq)
                guard socket >= 0 else { return ("connection closed", false) }
                let retry = retryRefused().map { Int32(max(1, min(Double(tick), ($0 * 1000).rounded(.up)))) }
                descriptors[1] = pollfd(fd: socket, events: Int16(POLLIN) | (mosquitto_want_write(mosq) ? Int16(POLLOUT) : 0), revents: 0)
                let ready = poll(&descriptors, 2, retry ?? tick)
                if ready < 0 && errno != EINTR { return ("poll: \(String(cString: strerror(errno)))", false) }
                if descriptors[0].revents != 0 { drainWake() }
                let events = descriptors[1].revents
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    answeredPacket.store(false, ordering: .relaxed)
                    let rc = mosquitto_loop_read(mosq, 1)
                    // What reading allocates is the packet coming in (and a copy of its payload):
                    // out of memory there is a packet larger than this process may hold.
                    if rc != MOSQ_ERR_SUCCESS.rawValue { return (Self.describe(rc), rc == MOSQ_ERR_NOMEM.rawValue) }
                    // A QoS 1 message is answered with a PUBACK, written below, which carries
                    // the ACK of everything received: no delayed ACK to turn off, and a system
                    // call less per message. Any other packet (a PUBACK to a publish of ours, a
                    // QoS 0 message, a SUBACK, a PINGRESP) gets no answer that would.
                    if !answeredPacket.load(ordering: .relaxed) { Self.acknowledgeQuickly(socket) }
                }
                if mosquitto_socket(mosq) >= 0 && (events & Int16(POLLOUT) != 0 || mosquitto_want_write(mosq)) {
                    let rc = mosquitto_loop_write(mosq, 1)
                    if rc != MOSQ_ERR_SUCCESS.rawValue { return (Self.describe(rc), false) }
                }
                let rc = mosquitto_loop_misc(mosq)
                if rc != MOSQ_ERR_SUCCESS.rawValue { return (Self.describe(rc), false) }
            }
        }

        /// Turns delayed ACKs off again (Linux turns them back on by itself): a broker that
        /// answers our QoS 1 publishes with a PUBACK and keeps Nagle's algorithm on (mosquitto's
        /// default) holds its next message until that PUBACK is acknowledged, and a delayed ACK
        /// takes up to 40 ms — measured as a 21 ms median for pushes at 200/s, 0.15 ms without.
        private static func acknowledgeQuickly(_ socket: Int32) {
            var on: Int32 = 1
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
        }

        /// Sends DISCONNECT, so a broker does not publish a will or wait a keep-alive to
        /// notice, and gives it a moment to leave.
        private func disconnect() {
            let mosq = handle.pointer
            guard mosquitto_disconnect(mosq) == MOSQ_ERR_SUCCESS.rawValue else { return }
            for _ in 0..<10 where mosquitto_socket(mosq) >= 0 {
                var descriptor = pollfd(fd: mosquitto_socket(mosq), events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
                if mosquitto_loop_write(mosq, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
            }
        }

        /// The CONNACK, on this thread (from `mosquitto_loop_read`).
        fileprivate func connected(rc: Int32, sessionPresent: Bool) {
            guard rc == 0 else {
                let reason = configuration.protocolVersion == .v5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc)
                state.withLock { $0.refusal = "the broker refused the connection: \(reason.map { String(cString: $0) } ?? "code \(rc)")" }
                return
            }
            let now = clock()
            state.withLock { state in
                // Not a reset of the backoff: that waits until the connection has lasted.
                state.schedule.connected(at: now)
                let (subscribe, unsubscribe) = state.subscriptions.connect(sessionPresent: sessionPresent)
                // In packets of a bounded size, whatever the number of topics.
                for chunk in stride(from: 0, to: subscribe.count, by: 128) {
                    send(subscribe: subscribe[chunk..<min(chunk + 128, subscribe.count)], &state)
                }
                for chunk in stride(from: 0, to: unsubscribe.count, by: 128) {
                    Self.withCStrings(unsubscribe[chunk..<min(chunk + 128, unsubscribe.count)]) { topics in
                        _ = mosquitto_unsubscribe_multiple(handle.pointer, nil, Int32(topics.count), topics.baseAddress, nil)
                    }
                }
            }
            onConnection(.connected(broker: currentBroker, sessionPresent: sessionPresent))
        }

        private func waitForWake(milliseconds: Int32) {
            var descriptor = pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0)
            let deadline = ContinuousClock.now + .milliseconds(milliseconds)
            while !stopping {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return }
                let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                if poll(&descriptor, 1, max(1, milliseconds)) > 0 { drainWake() }
            }
        }

        private func drainWake() {
            wakePipe.drain()
        }

        private func finish() {
            state.withLock { state in
                state.finished = true
                state.subscriptions.disconnect()
            }
            threadEnd.end()
        }

        private static func describe(_ rc: Int32) -> String {
            if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
            return String(cString: mosquitto_strerror(rc))
        }

        private static func withCStrings<R>(_ strings: ArraySlice<String>, _ body: (UnsafeMutableBufferPointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
            var pointers = strings.map { strdup($0) }
            defer { pointers.forEach { free($0) } }
            return pointers.withUnsafeMutableBufferPointer { body($0) }
        }
    }

    /// The libmosquitto client, destroyed with the core that owns it.
    fileprivate final class Handle: @unchecked Sendable {
        // @unchecked: libmosquitto in threaded mode locks its own state for every call made
        // from another thread than the network thread.
        let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { self.pointer = pointer }

        deinit { mosquitto_destroy(pointer) }
    }
}
