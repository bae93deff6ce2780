import Foundation
import FreeDesktop
import OrderedJSON
import IslandProtocol
import Logging
import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkNIO

// MARK: Activities and authorization for the typed API

extension IslandConnection {
    /// The shared channel of an activity, created on first sight.
    func channel(for activity: ActivitySnapshot) -> ActivityChannel {
        if let channel = channels[activity.id] { return channel }
        let channel = ActivityChannel(activity)
        channels[activity.id] = channel
        return channel
    }

    func track(_ activity: ActivitySnapshot) {
        if channels[activity.id] == nil { channels[activity.id] = ActivityChannel(activity) }
        sighted(activity)
    }

    /// Every activity of `type` of the app that starts from now on, by this connection or
    /// any other of the app's (another process, its server's push-to-start), once each.
    /// Finishes on `close()`.
    public nonisolated func startedActivities(type: String) -> AsyncStream<ActivitySnapshot> {
        let (stream, continuation) = AsyncStream<ActivitySnapshot>.makeStream()
        let id = nextStartListener.add(1, ordering: .relaxed).newValue
        startListeners.withLock { $0[id] = (type, continuation) }
        continuation.onTermination = { [weak self] _ in _ = self?.startListeners.withLock { $0.removeValue(forKey: id) } }
        // The watch stream is what tells of them: start it if nothing has yet.
        Task { [weak self] in _ = try? await self?.readyClient() }
        return stream
    }

    /// Notes an activity heard of; one not known before has started, and its followers hear of it.
    func sighted(_ activity: ActivitySnapshot) {
        guard activity.state != .dismissed else {
            known.remove(activity.id)
            return
        }
        guard known.insert(activity.id).inserted else { return }
        let followers = startListeners.withLock { $0.values.filter { $0.type == activity.type }.map(\.continuation) }
        for follower in followers { follower.yield(activity) }
    }

    /// Which of the app's settings an enablement listener follows.
    enum AuthorizationSetting: Sendable {
        /// `areActivitiesEnabled`.
        case activities
        /// `frequentPushesEnabled`.
        case frequentPushes

        func value(in info: AuthorizationSnapshot) -> Bool {
            switch self {
            case .activities: info.enabled
            case .frequentPushes: info.frequentUpdates
            }
        }
    }

    /// The setting as last heard, without waiting for the actor; nil before the first answer.
    nonisolated func known(_ setting: AuthorizationSetting) -> Bool? {
        knownAuthorization.withLock { $0.map(setting.value(in:)) }
    }

    /// Reports `setting` to `continuation` each time it changes from `baseline` (from the
    /// first value heard, when nil).
    func addEnablementListener(_ setting: AuthorizationSetting, baseline: Bool?, _ continuation: AsyncStream<Bool>.Continuation) async {
        nextID += 1
        let id = nextID
        var last = baseline
        if let authorization {
            let now = setting.value(in: authorization)
            // A change that arrived before this listener existed is reported at once.
            if let baseline, now != baseline { continuation.yield(now) }
            last = now
        }
        enablementListeners[id] = (setting, last, continuation)
        continuation.onTermination = { [weak self] _ in Task { await self?.removeEnablementListener(id) } }
        if client == nil { _ = try? await readyClient() }
    }

    func removeEnablementListener(_ id: UInt64) { enablementListeners[id] = nil }

    func apply(_ info: AuthorizationSnapshot) {
        authorization = info
        knownAuthorization.withLock { $0 = info }
        for (id, listener) in enablementListeners where listener.last != listener.setting.value(in: info) {
            let value = listener.setting.value(in: info)
            // The first value heard is the baseline, not a change.
            if listener.last != nil { listener.continuation.yield(value) }
            enablementListeners[id]?.last = value
        }
    }
}
