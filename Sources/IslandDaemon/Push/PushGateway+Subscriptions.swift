import IslandCore
import NIOCore
import Synchronization

/// A token or a channel is handed to a client only once the broker holds its subscription: a
/// server publishes to a token the moment it has it, and a broker delivers nothing published
/// to a topic before its subscription — the push would be lost without a word. So each reply
/// that hands out a topic new to the broker waits for the broker's grant (its SUBACK), and
/// fails by name when the broker denies it (MQTT 5's "not authorized": its ACL), or refuses it
/// (for a reason it does not name, as MQTT 3.1.1 never does) and does not grant it when asked
/// again before `PushState.subscriptionTimeout`, or does not answer by then.
extension PushGateway {
    /// Subscribes to `topic` and calls `then` on the gateway once the broker holds it (nil), or
    /// with the error to reply: `refused` when the broker refused it, `PushUnavailable` when it
    /// did not answer in time. Whatever the answer, a reply no longer waits for `topic` after
    /// it; the caller then hands the topic out or lets it go (`dropIfUnused`).
    func awaitGrant(
        of topic: String, refused: @escaping @Sendable () -> EngineError,
        then: @escaping @Sendable (isolated PushGateway, EngineError?) -> Void
    ) {
        guard let push else {
            then(self, .pushUnavailable(reason: Self.pushOff))
            return
        }
        self.push?.awaitingGrant[topic, default: 0] += 1
        let timeout = push.subscriptionTimeout
        let wait = GrantWait()
        let answer: @Sendable (EngineError?) -> Void = { [self] error in
            guard wait.finish() else { return }
            perform { gateway in
                gateway.push?.awaitingGrant[topic, default: 1] -= 1
                if gateway.push?.awaitingGrant[topic] == 0 { gateway.push?.awaitingGrant[topic] = nil }
                then(gateway, error)
            }
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let late = engine.loop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            // A broker that refused it meanwhile (for a reason it did not name) is taken at its word.
            answer(
                wait.refused
                    ? refused()
                    : .pushUnavailable(reason: "the push broker did not confirm the subscription within \(Self.describe(seconds)) s (is it reachable?)"))
        }
        push.broker.subscribe(topic) { reply in
            switch reply {
            case .granted:
                late.cancel()
                answer(nil)
            case .denied:
                late.cancel()
                answer(refused())
            case .refused:
                // The session asks again with its backoff: a cluster node may grant it soon.
                wait.noteRefused()
            }
        }
    }

    /// `awaitGrant`, for an async caller: nil once the broker holds `topic`, or the error.
    func awaitGrant(of topic: String, refused: @escaping @Sendable () -> EngineError) async -> EngineError? {
        await withCheckedContinuation { (continuation: CheckedContinuation<EngineError?, Never>) in
            assumeIsolated { gateway in
                gateway.awaitGrant(of: topic, refused: refused) { _, error in continuation.resume(returning: error) }
            }
        }
    }

    /// Unsubscribes from `topic` when nothing holds it: no token, no activity on its channel,
    /// and no reply waiting for its grant (a refused topic, a request that found its activity
    /// with a token of its own, a decision refused).
    func dropIfUnused(_ topic: String) {
        guard let push, push.awaitingGrant[topic] == nil, push.registry.entry(topic: topic) == nil,
            push.channels.entries(topic: topic).isEmpty
        else { return }
        push.broker.unsubscribe(topic)
    }

    /// Why a token's subscription failed, for its client.
    static func tokenRefused(app: String) -> @Sendable () -> EngineError {
        {
            .pushUnavailable(
                reason: "the push broker refused this device's subscription to a token of \(app): its ACL must let the device "
                    + "read its own tokens' topics")
        }
    }

    private static func describe(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// One wait for a grant: the first of the answers (the broker's, the timeout's) goes through,
/// and whether the broker refused it meanwhile.
private final class GrantWait: Sendable {
    private let state = Mutex((finished: false, refused: false))

    func finish() -> Bool {
        state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
    }

    func noteRefused() { state.withLock { $0.refused = true } }
    var refused: Bool { state.withLock { $0.refused } }
}
