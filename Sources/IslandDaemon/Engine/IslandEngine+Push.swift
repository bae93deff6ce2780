import IslandCore
import OrderedJSON
import IslandStore
import Logging
import OrderedCollections
import VarlinkCore

/// Push (DESIGN.md §12): the tokens an app asks for, and what servers send through them.
///
/// A push is a producer's call in another form: it goes through the same operations as a
/// local `Update`, `End` or `Request` of the token's owner — the same ordering by timestamp,
/// budgets, limits, the user's switch — and its outcome, once committed, is the feedback.
extension IslandEngine {
    // MARK: Push on

    /// Turns push on, with the tokens the store kept, and subscribes to each. Tokens made for
    /// another client id or root (the configuration changed) no longer reach this device, and
    /// those of activities gone meanwhile grant nothing: both are dropped.
    func enablePush(root: String, device: String, broker: any PushBroker, stored: [StoredPushToken]) {
        var entries: [PushRegistry.Entry] = []
        var dropped: [StoreMutation] = []
        for row in stored {
            guard let entry = PushRegistry.Entry(row, root: root, device: device) else {
                dropped.append(.deletePushToken(token: row.token))
                continue
            }
            if case .activity(let id, _) = entry.grant, manager.activity(id: id) == nil {
                dropped.append(.deletePushToken(token: row.token))
                continue
            }
            entries.append(entry)
        }
        let state = PushState(root: root, device: device, broker: broker, registry: PushRegistry(entries))
        push = state
        for topic in state.registry.topics { broker.subscribe(topic) }
        if !dropped.isEmpty {
            logger.warning("dropped push tokens that no longer address this device or an activity", metadata: ["tokens": "\(dropped.count)"])
            store.commit(dropped) { [logger] result in
                if case .failure(let error) = result { logger.error("could not drop stale push tokens", metadata: ["error": "\(error)"]) }
            }
        }
    }

