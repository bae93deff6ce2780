import Dispatch
import Foundation
import IslandCore
import Logging
import MQTT
import ServiceLifecycle
import Synchronization

/// The connection to the push broker (`[Push]`), as one service of the daemon's group: it
/// connects and keeps connecting (with backoff) while the daemon runs, and disconnects
/// cleanly when it stops.
///
/// What arrives is handed to the push gateway (`PushGateway.receive`, which makes it an engine
/// call) on the engine's event loop, in order (the loop runs what one thread hands it in the
/// order it was handed), and its feedback goes out once its outcome is committed. At most
/// `window` pushes are in the daemon at once — handed over and not yet committed; beyond, the
/// app's session waits: its network thread (in the link process, whom the daemon tells of each
/// push done; in this process without one) waits for a slot before it hands the push on, so a
/// flood stays in that app's TCP connection and at the broker (bounded by its queue limits),
/// never in this process, and never in front of another app's pushes. The sessions share the
/// window (`MessageWindow`): an app's first push goes in at once (16 slots are kept for apps
/// holding none), and a freed slot goes to the waiting app that holds the fewest — so an app's
/// first push in the window is handed over at once, a later one once fewer than 48 are in (no
/// app holding more taking another meanwhile), and each is decided behind at most 63 others.
/// The daemon's own bound holds whatever the link process does: the loop, which reads the
/// link's frames itself (`LinkLoopReader`), stops reading once 64 pushes are in. The network
/// thread never touches the engine's state, and the loop never waits for the broker.
///
/// Each app holding tokens has a session of its own at the broker (`MQTTPushLink`), and the
/// libmosquitto clients run in a link process under a memory limit (`MQTTLinkProcess`).
///
/// The network thread does not wait for each push to be applied: it goes back to its socket
/// at once, so the broker's next message is acknowledged (at the TCP level too) without delay.
/// Waiting held the acknowledgement back long enough for a broker with Nagle's algorithm on
/// (mosquitto's default) to hold its next message for a delayed ACK: 20 ms at the median at
/// 200 pushes/s, against 0.15 ms.
final class PushService: Service {
    /// Pushes handed to the engine and not yet committed, at most, across all sessions, and
    /// how the sessions (one per app) share them: an app's first push goes in at once, and a
    /// freed slot goes to the app that holds the fewest (`MessageWindow`).
    static let window = MessageWindow.pushes

    /// The device's own session: where it connects, and whether it is connected now.
    var client: any MQTTSession { link.device }
    let link: MQTTPushLink
    /// The link process, when the clients run in one.
    private let process: MQTTLinkProcess?
    /// The client id, and the device level of the tokens' topics.
    let device: String
    private let logger: Logger

