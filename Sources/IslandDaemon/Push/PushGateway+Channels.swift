import IslandCore
import IslandStore
import Logging
import OrderedCollections
import OrderedJSON
import Synchronization
import VarlinkCore

/// Broadcast channels: activities that listen to a channel of their app (`Request` with
/// `channel`), and what its backend publishes there, applied to each of them as their owner's
/// update or end — the same timestamp order, budgets and limits as a push to a token.
///
/// A channel's subscription is kept as a push token row whose token is the channel's topic, a
/// `#` and the activity's id: `#` is no character of a topic, so no token row is ever read as
/// one, and the row goes with its activity as a token's does.
extension PushGateway {
    /// `Request` with a channel: the engine's own `request`, with the activity and its
    /// subscription one decision and one commit. A key that finds an activity started before
    /// returns it, listening to the channel it had (or to this one, when it had none).
    func request<Reply: Sendable>(
        channel id: String, alsoToken: Bool, app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?,
        ownerGone: OwnerGonePolicy, sourceApp: String?, uid: UInt32?, decided: @escaping @Sendable () -> Void,
        prepare: @escaping @Sendable ((Activity, Bool, String?)) -> Reply, completion: @escaping IslandEngine.Completion<Reply>
    ) {
        let channel: PushChannel
        do throws(EngineError) {
            guard let push else { throw EngineError.pushUnavailable(reason: Self.pushOff) }
            do {
                channel = try PushChannel(root: push.root, app: app, id: id)
            } catch {
                throw EngineError.refused(error)
            }
            guard !alsoToken else {
                throw EngineError.refused(.invalidChannel(channel: id, reason: "a Request names a channel or asks for a push token, not both"))
            }
        } catch {
            decided()
            completion(.failure(error))
            return
        }
        // Decided once the broker holds the channel's subscription (at once when an activity
        // of the device listens to it already): a refused one starts nothing.
        let decide: @Sendable (isolated PushGateway) -> Void = { gateway in
            gateway.onEngine { engine in
                gateway.request(
                    on: engine, channel: channel, app: app, type: type, attributes: attributes, content: content, key: key,
                    ownerGone: ownerGone, sourceApp: sourceApp, uid: uid, decided: decided, prepare: prepare, completion: completion)
            }
        }
        guard push?.channels.entries(topic: channel.topic).isEmpty == true else { return decide(self) }
        let refused: @Sendable () -> EngineError = {
            .refused(.invalidChannel(channel: id, reason: "the push broker refused this device's subscription to it (its ACL)"))
        }
        awaitGrant(of: channel.topic, refused: refused) { gateway, error in
            if let error {
                gateway.dropIfUnused(channel.topic)
                decided()
                completion(.failure(error))
                return
            }
            decide(gateway)
            gateway.dropIfUnused(channel.topic)
        }
    }

    /// The decision of `request(channel:…)`, on the engine.
    private func request<Reply: Sendable>(
        on engine: isolated IslandEngine, channel: PushChannel, app: String, type: String, attributes: JSONObject,
        content: ActivityContent, key: String?, ownerGone: OwnerGonePolicy, sourceApp: String?, uid: UInt32?,
        decided: @escaping @Sendable () -> Void,
        prepare: @escaping @Sendable ((Activity, Bool, String?)) -> Reply, completion: @escaping IslandEngine.Completion<Reply>
    ) {
        let entitlement = engine.entitlement(for: app)
        let owner = engine.owner(app: app, uid: uid)
        engine.decide(
            decided: decided,
            { manager, now throws(IslandError) in
                let result = try manager.request(
                    app: app, uid: owner.uid, type: type, attributes: attributes, content: content, key: key,
                    ownerGonePolicy: ownerGone, sourceApp: sourceApp, entitlement: entitlement, now: now)
                return ((result.activity, result.created, nil as String?), result.events)
            },
            alsoStore: { (result: (Activity, Bool, String?)) in
                assumeIsolated { gateway in gateway.listen(to: channel, activity: result.0.id, owner: owner) }
            }, prepare: prepare, completion: completion)
    }

    /// Makes activity `id` listen to `channel`, unless it listens to one already: subscribed
    /// now (when no activity of the device listened to it), and the row to commit.
    func listen(to channel: PushChannel, activity id: String, owner: ActivityOwner) -> [StoreMutation] {
        guard push != nil, push?.channels.byActivity[id] == nil else { return [] }
        let entry = ChannelSubscriptions.Entry(channel: channel, activity: id, owner: owner)
        if let topic = push!.channels.add(entry).subscribe { push?.broker.subscribe(topic) }
        return [.putPushToken(entry.stored)]
    }

