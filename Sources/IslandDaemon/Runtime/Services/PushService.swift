import Dispatch
import IslandCore
import Logging
import MQTT
import ServiceLifecycle
import Synchronization

/// The connection to the push broker (`[Push]`), as one service of the daemon's group: it
/// connects and keeps connecting (with backoff) while the daemon runs, and disconnects
/// cleanly when it stops.
///
/// What arrives is handed to the engine on its event loop, and the client's network thread
/// waits until the push is decided — its place in the order fixed — before it reads the next
/// one; the outcome's feedback goes out once it is committed. At most `window` pushes wait for
/// their commit (they share the store's group commits): beyond, the network thread waits too.
/// So the daemon holds a bounded number of pushes, a flood stays in the TCP connection and at
/// the broker (bounded by its queue limits), the network thread never touches the engine's
/// state, and the loop never waits for the broker.
final class PushService: Service {
    /// Pushes decided but not yet committed, at most.
    static let window = 64

    let client: MQTTClient
    let link: MQTTPushLink
    private let logger: Logger

    init(configuration: MQTTConfiguration, engine: IslandEngine, logger: Logger) throws(IslandDaemon.StartError) {
        self.logger = logger
        let broker = configuration.broker
        let uncommitted = DispatchSemaphore(value: Self.window)
        do {
            // The link is made once the client exists; the closure reaches it through `box`.
            let box = LinkBox()
            client = try MQTTClient(configuration, onMessage: { message in
                uncommitted.wait()
                let decided = Once()
                engine.perform { engine in
                    engine.receivePush(topic: message.topic, payload: message.payload, decided: { decided.signal() }) { feedback in
                        box.link?.publish(message.topic + "/" + PushToken.feedbackLevel, payload: feedback.payload)
                        decided.signal()
                        uncommitted.signal()
                    }
                }
                decided.wait()
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

    /// A semaphore signalled at most once: a push is decided, or refused before that.
    private final class Once: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let signalled = Mutex(false)

        func signal() {
            let first = signalled.withLock { done in
                defer { done = true }
                return !done
            }
            if first { semaphore.signal() }
        }

        func wait() { semaphore.wait() }
    }

    /// Set once, before the client starts; read on its network thread.
    private final class LinkBox: @unchecked Sendable {
        // @unchecked: written once in `init`, before `start()` makes the thread that reads it.
        var link: MQTTPushLink?
    }
}