    /// `linkHeadroom`: `[Push] LinkHeadroom=`, nil for the default.
    init(configuration: MQTTConfiguration, linkHeadroom: Int? = nil, gateway: PushGateway, logger: Logger) throws(IslandDaemon.StartError) {
        self.logger = logger
        device = configuration.clientID
        // The node list of a cluster, in the order tried.
        let broker = configuration.brokers.map(\.description).joined(separator: " ")
        let executable = PushLinkProcess.executable.withLock { $0 }
        let headroom = PushLinkProcess.headroom(configured: linkHeadroom, environment: ProcessInfo.processInfo.environment)
        // What bounds a packet from the broker, for the log.
        let limit =
            executable == nil
            ? "islandd can allocate"
            : headroom > 0
                ? "the MQTT link process can hold, so nothing of it reached islandd: the link process may allocate "
                    + "\(Self.mebibytes(headroom)) beyond what it holds at its start and its sessions' share ([Push] LinkHeadroom=), "
                    + "and a packet takes twice its size there (libmosquitto holds it and a copy of its payload)"
                : "the MQTT link process can hold, so nothing of it reached islandd"
        // The link is made after the handlers; they reach it through `box`.
        let box = LinkBox()
        /// Hands `message` to the gateway; `done` once its outcome is committed and answered.
        /// The caller holds a place in the window for it, which `done` frees.
        @Sendable func handOver(_ message: MQTTMessage, done: @escaping @Sendable () -> Void) {
            // Told apart on the loop, where the channels listened to are known: a lookup, where
            // reading the topic's levels cost as much as the rest of the hand-over.
            gateway.perform { gateway in
                let channel = gateway.receiveIfChannel(topic: message.topic, payload: message.payload) { answers in
                    for (topic, feedback) in answers { box.link?.publish(topic, payload: feedback.payload) }
                    done()
                }
                guard !channel else { return }
                gateway.receive(topic: message.topic, payload: message.payload) { feedback in
                    // Named by the token's public id, never by its secret; a topic that is
                    // no token has no feedback.
                    if let topic = PushToken.feedbackTopic(of: message.topic) {
                        box.link?.publish(topic, payload: feedback.payload)
                    }
                    done()
                }
            }
        }
        let stableAfter = configuration.backoff.stableAfter
        @Sendable func onConnection(_ clientID: String) -> MQTTClient.ConnectionHandler {
            let watch = SessionWatchBox(stableAfter: stableAfter)
            return { event in
                switch event {
                case .connected(let node, let sessionPresent):
                    // The node reached, of a cluster's list: after a failover, the next one.
                    logger.info(
                        "connected to the push broker",
                        metadata: [
                            "broker": "\(node)", "client_id": "\(clientID)", "session_present": "\(sessionPresent)",
                        ])
                    watch.connected(at: MQTTClient.monotonicSeconds())
                case .disconnected(let reason, let retryIn):
                    logger.warning(
                        "no connection to the push broker",
                        metadata: [
                            "broker": "\(broker)", "client_id": "\(clientID)", "reason": "\(reason)",
                            "retry_in": "\(Int((retryIn * 1000).rounded())) ms",
                        ])
                    if watch.ended(at: MQTTClient.monotonicSeconds(), takenOver: false) {
                        logger.error("\(SessionWatch.flapping(clientID: clientID))", metadata: ["broker": "\(broker)"])
                    }
                case .packetTooLarge(let retryIn, let discarding):
                    let retry = "\(Int((retryIn * 1000).rounded())) ms"
                    watch.endedOtherwise()
                    let text =
                        discarding
                        ? "the push broker sent this session's oversized message again, as it will at every reconnection until "
                            + "the message is acknowledged: discarding the session at the broker, with every push it queued for this "
                            + "app (a server that numbers its pushes sees them as missed), and subscribing again in a new one"
                        : "the push broker sent a message larger than \(limit); the connection was given up. "
                            + "A broker's max_packet_size refuses such messages at the broker"
                    logger.error("\(text)", metadata: ["broker": "\(broker)", "client_id": "\(clientID)", "retry_in": "\(retry)"])
                case .takenOver(let retryIn):
                    logger.warning(
                        "the push broker gave this device's session to another client with its ClientID",
                        metadata: [
                            "broker": "\(broker)", "client_id": "\(clientID)", "retry_in": "\(Int((retryIn * 1000).rounded())) ms",
                        ])
                    if watch.ended(at: MQTTClient.monotonicSeconds(), takenOver: true) {
                        logger.error("\(SessionWatch.takenOver(clientID: clientID))", metadata: ["broker": "\(broker)"])
                    }
                }
            }
        }
        do {
            if let executable {
                // The link's frames are read on the engine's loop, which hands each push to the
                // gateway at once and keeps the daemon's bound by not reading while it is full;
                // on a loop no socket can be read on (tests), by a thread of the link's own,
                // which waits for a place before it hands a push on.
                let loopReader = LinkLoopReader(loop: gateway.engine.loop, window: LoopWindow(loop: gateway.engine.loop, capacity: Self.window.capacity))
                let room = DispatchSemaphore(value: Self.window.capacity)
                let process = try MQTTLinkProcess(
                    executable: executable, arguments: [PushLinkProcess.option, String(headroom)],
                    frameLimit: MQTTLinkProcess.frameLimit(for: configuration), backoff: configuration.backoff,
                    reader: loopReader, log: { logger.warning("\($0)") })
                self.process = process
                // The link process shares the window among its sessions (`MQTTLinkChild`): here
                // one reader takes every session's messages, and must not wait for any one.
                link = try MQTTPushLink(configuration: configuration, logger: logger) { configuration throws(MQTTError) in
                    let session = SessionBox()
                    session.session = try process.session(
                        configuration,
                        onMessage: { message in
                            if let window = loopReader?.window {
                                window.enter()
                                handOver(message) {
                                    session.session?.messageDone()
                                    window.leave()
                                }
                            } else {
                                room.wait()
                                handOver(message) {
                                    session.session?.messageDone()
                                    room.signal()
                                }
                            }
                        },
                        onConnection: onConnection(configuration.clientID), onSubscription: { box.link?.answered($0) })
                    return session.session!
                }
            } else {
                process = nil
                // Each client's own network thread calls its handler, and waits there for its
                // share and for a place in the daemon's bound.
                let window = MessageWindowGate(Self.window)
                let room = DispatchSemaphore(value: Self.window.capacity)
                link = try MQTTPushLink(configuration: configuration, logger: logger) { configuration throws(MQTTError) in
                    let name = configuration.clientID
                    return try MQTTClient(
                        configuration,
                        onMessage: { message in
                            window.enter(name)
                            room.wait()
                            handOver(message) {
                                room.signal()
                                window.leave(name)
                            }
                        }, onConnection: onConnection(configuration.clientID), onSubscription: { box.link?.answered($0) })
                }
            }
        } catch {
            throw .configuration("[Push]: \(error)")
        }
        box.link = link
    }

