import IslandCore
import IslandStore
import Logging
import NIOCore
import OrderedJSON

/// Push (docs/design.md §12) as a client of the engine: the tokens apps ask for
/// (PushGateway+Tokens.swift), and what servers send through them
/// (PushGateway+Incoming.swift: where an MQTT push becomes an engine call).
///
/// A push is a producer's call in another form: the gateway calls the same operations as a
/// local `Update`, `End` or `Request` of the token's owner — the same ordering by timestamp,
/// budgets, limits, the user's switch — and its outcome, once committed, is the feedback. It
/// hears of the engine's changes as an `EngineObserver`: a dismissed activity's token is
/// revoked in the same commit, and the notice goes once that commit is over. The engine knows
/// nothing of push.
///
/// It runs on the engine's event loop (its executor is the engine's), so it calls the engine
/// without a hop and the engine calls it back the same way.
actor PushGateway {
    nonisolated let engine: IslandEngine
    nonisolated var unownedExecutor: UnownedSerialExecutor { engine.unownedExecutor }

    /// The tokens and the broker link; nil while push is off.
    var push: PushState?
    /// The answers to pushes, held until those to earlier pushes are out.
    var answers = AnswersInOrder<PushFeedback>()
    /// Channel updates at priority 1 held while the island is busy, the latest per activity.
    var background = BackgroundUpdates<(owner: ActivityOwner, request: PushRequest)>()

    init(engine: IslandEngine) {
        self.engine = engine
    }

    static let pushOff = "push is off: islandd.conf has no [Push] Broker="

    /// `body` on the push state where it is kept; nil while push is off. Reading `push?.…` or
    /// `let push` copies the whole state (it holds an existential, so it is copied and
    /// destroyed member by member, ~800 instructions), so what every message reads is read
    /// here, in place. `body` must not touch `push` itself (it holds the state's access).
    func inPlace<T>(_ body: (inout PushState) -> T) -> T? {
        // A mutating call through `?.` reaches the state where it is; a match, a comparison
        // with nil or a read copies it.
        push?.inPlace(body)
    }

    /// Runs `body` on the gateway when the engine would run it (`IslandEngine.perform`): the two
    /// share one executor, so being on the engine is being on the gateway.
    nonisolated func perform(_ body: @escaping @Sendable (isolated PushGateway) -> Void) {
        engine.perform { _ in self.onLoop(body) }
    }

    /// Runs `body` on the gateway from the engine's loop's thread: `assumeIsolated` without
    /// its check at run time, as `IslandEngine.onLoop` does for the engine (the check asks the
    /// concurrency runtime, ~400 instructions, and a channel message passed four). Sound only
    /// where the loop's thread runs the caller — work the engine runs, or the engine's calls
    /// to its observer — as the gateway's executor is the engine's, its loop. Debug builds
    /// check.
    nonisolated func onLoop<T>(_ body: (isolated PushGateway) -> T) -> T {
        assert(engine.isOnLoop, "the push gateway was entered off the engine's event loop")
        return withUncheckedIsolation(body)
    }

    /// Runs `body` on the engine, whose loop this runs on: no hop.
    nonisolated func onEngine<T: Sendable>(_ body: (isolated IslandEngine) throws -> T) rethrows -> T {
        try engine.assumeIsolated(body)
    }

    // MARK: Push on

    /// Turns push on, with the tokens the store kept, and subscribes to each. Tokens made for
    /// another client id or root (the configuration changed) no longer reach this device, and
    /// those of activities gone meanwhile grant nothing: both are dropped.
    /// `held`: the stored settings, with the channel messages at priority 1 held when the
    /// daemon stopped (`HeldChannelMessages`), applied once the island rests
    /// (`releaseBackground`). `subscriptionTimeout`: how long a reply waits for the broker to
    /// grant a new token's or channel's subscription.
    func enable(
        root: String, device: String, broker: any PushBroker, stored: [StoredPushToken], held: [String: JSON] = [:],
        subscriptionTimeout: Duration = PushState.defaultSubscriptionTimeout
    ) {
        var entries: [PushRegistry.Entry] = []
        var dropped: [StoreMutation] = []
        let (channels, droppedChannels) = channelEntries(from: stored, root: root)
        dropped += droppedChannels
        for row in stored where !row.token.contains(ChannelSubscriptions.Entry.rowSeparator) {
            guard let entry = PushRegistry.Entry(row, root: root, device: device) else {
                dropped.append(.deletePushToken(token: row.token))
                continue
            }
            if case .activity(let id, _) = entry.grant, onEngine({ $0.manager.activity(id: id) == nil }) {
                dropped.append(.deletePushToken(token: row.token))
                continue
            }
            entries.append(entry)
        }
        var state = PushState(root: root, device: device, broker: broker, registry: PushRegistry(entries))
        state.channels = ChannelSubscriptions(channels)
        state.subscriptionTimeout = subscriptionTimeout
        push = state
        onEngine { $0.observer = self }
        for topic in state.registry.topics + state.channels.topics { broker.subscribe(topic) }
        holdStored(held)
        if !dropped.isEmpty {
            let logger = engine.logger
            logger.warning("dropped push tokens that no longer address this device or an activity", metadata: ["tokens": "\(dropped.count)"])
            engine.store.commit(dropped) { result in
                if case .failure(let error) = result { logger.error("could not drop stale push tokens", metadata: ["error": "\(error)"]) }
            }
        }
    }

    /// The tokens the device listens to: nil while push is off.
    var tokenCount: Int? { push?.registry.entries.count }

    /// The tokens of `activities`, in their order, for their own app's replies.
    func tokens(of activities: [Activity]) -> [String?] {
        activities.map { push?.registry.token(activity: $0.id)?.topic }
    }

    // MARK: Revocation

    /// Revokes a dismissed activity's token: unsubscribed now, deleted with the activity's row.
    func revokeToken(activity id: String) -> StoreMutation? {
        guard let entry = push?.registry.revoke(activity: id) else { return nil }
        stopListening(to: entry.token, because: "dismissed")
        return .deletePushToken(token: entry.token.topic)
    }

    /// Unsubscribes from a revoked token at once; the notice on its feedback topic, the last
    /// the server hears of it, goes once the revocation is committed (`publishRevocations`),
    /// after the feedback of the push that ended the activity.
    func stopListening(to token: PushToken, because reason: String) {
        guard push != nil else { return }
        push?.broker.unsubscribe(token.topic)
        push?.revocations.append((token, reason))
    }

    /// Publishes the notices of the tokens revoked by committed decisions, retained: a token is
    /// never live again, and a server that pushes to it later — the device no longer listens,
    /// so nothing else answers — hears of the revocation the moment it subscribes to the
    /// feedback, not after a wait that blames the connection.
    func publishRevocations() {
        // Asked after every commit: the state is copied only when there is something to publish.
        guard inPlace({ !$0.revocations.isEmpty }) == true, let push else { return }
        self.push?.revocations = []
        let now = engine.clock()
        for (token, reason) in push.revocations {
            let revoked = PushFeedback(timestamp: nil, event: nil, outcome: .revoked(reason: reason), receivedAt: now)
            push.broker.publish(token.feedbackTopic, payload: revoked.payload, retain: true)
        }
    }

    /// After a failed commit the disk is the truth: tokens as stored, subscriptions to match.
    func restoreTokens(from stored: StoredState) {
        guard let current = push else { return }
        // What was revoked is back, or never was: no notice.
        push?.revocations = []
        let before = Set(current.registry.topics)
        let entries = stored.pushTokens.compactMap { PushRegistry.Entry($0, root: current.root, device: current.device) }
        push?.registry = PushRegistry(entries)
        let after = Set(push?.registry.topics ?? [])
        for topic in before.subtracting(after) { current.broker.unsubscribe(topic) }
        for topic in after.subtracting(before) { current.broker.subscribe(topic) }
    }
}

/// What the engine tells push, on its loop.
extension PushGateway: EngineObserver {
    nonisolated func removing(activity id: String) -> [StoreMutation] {
        assumeIsolated { gateway in (gateway.revokeToken(activity: id).map { [$0] } ?? []) + gateway.leaveChannel(activity: id) }
    }

    // The engine calls these on its loop, as it ends a commit or a turn: unchecked (`onLoop`).
    nonisolated func committed() {
        onLoop { gateway in
            gateway.publishRevocations()
            // Do Not Disturb coming on takes an alert down with a decision, not a timer.
            gateway.releaseBackground()
        }
    }

    nonisolated func islandMayRest() {
        onLoop { $0.releaseBackground() }
    }

    nonisolated func restored(from stored: StoredState) {
        assumeIsolated { gateway in
            gateway.restoreTokens(from: stored)
            gateway.restoreChannels(from: stored)
        }
    }
}
