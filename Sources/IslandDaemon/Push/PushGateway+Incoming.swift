import IslandCore
import OrderedJSON
import IslandStore
import OrderedCollections
import VarlinkCore

/// What servers send: where an MQTT push (PushService hands it over) becomes an engine call —
/// an `update`, `end` or `request` of the token's owner — and its outcome the feedback.
extension PushGateway {
    /// Applies a push received on `topic`, as its token's owner would, and answers with its
    /// outcome once that is committed (or refused). Pushes are decided in the order this is
    /// called, and answered in that order: a refusal decided at once (a redelivered duplicate)
    /// waits for the answers of the pushes before it, still committing.
    func receive(topic: String, payload: [UInt8], completion: @escaping @Sendable (PushFeedback) -> Void) {
        let ticket = answers.enqueue(completion)
        decide(topic: topic, payload: payload) { feedback in
            // On the loop: every outcome is found there (at once, or when its commit finishes).
            self.assumeIsolated { gateway in
                for (deliver, answer) in gateway.answers.answer(ticket, feedback) { deliver(answer) }
            }
        }
    }

    private func decide(topic: String, payload: [UInt8], completion answer: @escaping @Sendable (PushFeedback) -> Void) {
        let receivedAt = engine.clock()
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
        do throws(PushRefusal) {
            try request.checkArrival(at: receivedAt)
        } catch {
            refuse(request, error)
            return
        }
        guard request.priority != .background else {
            refuse(request, .invalidPayload(reason: "aps.priority 1 is for broadcast channels; a token's push is 10 or 5"))
            return
        }
        let owner = entry.grant.owner
        @Sendable func finish<T>(_ result: Result<T, EngineError>, _ outcome: (T) -> PushFeedback.Outcome) {
            switch result {
            case .success(let value):
                completion(PushFeedback(timestamp: request.timestamp, event: request.event, outcome: outcome(value), receivedAt: receivedAt))
            case .failure(let error):
                let named = VarlinkError(error)
                completion(
                    PushFeedback(
                        timestamp: request.timestamp, event: request.event,
                        outcome: .refused(name: named.name, parameters: named.parameters), receivedAt: receivedAt))
            }
        }
        switch (entry.grant, request.event) {
        case (.activity(let id, _), .update):
            pushUpdate(request, owner: owner, activity: id) { finish($0) { $0 } }
        case (.activity(let id, _), .end):
            let dismissal = request.dismissal(receivedAt: receivedAt)
            onEngine { engine in
                engine.end(
                    app: owner.app, uid: owner.uid, id: id, content: request.content, dismissal: dismissal,
                    timestamp: request.timestamp, prepare: { $0.id }
                ) { result in
                    finish(result) { .applied(activity: $0) }
                }
            }
        case (.start(_, let type), .start) where request.attributesType != type:
            refuse(
                request, .invalidPayload(reason: "aps.attributes-type is \(request.attributesType ?? "missing"); this token starts activities of type \(type)"))
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

    /// An `update` through a push, to a token or on a channel: the engine's `pushUpdate`, whose
    /// rule for the push's priority (the budget at 10, coalescing at 5) is the one for both;
    /// `completion` gets the outcome as the feedback tells it. `syncing`: the commit waits for
    /// the disk (`DecisionWaiter.syncsCommit`), as a token's push's always does.
    func pushUpdate(
        _ request: PushRequest, owner: ActivityOwner, activity id: String, alsoStore: [StoreMutation] = [], syncing: Bool = true,
        completion: @escaping IslandEngine.Completion<PushFeedback.Outcome>
    ) {
        // On the gateway, so on the engine's loop: entered without `onEngine`'s check, which
        // every channel message would pay.
        engine.onLoop { engine in
            let entitlement = engine.entitlement(for: owner.app)
            engine.decide(
                { manager, now throws(IslandError) in
                    let outcome = try manager.pushUpdate(
                        app: owner.app, uid: owner.uid, id: id, content: request.content!,
                        alert: request.alert, timestamp: request.timestamp, priority: request.priority,
                        entitlement: entitlement, now: now)
                    return (outcome, outcome.events)
                },
                alsoStore: { _ in alsoStore }, syncing: syncing,
                prepare: { outcome -> PushFeedback.Outcome in
                    outcome.throttled
                        ? .throttled(activity: id, deliverAt: outcome.deliverAt, alertSuppressed: outcome.alertSuppression)
                        : .applied(activity: id, alertSuppressed: outcome.alertSuppression)
                }, completion: completion)
        }
    }

    /// A start through a push-to-start token: the engine's `request`, with the new activity,
    /// the token's last start and (with `input-push-token`) the activity's own token one
    /// decision and one commit.
    private func start(
        _ request: PushRequest, type: String, owner: ActivityOwner, topic: String,
        completion: @escaping IslandEngine.Completion<(String, String?)>
    ) {
        do {
            try push?.registry.checkStart(topic: topic, timestamp: request.timestamp, now: engine.clock())
        } catch {
            completion(.failure(.refused(error)))
            return
        }
        var channel: PushChannel?
        if let id = request.pushChannel, let push {
            do {
                channel = try PushChannel(root: push.root, app: owner.app, id: id)
            } catch {
                completion(.failure(.refused(error)))
                return
            }
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
        let (attributes, content) = (request.attributes ?? [:], request.content ?? ActivityContent(state: [:]))
        onEngine { engine in
            start(
                on: engine, attributes: attributes, content: content, type: type, owner: owner, topic: topic, timestamp: request.timestamp,
                schedule: (request.startDate, request.alert), activityToken: activityToken, channel: channel, completion: completion)
        }
    }

    /// The decision of `start`, on the engine.
    private func start(
        on engine: isolated IslandEngine, attributes: JSONObject, content: ActivityContent, type: String,
        owner: ActivityOwner, topic: String, timestamp: Double, schedule: (start: Double?, alert: Alert?),
        activityToken: PushToken?, channel: PushChannel?,
        completion: @escaping IslandEngine.Completion<(String, String?)>
    ) {
        let entitlement = engine.entitlement(for: owner.app)
        engine.decide(
            { manager, now throws(IslandError) in
                // A server is no process that can die: its activities keep through every
                // producer's coming and going (`keep`), like those of an app that never said.
                let result = try manager.request(
                    app: owner.app, uid: owner.uid, type: type, attributes: attributes, content: content,
                    ownerGonePolicy: .keep, start: schedule.start, alert: schedule.alert,
                    entitlement: entitlement, now: now)
                return ((result.activity.id, activityToken?.topic), result.events)
            },
            alsoStore: { (result: (String, String?)) in
                assumeIsolated { gateway in
                    var mutations: [StoreMutation] = []
                    if let entry = gateway.push?.registry.recordStart(topic: topic, timestamp: timestamp) {
                        mutations.append(.putPushToken(entry.stored))
                    }
                    if let activityToken { mutations += gateway.issue(activityToken, activity: result.0, owner: owner) }
                    if let channel { mutations += gateway.listen(to: channel, activity: result.0, owner: owner) }
                    return mutations
                }
            }, prepare: { $0 }
        ) { result in
            if case .success(let (id, token?)) = result {
                self.onEngine { engine in
                    if let activity = engine.manager.activity(id: id) {
                        engine.watchers.tell(owner: owner, activity: id, .pushToken(activity, token: token))
                    }
                }
            }
            completion(result)
        }
    }
}