    func run() async throws {
        link.start()
        try? await gracefulShutdown()
        await link.shutdown()
    }

    /// The watch, for the network thread's events.
    private final class SessionWatchBox: Sendable {
        private let watch: Mutex<SessionWatch>

        init(stableAfter: Double) { watch = Mutex(SessionWatch(stableAfter: stableAfter)) }

        func connected(at now: Double) { watch.withLock { $0.connected(at: now) } }
        func ended(at now: Double, takenOver: Bool) -> Bool { watch.withLock { $0.ended(at: now, takenOver: takenOver) } }
        func endedOtherwise() { watch.withLock { $0.endedOtherwise() } }
    }

    static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }

    /// A link process's session, for its own handler: set once, before it starts.
    private final class SessionBox: @unchecked Sendable {
        // @unchecked: written once, before `start()` makes the threads that read it.
        var session: MQTTLinkProcess.Session?
    }

    /// Set once, before the link starts; read on its threads.
    private final class LinkBox: @unchecked Sendable {
        // @unchecked: written once in `init`, before `start()` makes the threads that read it.
        var link: MQTTPushLink?
    }
}

/// Tells, once per run, that this device's session at the broker is being taken from it: the
/// broker said so (MQTT 5's "session taken over", which some brokers send), or it closed the
/// connection soon after accepting it `shortInARow` times running — what mosquitto does to the
/// older of two connections with one client id, without a word. Two devices configured with
/// one `ClientID=` take the session from each other for as long as both run (and split the
/// pushes); the log says so once, not at every reconnection. Pure: times are arguments.
struct SessionWatch {
    /// Connections ended before `stableAfter` in a row, before it is said.
    static let shortInARow = 3

    let stableAfter: Double
    private var connectedAt: Double?
    private var short = 0
    private(set) var told = false

    init(stableAfter: Double) {
        self.stableAfter = stableAfter
    }

    mutating func connected(at now: Double) {
        connectedAt = now
    }

    /// The connection, or an attempt, ended at `now`: whether to say it now.
    mutating func ended(at now: Double, takenOver: Bool) -> Bool {
        defer { connectedAt = nil }
        if takenOver {
            short = Self.shortInARow
        } else if let connectedAt {
            short = now - connectedAt < stableAfter ? short + 1 : 0
        } else {
            // An attempt that failed: the broker is away or refuses, which is said otherwise.
            return false
        }
        guard short >= Self.shortInARow, !told else { return false }
        told = true
        return true
    }

    /// The connection ended for a reason the log tells itself (a packet too large to hold),
    /// which says nothing of another client with this id.
    mutating func endedOtherwise() {
        connectedAt = nil
    }

    static func takenOver(clientID: String) -> String {
        "another client connected to the push broker with this device's ClientID=\(clientID) and took its session: the broker "
            + "keeps only the latest connection of one id, so the two take it from each other (and split the pushes) until one "
            + "stops. Give each device a ClientID and credentials of its own. Reconnecting ever more slowly"
    }

    static func flapping(clientID: String) -> String {
        "the push broker closed this device's connection soon after accepting it \(shortInARow) times running: most likely "
            + "another client connects with the same ClientID=\(clientID) (a broker keeps only the latest connection of one id, "
            + "and the two then take it from each other), or the broker's limits drop this client. Give each device a ClientID "
            + "and credentials of its own. Reconnecting ever more slowly"
    }
}
