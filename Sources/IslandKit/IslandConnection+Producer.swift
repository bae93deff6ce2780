import Foundation
import FreeDesktop
public import OrderedJSON
import IslandProtocol
import Logging
public import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkNIO

// MARK: Producer calls

extension IslandConnection {
    var appParameter: JSONObject {
        // Every producer method's first parameter.
        configuration.appID.map { [ProducerNames.Request.app: .string($0)] } ?? [:]
    }

    /// Starts an activity (org.island.Producer.Request).
    /// With `pushToken`, the activity gets a push token (`ActivitySnapshot.pushToken`), for
    /// its server to update it through the daemon's broker.
    /// `sourceApp`: the desktop entry id of the app a producer that speaks for other apps (a
    /// bridge) verified as the sender, for presenters to head the activity with.
    /// With `start` (seconds since the epoch) later than now, the activity is scheduled:
    /// `pending` until then, and started with `alert`, which `start` requires.
    public func request(
        type: String, attributes: JSONObject, content: RawActivityContent, key: String? = nil,
        ownerGone: ActivityOwnerGonePolicy = .keep, pushToken: Bool = false,
        sourceApp: String? = nil, start: Double? = nil,
        alert: AlertConfiguration? = nil, channel: String? = nil
    ) async throws -> (activity: ActivitySnapshot, created: Bool) {
        typealias Names = ProducerNames.Request
        var parameters = appParameter
        parameters[Names.type] = .string(type)
        parameters[Names.attributes] = .object(attributes)
        parameters[Names.content] = content.json
        if let key { parameters[Names.key] = .string(key) }
        parameters[Names.ownerGone] = .string(ownerGone.rawValue)
        if pushToken { parameters[Names.pushToken] = true }
        if let sourceApp { parameters[Names.sourceApp] = .string(sourceApp) }
        if let start { parameters[Names.start] = .double(start) }
        if let alert { parameters[Names.alert] = [ProducerNames.Alert.title: .string(alert.title), ProducerNames.Alert.body: .string(alert.body)] }
        if let channel { parameters[Names.channel] = .string(channel) }
        // Only a keyed request may be retried after a lost connection: it is idempotent.
        let reply = try read(await perform(ProducerNames.Request.method, parameters, retry: key != nil), as: ProducerReplies.Request.init)
        let activity = ActivitySnapshot(reply.activity)
        track(activity)
        return (activity, reply.created)
    }

    /// Replaces an activity's content (org.island.Producer.Update).
    public func update(
        id: String, content: RawActivityContent, alert: AlertConfiguration? = nil,
        timestamp: Double? = nil
    ) async throws -> (activity: ActivitySnapshot, delivery: ActivityUpdateResult) {
        typealias Names = ProducerNames.Update
        var parameters = appParameter
        parameters[Names.id] = .string(id)
        parameters[Names.content] = content.json
        if let alert { parameters[Names.alert] = [ProducerNames.Alert.title: .string(alert.title), ProducerNames.Alert.body: .string(alert.body)] }
        if let timestamp { parameters[Names.timestamp] = .double(timestamp) }
        let reply = try read(await perform(ProducerNames.Update.method, parameters, retry: true), as: ProducerReplies.Update.init)
        return (ActivitySnapshot(reply.activity), ActivityUpdateResult(reply.delivery))
    }

    /// Ends an activity (org.island.Producer.End).
    public func end(
        id: String, content: RawActivityContent? = nil, dismissalPolicy: ActivityUIDismissalPolicy = .default,
        timestamp: Double? = nil
    ) async throws -> ActivitySnapshot {
        typealias Names = ProducerNames.End
        var parameters = appParameter
        parameters[Names.id] = .string(id)
        if let content { parameters[Names.content] = content.json }
        typealias Policy = ProducerNames.DismissalPolicy
        switch dismissalPolicy {
        case .default: parameters[Names.dismissalPolicy] = [Policy.kind: "default"]
        case .immediate: parameters[Names.dismissalPolicy] = [Policy.kind: "immediate"]
        case .after(let date): parameters[Names.dismissalPolicy] = [Policy.kind: "after", Policy.date: .double(date.epochSeconds)]
        }
        if let timestamp { parameters[Names.timestamp] = .double(timestamp) }
        let reply = try read(await perform(ProducerNames.End.method, parameters, retry: false), as: ProducerReplies.End.init)
        return ActivitySnapshot(reply.activity)
    }

    /// The app's activities, optionally of one type and in some states.
    public func list(type: String? = nil, states: [ActivityState]? = nil) async throws -> [ActivitySnapshot] {
        typealias Names = ProducerNames.List
        var parameters = appParameter
        if let type { parameters[Names.type] = .string(type) }
        if let states { parameters[Names.states] = .array(states.map { .string($0.rawValue) }) }
        let reply = try read(await perform(ProducerNames.List.method, parameters, retry: true), as: ProducerReplies.List.init)
        return reply.activities.map(ActivitySnapshot.init)
    }

    /// The activity's push token (org.island.Producer.PushToken), made when it has none; with
    /// `rotate`, a new one that replaces it.
    public func pushToken(id: String, rotate: Bool = false) async throws -> String {
        typealias Names = ProducerNames.PushToken
        var parameters = appParameter
        parameters[Names.id] = .string(id)
        if rotate { parameters[Names.rotate] = true }
        let token = try read(await perform(ProducerNames.PushToken.method, parameters, retry: !rotate), as: ProducerReplies.PushToken.init).pushToken
        channels[id]?.receive(pushToken: token)
        return token
    }

    /// The app's push-to-start token for activities of `type`
    /// (org.island.Producer.PushToStartToken), made when there is none; with `rotate`, a new one.
    public func pushToStartToken(type: String, rotate: Bool = false) async throws -> String {
        typealias Names = ProducerNames.PushToStartToken
        var parameters = appParameter
        parameters[Names.type] = .string(type)
        if rotate { parameters[Names.rotate] = true }
        return try read(await perform(ProducerNames.PushToStartToken.method, parameters, retry: !rotate), as: ProducerReplies.PushToStartToken.init).pushToken
    }

    /// Every push-to-start token of `type` from now on: the current one (made if need be),
    /// then each new one. Finishes when the daemon refuses a token (push off) or on `close()`.
    public func pushToStartTokens(type: String) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(1))
        nextID += 1
        let id = nextID
        pushToStartListeners[type, default: [:]][id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removePushToStartListener(type: type, id) } }
        Task {
            do {
                continuation.yield(try await pushToStartToken(type: type))
            } catch {
                logger.debug("no push-to-start token", metadata: ["type": "\(type)", "error": "\(error)"])
                continuation.finish()
            }
        }
        return stream
    }

    func removePushToStartListener(type: String, _ id: UInt64) {
        pushToStartListeners[type]?[id] = nil
    }

    /// The app's authorization, limits and remaining budgets.
    public func authorizationInfo() async throws -> AuthorizationSnapshot {
        let reply = try read(await perform(ProducerNames.Authorization.method, appParameter, retry: true), as: ProducerReplies.Authorization.init)
        let info = AuthorizationSnapshot(reply.authorization)
        apply(info)
        return info
    }

    /// Every event of the app's watch stream from now on, across daemon restarts (after one,
    /// a `resync` event per activity carries its current snapshot). Ends with `close()`.
    public func events() async throws -> AsyncStream<ActivityEvent> {
        _ = try await readyClient()
        let (stream, continuation) = AsyncStream<ActivityEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        nextID += 1
        let id = nextID
        eventListeners[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeEventListener(id) } }
        return stream
    }

    func removeEventListener(_ id: UInt64) { eventListeners[id] = nil }
}
