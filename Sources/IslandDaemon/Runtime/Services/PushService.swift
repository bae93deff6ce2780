import Dispatch
import IslandCore
import Logging
import MQTT
import ServiceLifecycle

/// The connection to the push broker (`[Push]`), as one service of the daemon's group: it
/// connects and keeps connecting (with backoff) while the daemon runs, and disconnects
/// cleanly when it stops.
///
/// What arrives is handed to the engine on its event loop, one message at a time: the
/// client's network thread waits until the engine has committed the push's outcome and the
/// feedback is queued. So the daemon holds at most one push — a flood stays in the TCP
/// connection and at the broker (bounded by its queue limits), never in this process, and
/// the network thread never touches the engine's state. The loop never waits for the broker.
final class PushService: Service {
    let client: MQTTClient
    let link: MQTTPushLink
    private let logger: Logger

    init(configuration: MQTTConfiguration, engine: IslandEngine, logger: Logger) throws(IslandDaemon.StartError) {
        self.logger = logger
        let broker = configuration.broker
        do {
            // The link is made once the client exists; the closure reaches it through `box`.
            let box = LinkBox()
            client = try MQTTClient(configuration, onMessage: { message in
                let answered = DispatchSemaphore(value: 0)
                engine.perform { engine in
                    engine.receivePush(topic: message.topic, payload: message.payload) { feedback in
                        box.link?.publish(message.topic + "/" + PushToken.feedbackLevel, payload: feedback.payload)
                        answered.signal()
                    }
                }
                answered.wait()
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