    /// Activity `id` is going: it listens no more, and its row goes with it.
    func leaveChannel(activity id: String) -> [StoreMutation] {
        let held = background.forget(activity: id) ? [HeldChannelMessages.drop(activity: id)] : []
        guard let (entry, unsubscribe) = push?.channels.remove(activity: id) else { return held }
        if let unsubscribe { push?.broker.unsubscribe(unsubscribe) }
        return held + [.deletePushToken(token: entry.stored.token)]
    }

    /// The channel subscriptions of `stored` rows (the others are tokens), for activities that
    /// are still there; the rows of those gone, to delete.
    func channelEntries(from stored: [StoredPushToken], root: String) -> (entries: [ChannelSubscriptions.Entry], dropped: [StoreMutation]) {
        var entries: [ChannelSubscriptions.Entry] = []
        var dropped: [StoreMutation] = []
        for row in stored where row.token.contains(ChannelSubscriptions.Entry.rowSeparator) {
            guard let entry = ChannelSubscriptions.Entry(row, root: root), onEngine({ $0.manager.activity(id: entry.activity) != nil }) else {
                dropped.append(.deletePushToken(token: row.token))
                continue
            }
            entries.append(entry)
        }
        return (entries, dropped)
    }

    /// After a failed commit the disk is the truth: channel subscriptions as stored, and the
    /// broker's subscriptions to match.
    func restoreChannels(from stored: StoredState) {
        guard let current = push else { return }
        let before = Set(current.channels.topics)
        push?.channels = ChannelSubscriptions(channelEntries(from: stored.pushTokens, root: current.root).entries)
        let after = Set(push?.channels.topics ?? [])
        for topic in before.subtracting(after) { current.broker.unsubscribe(topic) }
        for topic in after.subtracting(before) { current.broker.subscribe(topic) }
        background = BackgroundUpdates()
        holdStored(stored.settings)
    }