    /// After a failed commit the disk is the truth: tokens as stored, subscriptions to match.
    func restorePushTokens(from stored: StoredState) {
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

    /// Revokes a dismissed activity's token: unsubscribed now, deleted with the activity's row.
    func revokePushToken(activity id: String) -> StoreMutation? {
        guard let entry = push?.registry.revoke(activity: id) else { return nil }
        stopListening(to: entry.token, because: "dismissed")
        return .deletePushToken(token: entry.token.topic)
    }

    /// Unsubscribes from a revoked token at once; the notice on its feedback topic, the last
    /// the server hears of it, goes once the revocation is committed (`publishRevocations`),
    /// after the feedback of the push that ended the activity.
    private func stopListening(to token: PushToken, because reason: String) {
        guard push != nil else { return }
        push?.broker.unsubscribe(token.topic)
        push?.revocations.append((token, reason))
    }

    /// Publishes the notices of the tokens revoked by committed decisions.
    func publishRevocations() {
        guard let push, !push.revocations.isEmpty else { return }
        self.push?.revocations = []
        for (token, reason) in push.revocations {
            let revoked = PushFeedback(timestamp: nil, event: nil, outcome: .revoked(reason: reason), receivedAt: clock())
            push.broker.publish(token.feedbackTopic, payload: revoked.payload)
        }
    }

    // MARK: The app's tokens

    /// The tokens the device listens to: nil while push is off.
    var pushTokenCount: Int? { push?.registry.entries.count }

    /// The tokens of `activities`, in their order, for their own app's replies.
    func pushTokens(of activities: [Activity]) -> [String?] {
        activities.map { push?.registry.token(activity: $0.id)?.topic }
    }

    /// `Request` with a push token: the activity and its token are one decision and one commit.
    /// A key that finds an activity started before returns it with the token it has (a new one
    /// when it had none).
    func requestWithPushToken<Reply: Sendable>(
        app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?, ownerGone: OwnerGonePolicy,
        uid: UInt32?, decided: @Sendable () -> Void = {}, prepare: @escaping @Sendable ((Activity, Bool, String?)) -> Reply,
        completion: @escaping Completion<Reply>
    ) {
        let token: PushToken
        do throws(EngineError) {
            guard let push else { throw EngineError.pushUnavailable(reason: Self.pushOff) }
            token = try push.makeToken(app: app)
        } catch {
            completion(.failure(error))
            return
        }
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        decide(decided: decided, { manager, now throws(IslandError) in
            let result = try manager.request(app: app, uid: owner.uid, type: type, attributes: attributes, content: content, key: key,
                                             ownerGonePolicy: ownerGone, entitlement: entitlement, now: now)
            let existing = push?.registry.token(activity: result.activity.id)
            return ((result.activity, result.created, (existing ?? token).topic), result.events)
        }, alsoStore: { (result: (Activity, Bool, String?)) in
            guard push?.registry.token(activity: result.0.id) == nil else { return [] }
            return issue(token, activity: result.0.id, owner: owner)
        }, prepare: prepare, completion: completion)
    }

    /// The activity's push token, made when it has none or when `rotate` asks for a new one.
    func pushToken(app: String, uid: UInt32?, id: String, rotate: Bool) async throws(EngineError) -> String {
        guard let push else { throw .pushUnavailable(reason: Self.pushOff) }
        let owner = owner(app: app, uid: uid)
        guard let activity = manager.activity(id: id), activity.owner == owner else { throw .noSuchActivity(id) }
        guard activity.isLive else { throw .refused(.activityEnded(id: id, state: activity.state)) }
        if !rotate, let existing = push.registry.token(activity: id) { return existing.topic }
        let token = try push.makeToken(app: app)
        let before = push.registry.token(activity: id)
        let mutations = issue(token, activity: id, owner: owner)
        do {
            try await commitAndWait(mutations)
        } catch {
            // Back to the token it had, unless something replaced or revoked it meanwhile.
            if self.push?.registry.token(activity: id) == token {
                _ = self.push?.registry.revoke(activity: id)
                self.push?.broker.unsubscribe(token.topic)
                self.push?.revocations.removeAll { $0.token == before }
                if let before { _ = issue(before, activity: id, owner: owner) }
            }
            throw error
        }
        publishRevocations()
        if let activity = manager.activity(id: id) {
            watchers.tell(owner: owner, activity: id, .pushToken(activity, token: token.topic))
        }
        return token.topic
    }

    /// The owner's push-to-start token for `type`, made when there is none or when `rotate`
    /// asks for a new one.
    func pushToStartToken(app: String, uid: UInt32?, type: String, rotate: Bool) async throws(EngineError) -> String {
        guard let push else { throw .pushUnavailable(reason: Self.pushOff) }
        guard type.utf8.count <= ActivityLimits.maximumTypeBytes else {
            throw .refused(.typeTooLong(limit: ActivityLimits.maximumTypeBytes, size: type.utf8.count))
        }
        guard entitlement(for: app).entitled else { throw .refused(.unentitled(app: app)) }
        let owner = owner(app: app, uid: uid)
        if !rotate, let existing = push.registry.startToken(owner: owner, type: type) { return existing.topic }
        let token = try push.makeToken(app: app)
        let replaced: PushRegistry.Entry?
        do {
            replaced = try self.push!.registry.setStartToken(token, owner: owner, type: type)
        } catch {
            throw .refused(error)
        }
        push.broker.subscribe(token.topic)
        if let replaced { stopListening(to: replaced.token, because: "rotated") }
        var mutations: [StoreMutation] = [.putPushToken(self.push!.registry.entry(topic: token.topic)!.stored)]
        if let replaced { mutations.append(.deletePushToken(token: replaced.token.topic)) }
        do {
            try await commitAndWait(mutations)
        } catch {
            if self.push?.registry.startToken(owner: owner, type: type) == token {
                self.push?.broker.unsubscribe(token.topic)
                if let replaced {
                    self.push?.revocations.removeAll { $0.token == replaced.token }
                    _ = try? self.push?.registry.setStartToken(replaced.token, owner: owner, type: type)
                    if let lastStart = replaced.lastStart { self.push?.registry.recordStart(topic: replaced.token.topic, timestamp: lastStart) }
                    self.push?.broker.subscribe(replaced.token.topic)
                }
            }
            throw error
        }
        publishRevocations()
        watchers.tell(owner: owner, .pushToStartToken(type: type, token: token.topic))
        return token.topic
    }

    /// Gives activity `id` the token, replacing the one it had: subscribed now, and the rows
    /// to commit.
    private func issue(_ token: PushToken, activity id: String, owner: ActivityOwner) -> [StoreMutation] {
        guard push != nil else { return [] }
        let replaced = push!.registry.setToken(token, activity: id, owner: owner)
        push?.broker.subscribe(token.topic)
        var mutations: [StoreMutation] = [.putPushToken(PushRegistry.Entry(token: token, grant: .activity(id: id, owner: owner)).stored)]
        if let replaced {
            stopListening(to: replaced.token, because: "rotated")
            mutations.append(.deletePushToken(token: replaced.token.topic))
        }
        return mutations
    }

    static let pushOff = "push is off: islandd.conf has no [Push] Broker="

    // MARK: What servers send

    /// Applies a push received on `topic`, as its token's owner would, and answers with its
    /// outcome once that is committed (or refused). Pushes are decided in the order this is
    /// called, and answered in that order: a refusal decided at once (a redelivered duplicate)
    /// waits for the answers of the pushes before it, still committing.
    func receivePush(topic: String, payload: [UInt8], completion: @escaping @Sendable (PushFeedback) -> Void) {
        let ticket = pushAnswers.enqueue(completion)
        decidePush(topic: topic, payload: payload) { feedback in
            // On the engine: every outcome is found there (at once, or when its commit finishes).
            self.assumeIsolated { engine in
                for (deliver, answer) in engine.pushAnswers.answer(ticket, feedback) { deliver(answer) }
            }
        }
    }

    private func decidePush(topic: String, payload: [UInt8], completion answer: @escaping @Sendable (PushFeedback) -> Void) {
        let receivedAt = clock()
        // Every push that reaches the device gets exactly one answer; a numbered one also says
        // how many numbers before it never arrived (pushes a broker dropped), noted here, in
        // the order pushes arrive.
        let decoded: Result<PushRequest, PushRefusal>
        do throws(PushRefusal) {
            decoded = .success(try PushPayload.decode(payload))
        } catch {
            decoded = .failure(error)
        }
        var sequence: Int?
        var missed = 0
        if push?.registry.entry(topic: topic) != nil, case .success(let request) = decoded, let number = request.sequence {
            sequence = number
            missed = push?.registry.receive(sequence: number, topic: topic) ?? 0
        }
        let completion: @Sendable (PushFeedback) -> Void = { [sequence, missed] feedback in
            var feedback = feedback
            feedback.sequence = sequence
            feedback.missed = missed
            answer(feedback)
        }
        func refuse(_ request: PushRequest?, _ refusal: PushRefusal) {
            completion(PushFeedback(request: request, refusal: refusal, receivedAt: receivedAt))
        }
        guard let push, let entry = push.registry.entry(topic: topic) else {
            // Revoked, rotated, or held by a session from before a restart: nothing to do
            // with it, and no reason to hear of it again.
            self.push?.broker.unsubscribe(topic)
            refuse(try? decoded.get(), .noSuchToken)
            return
        }
        let request: PushRequest
        switch decoded {
        case .success(let decoded):
            request = decoded
        case .failure(let error):
            refuse(nil, error)
            return
        }
        let owner = entry.grant.owner
        @Sendable func finish<T>(_ result: Result<T, EngineError>, _ outcome: (T) -> PushFeedback.Outcome) {
            switch result {
            case .success(let value):
                completion(PushFeedback(timestamp: request.timestamp, event: request.event, outcome: outcome(value), receivedAt: receivedAt))
            case .failure(let error):
                let named = VarlinkError(error)
                completion(PushFeedback(timestamp: request.timestamp, event: request.event,
                                        outcome: .refused(name: named.name, parameters: named.parameters), receivedAt: receivedAt))
            }
        }
        switch (entry.grant, request.event) {
        case (.activity(let id, _), .update):
            update(app: owner.app, uid: owner.uid, id: id, content: request.content!, alert: request.alert, timestamp: request.timestamp,
                   prepare: { $0 }) { result in
                finish(result) { outcome in
                    outcome.throttled
                        ? .throttled(activity: id, deliverAt: outcome.deliverAt, alertSuppressed: outcome.alertSuppressed)
                        : .applied(activity: id, alertSuppressed: outcome.alertSuppressed)
                }
            }
        case (.activity(let id, _), .end):
            let dismissal: DismissalPolicy = switch request.dismissalDate {
            case nil: .default
            case let date? where date <= receivedAt: .immediate
            case let date?: .after(date)
            }
            end(app: owner.app, uid: owner.uid, id: id, content: request.content, dismissal: dismissal, timestamp: request.timestamp,
                prepare: { $0.id }) { result in
                finish(result) { .applied(activity: $0) }
            }
        case (.start(_, let type), .start) where request.attributesType != type:
            refuse(request, .invalidPayload(reason: "aps.attributes-type is \(request.attributesType ?? "missing"); this token starts activities of type \(type)"))
        case (.start(_, let type), .start):
            start(request, type: type, owner: owner, topic: topic) { result in
                finish(result) { .applied(activity: $0.0, pushToken: $0.1) }
            }
        case (.activity, .start):
            refuse(request, .invalidPayload(reason: "a start needs a push-to-start token; this is an activity's push token"))
        case (.start, .update), (.start, .end):
            refuse(request, .invalidPayload(reason: "an \(request.event.rawValue) needs the activity's push token; this is a push-to-start token"))
        }
    }

    /// A start through a push-to-start token: the new activity, the token's last start and
    /// (with `input-push-token`) the activity's own token are one decision and one commit.
    private func start(_ request: PushRequest, type: String, owner: ActivityOwner, topic: String,
                       completion: @escaping Completion<(String, String?)>) {
        do {
            try push?.registry.checkStart(topic: topic, timestamp: request.timestamp, now: clock())
        } catch {
            completion(.failure(.refused(error)))
            return
        }
        var activityToken: PushToken?
        if request.wantsPushToken {
            do {
                activityToken = try push?.makeToken(app: owner.app)
            } catch {
                completion(.failure(error))
                return
            }
        }
        let entitlement = entitlement(for: owner.app)
        let (attributes, content) = (request.attributes ?? [:], request.content ?? ActivityContent(state: [:]))
        decide({ manager, now throws(IslandError) in
            // A server is no process that can die: its activities keep through every
            // producer's coming and going (`keep`), like those of an app that never said.
            let result = try manager.request(app: owner.app, uid: owner.uid, type: type, attributes: attributes, content: content,
                                             ownerGonePolicy: .keep, entitlement: entitlement, now: now)
            return ((result.activity.id, activityToken?.topic), result.events)
        }, alsoStore: { (result: (String, String?)) in
            var mutations: [StoreMutation] = []
            if let entry = push?.registry.recordStart(topic: topic, timestamp: request.timestamp) {
                mutations.append(.putPushToken(entry.stored))
            }
            if let activityToken { mutations += issue(activityToken, activity: result.0, owner: owner) }
            return mutations
        }, prepare: { $0 }) { result in
            if case .success(let (id, token?)) = result {
                self.assumeIsolated { engine in
                    if let activity = engine.manager.activity(id: id) {
                        engine.watchers.tell(owner: owner, activity: id, .pushToken(activity, token: token))
                    }
                }
            }
            completion(result)
        }
    }
}
