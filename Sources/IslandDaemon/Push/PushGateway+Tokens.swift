import IslandCore
import OrderedJSON
import IslandStore

/// The apps' tokens: asked for with `Request`, `PushToken` and `PushToStartToken`, kept with
/// the activities' rows, and rotated or revoked.
extension PushGateway {
    /// `Request` with a push token: the engine's own `request`, with the activity and its token
    /// one decision and one commit. A key that finds an activity started before returns it
    /// with the token it has (a new one when it had none).
    func request<Reply: Sendable>(
        app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?, ownerGone: OwnerGonePolicy,
        sourceApp: String? = nil, start: Double? = nil, alert: Alert? = nil, uid: UInt32?, decided: @escaping @Sendable () -> Void = {},
        prepare: @escaping @Sendable ((Activity, Bool, String?)) -> Reply, completion: @escaping IslandEngine.Completion<Reply>
    ) {
        let token: PushToken
        do throws(EngineError) {
            guard let push else { throw EngineError.pushUnavailable(reason: Self.pushOff) }
            token = try push.makeToken(app: app)
        } catch {
            completion(.failure(error))
            return
        }
        // Decided once the broker holds the token's subscription, so that no activity is
        // started with a token the broker would not deliver to; a key that finds an activity
        // with a token of its own lets the new one go.
        awaitGrant(of: token.topic, refused: Self.tokenRefused(app: app)) { gateway, error in
            if let error {
                gateway.dropIfUnused(token.topic)
                decided()
                completion(.failure(error))
                return
            }
            let registry = gateway.push?.registry
            gateway.onEngine { engine in
                gateway.request(
                    on: engine, registry: registry, token: token, app: app, type: type, attributes: attributes,
                    content: content, key: key, ownerGone: ownerGone, sourceApp: sourceApp, start: start, alert: alert, uid: uid,
                    decided: decided, prepare: prepare, completion: completion)
            }
            gateway.dropIfUnused(token.topic)
        }
    }

    /// The decision of `request`, on the engine.
    private func request<Reply: Sendable>(
        on engine: isolated IslandEngine, registry: PushRegistry?, token: PushToken, app: String, type: String, attributes: JSONObject,
        content: ActivityContent, key: String?, ownerGone: OwnerGonePolicy, sourceApp: String?, start: Double?, alert: Alert?, uid: UInt32?,
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
                    ownerGonePolicy: ownerGone, sourceApp: sourceApp, start: start, alert: alert,
                    entitlement: entitlement, now: now)
                let existing = registry?.token(activity: result.activity.id)
                return ((result.activity, result.created, (existing ?? token).topic), result.events)
            },
            alsoStore: { (result: (Activity, Bool, String?)) in
                assumeIsolated { gateway in
                    guard gateway.push?.registry.token(activity: result.0.id) == nil else { return [] }
                    return gateway.issue(token, activity: result.0.id, owner: owner)
                }
            }, prepare: prepare, completion: completion)
    }
    /// The activity's push token, made when it has none or when `rotate` asks for a new one.
    func token(app: String, uid: UInt32?, id: String, rotate: Bool) async throws(EngineError) -> String {
        guard let push else { throw .pushUnavailable(reason: Self.pushOff) }
        let owner = try liveActivity(app: app, uid: uid, id: id)
        if !rotate, let existing = push.registry.token(activity: id) { return existing.topic }
        let token = try push.makeToken(app: app)
        if let error = await awaitGrant(of: token.topic, refused: Self.tokenRefused(app: app)) {
            dropIfUnused(token.topic)
            throw error
        }
        // The activity may have ended, or got a token from another call, while the broker answered.
        do throws(EngineError) {
            _ = try liveActivity(app: app, uid: uid, id: id)
        } catch {
            dropIfUnused(token.topic)
            throw error
        }
        guard let current = self.push else { throw .pushUnavailable(reason: Self.pushOff) }
        if !rotate, let existing = current.registry.token(activity: id) {
            dropIfUnused(token.topic)
            return existing.topic
        }
        let before = current.registry.token(activity: id)
        let mutations = issue(token, activity: id, owner: owner)
        do {
            try await commit(mutations)
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
        onEngine { engine in
            if let activity = engine.manager.activity(id: id) {
                engine.watchers.tell(owner: owner, activity: id, .pushToken(activity, token: token.topic))
            }
        }
        return token.topic
    }

    /// The owner of activity `id` of `app`, when the activity is there, the caller's and live.
    private func liveActivity(app: String, uid: UInt32?, id: String) throws(EngineError) -> ActivityOwner {
        let (owner, activity) = onEngine { engine in
            let owner = engine.owner(app: app, uid: uid)
            return (owner, engine.manager.activity(id: id))
        }
        guard let activity, activity.owner == owner else { throw .noSuchActivity(id) }
        guard activity.isLive else { throw .refused(.activityEnded(id: id, state: activity.state)) }
        return owner
    }

    /// The owner's push-to-start token for `type`, made when there is none or when `rotate`
    /// asks for a new one.
    func startToken(app: String, uid: UInt32?, type: String, rotate: Bool) async throws(EngineError) -> String {
        guard let push else { throw .pushUnavailable(reason: Self.pushOff) }
        guard type.utf8.count <= ActivityLimits.maximumTypeBytes else {
            throw .refused(.typeTooLong(limit: ActivityLimits.maximumTypeBytes, size: type.utf8.count))
        }
        let (owner, entitlement) = onEngine { engine in (engine.owner(app: app, uid: uid), engine.entitlement(for: app)) }
        guard entitlement.entitled else { throw .refused(.unentitled(app: app, reason: entitlement.refusal)) }
        if !rotate, let existing = push.registry.startToken(owner: owner, type: type) { return existing.topic }
        let token = try push.makeToken(app: app)
        if let error = await awaitGrant(of: token.topic, refused: Self.tokenRefused(app: app)) {
            dropIfUnused(token.topic)
            throw error
        }
        guard self.push != nil else { throw .pushUnavailable(reason: Self.pushOff) }
        // Another call may have made one while the broker answered.
        if !rotate, let existing = self.push!.registry.startToken(owner: owner, type: type) {
            dropIfUnused(token.topic)
            return existing.topic
        }
        let replaced: PushRegistry.Entry?
        do {
            replaced = try self.push!.registry.setStartToken(token, owner: owner, type: type)
        } catch {
            dropIfUnused(token.topic)
            throw .refused(error)
        }
        push.broker.subscribe(token.topic)
        if let replaced { stopListening(to: replaced.token, because: "rotated") }
        var mutations: [StoreMutation] = [.putPushToken(self.push!.registry.entry(topic: token.topic)!.stored)]
        if let replaced { mutations.append(.deletePushToken(token: replaced.token.topic)) }
        do {
            try await commit(mutations)
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
        onEngine { $0.watchers.tell(owner: owner, .pushToStartToken(type: type, token: token.topic)) }
        return token.topic
    }

    /// Gives activity `id` the token, replacing the one it had: subscribed now, and the rows
    /// to commit.
    func issue(_ token: PushToken, activity id: String, owner: ActivityOwner) -> [StoreMutation] {
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

    /// Commits token rows on the engine, after the changes it has decided; no hop between
    /// the changes to the registry and the engine queueing their rows.
    private func commit(_ mutations: [StoreMutation]) async throws(EngineError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, EngineError>, Never>) in
            onEngine { $0.commit(mutations) { continuation.resume(returning: $0) } }
        }
        try result.get()
    }
}
