import Dispatch
import IslandCore
import Logging
import MQTT
import ServiceLifecycle

/// The connection to the push broker (`[Push]`), as one service of the daemon's group: it
/// connects and keeps connecting (with backoff) while the daemon runs, and disconnects
/// cleanly when it stops.
///
/// What arrives is handed to the engine on its event loop, in order (the loop runs what one
/// thread hands it in the order it was handed), and its feedback goes out once its outcome is
/// committed. At most `window` pushes are in the daemon at once — handed over and not yet
/// committed; beyond, the client's network thread waits, so a flood stays in the TCP
/// connection and at the broker (bounded by its queue limits), never in this process. The
/// network thread never touches the engine's state, and the loop never waits for the broker.
///
/// The network thread does not wait for each push to be applied: it goes back to its socket
/// at once, so the broker's next message is acknowledged (at the TCP level too) without delay.
/// Waiting held the acknowledgement back long enough for a broker with Nagle's algorithm on
/// (mosquitto's default) to hold its next message for a delayed ACK: 20 ms at the median at
/// 200 pushes/s, against 0.15 ms.
final class PushService: Service {
    /// Pushes handed to the engine and not yet committed, at most.
    static let window = 64

    let client: MQTTClient
    let link: MQTTPushLink
    /// The client id, and the device level of the tokens' topics.
    var device: String { client.clientID }
    private let logger: Logger

    init(configuration: MQTTConfiguration, engine: IslandEngine, logger: Logger) throws(IslandDaemon.StartError) {
        self.logger = logger
        let broker = configuration.broker
        let room = DispatchSemaphore(value: Self.window)
        do {
            // The link is made once the client exists; the closure reaches it through `box`.
            let box = LinkBox()
            client = try MQTTClient(configuration, onMessage: { message in
                room.wait()
                engine.perform { engine in
                    engine.receivePush(topic: message.topic, payload: message.payload) { feedback in
                        // Named by the token's public id, never by its secret; a topic that is
                        // no token has no feedback.
                        if let topic = PushToken.feedbackTopic(of: message.topic) {
                            box.link?.publish(topic, payload: feedback.payload)
                        }
                        room.signal()
                    }
                }
            }, onConnection: { event in
                switch event {
                case .connected(let sessionPresent):
                    logger.info("connected to the push broker", metadata: ["broker": "\(broker)", "session_present": "\(sessionPresent)"])
                case .disconnected(let reason, let retryIn):
                    logger.warning("no connection to the push broker", metadata: [
                        "broker": "\(broker)", "reason": "\(reason)", "retry_in": "\(Int((retryIn * 1000).rounded())) ms",
                    ])
                }
            })
            link = MQTTPushLink(client: client, logger: logger)
            box.link = link
        } catch {
            throw .configuration("[Push]: \(error)")
        }
    }

    func run() async throws {
        client.start()
        try? await gracefulShutdown()
        await client.shutdown()
    }

    /// Set once, before the client starts; read on its network thread.
    private final class LinkBox: @unchecked Sendable {
        // @unchecked: written once in `init`, before `start()` makes the thread that reads it.
        var link: MQTTPushLink?
    }
}