    /// Holds the channel messages at priority 1 that `settings` kept (`HeldChannelMessages`),
    /// to apply once the island rests; deletes the rows of those that can no longer apply.
    func holdStored(_ settings: [String: JSON]) {
        guard let push else { return }
        let (held, dropped) = HeldChannelMessages.read(from: settings, channels: push.channels, now: engine.clock())
        for (entry, request) in held {
            background.hold((entry.owner, request), activity: entry.activity, timestamp: request.timestamp)
        }
        guard !dropped.isEmpty else { return }
        let logger = engine.logger
        onEngine { engine in
            engine.commit(dropped) { result in
                if case .failure(let error) = result {
                    logger.error("could not drop held channel messages that can no longer apply", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    // MARK: Messages

    /// Applies what arrived on `topic` as `receiveChannel` does, if it is a channel's message
    /// rather than a token's push — a channel an activity listens to, or one none listens to
    /// any more — and says whether it was. The topic is looked up once, for both.
    func receiveIfChannel(topic: String, payload: [UInt8], completion: @escaping @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void) -> Bool {
        // The state is read where it is, not copied: this runs for every message.
        let listened = inPlace { ($0.channels.entries(topic: topic), $0.device) }
        if let (entries, device) = listened, let channel = entries.first?.channel {
            receive(payload, on: channel, entries: entries, device: device, completion: completion)
            return true
        }
        guard PushChannel.hasChannelShape(topic) && PushChannel(topic: topic) != nil else { return false }
        dropUnlistened(topic, pushOn: listened != nil, completion: completion)
        return true
    }

    /// Applies a message received on channel `topic` to every activity of the device that
    /// listens to it, each as its owner's update or end, in the order the activities
    /// subscribed; `completion` gets the answers to publish (each with its topic) once every
    /// one is decided and committed: none unless the message asks for them (`feedback`).
    func receiveChannel(topic: String, payload: [UInt8], completion: @escaping @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void) {
        let listened = inPlace { ($0.channels.entries(topic: topic), $0.device) }
        guard let (entries, device) = listened, let channel = entries.first?.channel else {
            return dropUnlistened(topic, pushOn: listened != nil, completion: completion)
        }
        receive(payload, on: channel, entries: entries, device: device, completion: completion)
    }

    /// A message on a channel no activity listens to any more (an unsubscribe the broker has
    /// not had yet), or with push off: nothing to apply, no answer.
    private func dropUnlistened(
        _ topic: String, pushOn: Bool, completion: @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void
    ) {
        if pushOn { push?.broker.unsubscribe(topic) }
        completion([])
    }

    /// The message `payload` on `channel`, applied to the activities of `entries` (not empty).
    private func receive(
        _ payload: [UInt8], on channel: PushChannel, entries: [ChannelSubscriptions.Entry], device: String,
        completion: @escaping @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void
    ) {
        let receivedAt = engine.clock()
        let message: ChannelMessage
        do throws(PushRefusal) {
            message = try ChannelMessage.decode(payload, channel: channel, now: receivedAt)
        } catch {
            engine.logger.notice(
                "a message on a broadcast channel was not applied",
                metadata: [
                    "channel": "\(channel)", "error": "\(error.name)", "parameters": "\(JSON.object(error.parameters))",
                ])
            let request = try? PushPayload.decode(payload)
            completion(
                ChannelMessage.asksForFeedback(payload)
                    ? [(channel.feedbackTopic(device: device), PushFeedback(request: request, refusal: error, receivedAt: receivedAt))] : [])
            return
        }
        let request = message.request
        // Nobody is told that a message asking no answers is applied: the broker had its
        // acknowledgement before islandd had the message (PROTOCOL.md), and no answer is
        // published. So its commit need not wait for the disk: it survives `kill -9`, and what
        // a power cut may take of it is what a device that was off missed — which a `latest`
        // channel's broker hands over again at the next start (docs/design.md §8, §12). An
        // answered message (`feedback`) is committed as a token's push is, before its answer.
        let syncing = message.wantsFeedback
        // The answers' topic is written only for a message that asks for them: most ask for none.
        let answers = ChannelAnswers(
            expected: entries.count, topic: message.wantsFeedback ? channel.feedbackTopic(device: device) : nil, completion: completion)
        // What an answer tells of the request, captured instead of the whole request (its
        // content, alert and the rest), which each activity's completion would copy and free.
        let (timestamp, event) = (request.timestamp, request.event)
        for entry in entries {
            let (owner, id) = (entry.owner, entry.activity)
            @Sendable func finish<T>(_ result: Result<T, EngineError>, _ outcome: (T) -> PushFeedback.Outcome) {
                // No answer is made for a message that asks for none: only counted.
                guard answers.wanted else { return answers.add(nil) }
                let outcome: PushFeedback.Outcome =
                    switch result {
                    case .success(let value): outcome(value)
                    case .failure(let error): VarlinkError(error).refusal
                    }
                answers.add(PushFeedback(timestamp: timestamp, event: event, outcome: outcome, receivedAt: receivedAt))
            }
            switch request.event {
            case .update where request.priority == .background:
                let now = engine.clock()
                let busyUntil = onEngine { $0.presenters.busyUntil(now: now) }
                switch background.offer((owner, request), activity: id, timestamp: request.timestamp, busyUntil: busyUntil, now: now) {
                case .applyNow:
                    pushUpdate(request, owner: owner, activity: id, syncing: syncing) { finish($0) { $0 } }
                case .held(let until):
                    hold(payload, request: request, activity: id) { result in
                        finish(result) { _ in .throttled(activity: id, deliverAt: until) }
                    }
                }
            case .update:
                pushUpdate(request, owner: owner, activity: id, syncing: syncing) { finish($0) { $0 } }
            case .end:
                let dismissal = request.dismissal(receivedAt: receivedAt)
                onEngine { engine in
                    engine.end(
                        app: owner.app, uid: owner.uid, id: id, content: request.content, dismissal: dismissal,
                        timestamp: request.timestamp, syncing: syncing, prepare: { $0.id }
                    ) { result in
                        finish(result) { .applied(activity: $0) }
                    }
                }
            case .start:
                // Refused by `ChannelMessage.decode` already; answered, so the count completes.
                answers.add(PushFeedback(request: request, refusal: .refused(.broadcastStart(channel: channel.id)), receivedAt: receivedAt))
            }
        }
    }
}

extension PushGateway {
    /// Keeps a channel update at priority 1 that the busy island holds: `completion` once its
    /// row is committed (the answer `throttled` goes only then), or with the failure — and then
    /// it is not held either, unless a later one replaced it meanwhile.
    private func hold(_ payload: [UInt8], request: PushRequest, activity id: String, completion: @escaping @Sendable (Result<Void, EngineError>) -> Void) {
        onEngine { engine in
            engine.apply([], alsoStore: [HeldChannelMessages.keep(activity: id, payload: payload)], prepare: {}) { _, result in
                if case .failure = result {
                    self.assumeIsolated { gateway in
                        if gateway.background.holds(activity: id, timestamp: request.timestamp) { gateway.background.forget(activity: id) }
                    }
                }
                completion(result)
            }
        }
    }

    /// Applies the channel updates at priority 1 held while the island was busy, once no island
    /// is: each as its owner's update, spending nothing, its row deleted in the same commit;
    /// their answers went when they were held.
    func releaseBackground() {
        guard !background.isEmpty else { return }
        let now = engine.clock()
        let busyUntil = onEngine { $0.presenters.busyUntil(now: now) }
        for held in background.release(busyUntil: busyUntil, now: now) {
            let logger = engine.logger
            let row = HeldChannelMessages.drop(activity: held.activity)
            pushUpdate(held.update.request, owner: held.update.owner, activity: held.activity, alsoStore: [row]) { result in
                guard case .failure(let error) = result else { return }
                // Usually a later message applied meanwhile (StaleTimestamp), or the activity
                // ended: what a held message is expected to meet, not worth a notice. A refusal
                // is decided at once, on the engine, before anything else is held: its row goes
                // now. (After a failed commit the disk is the truth, the row with it.)
                logger.debug(
                    "a channel update held while the island was busy was not applied",
                    metadata: ["activity": "\(held.activity)", "error": "\(VarlinkError(error).name)"])
                if case .refused = error {
                    self.onEngine { engine in engine.commit([row]) { _ in } }
                }
            }
        }
    }
}

extension VarlinkError {
    /// The error as a push's refusal.
    fileprivate var refusal: PushFeedback.Outcome { .refused(name: name, parameters: parameters) }
}

extension ChannelMessage {
    /// Whether a payload that could not be applied asked for answers: read from its top level
    /// alone, so a malformed `aps` is still answered when the backend asked.
    static func asksForFeedback(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= PushChannel.maximumPayloadBytes,
            let top = (try? JSONParser.parse(bytes, maximumDepth: 4))?.objectValue
        else { return false }
        return top["feedback"]?.boolValue == true
    }
}

/// The answers to one channel message, one per activity that listens, handed on together
/// once the last is in (each arrives when its decision is committed). `topic`: where they go,
/// nil when the message asked for none (then none are kept, and none handed on).
private final class ChannelAnswers: Sendable {
    private let state: Mutex<(left: Int, answers: [PushFeedback])>
    private let topic: String?
    private let completion: @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void

    init(expected: Int, topic: String?, completion: @escaping @Sendable ([(topic: String, feedback: PushFeedback)]) -> Void) {
        state = Mutex((expected, []))
        self.topic = topic
        self.completion = completion
    }

    /// Whether the message asked for answers: otherwise `add` only counts.
    var wanted: Bool { topic != nil }

    /// One activity's answer (nil where none is wanted).
    func add(_ feedback: PushFeedback?) {
        let done: [PushFeedback]? = state.withLock { state in
            state.left -= 1
            if let feedback, topic != nil { state.answers.append(feedback) }
            return state.left == 0 ? state.answers : nil
        }
        guard let done else { return }
        completion(topic.map { topic in done.map { (topic, $0) } } ?? [])
    }
}

extension ChannelSubscriptions.Entry {
    /// Between the channel's topic and the activity's id in a row's token: no topic has it.
    static let rowSeparator: Character = "#"

    /// The entry as the store keeps it.
    var stored: StoredPushToken {
        StoredPushToken(token: "\(channel.topic)\(Self.rowSeparator)\(activity)", app: owner.app, uid: owner.uid, activityID: activity)
    }

    /// A stored row as an entry, if it is a channel subscription under `root` and whole.
    init?(_ row: StoredPushToken, root: String) {
        guard let separator = row.token.lastIndex(of: Self.rowSeparator), let id = row.activityID,
            row.token[row.token.index(after: separator)...] == id,
            let channel = PushChannel(topic: String(row.token[..<separator])), channel.root == root, channel.app == row.app
        else { return nil }
        self.init(channel: channel, activity: id, owner: ActivityOwner(app: row.app, uid: row.uid))
    }
}
