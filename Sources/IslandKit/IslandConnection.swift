import Foundation
import FreeDesktop
public import OrderedJSON
import IslandProtocol
import Logging
public import OrderedCollections
import Synchronization
package import VarlinkCore
import VarlinkNIO

/// The app's link to the daemon: one producer connection for calls and one for the Watch
/// stream (a streaming call occupies its connection), shared by every `Activity` of the
/// process for one configuration.
///
/// When the daemon goes away (a restart, an upgrade), the connection comes back by itself:
/// it retries with a bounded backoff (50 ms doubling to 2 s), binds the app again, re-reads
/// its activities and re-emits their current state and content, so `for await` loops over
/// `contentUpdates` and `activityStateUpdates` carry on. Calls made meanwhile wait for the
/// daemon up to `reconnectTimeout`, then fail with `daemonUnavailable`.
public actor IslandConnection {
    public nonisolated let configuration: IslandKit.Configuration
    private let logger = Logger(label: "org.island.kit")

    private var client: VarlinkClient?
    private var watchClient: VarlinkClient?
    private var supervisor: Task<Void, Never>?
    private var everConnected = false
    private var closed = false
    private var waiters: [UInt64: CheckedContinuation<VarlinkClient, any Error>] = [:]
    private var nextID: UInt64 = 0

    private var channels: [String: ActivityChannel] = [:]
    /// The app's activities not yet dismissed, as far as this connection has heard: one it
    /// hears of that is not among them has just started (`startedActivities`).
    private var known: Set<String> = []
    /// Followers of the activities that start, by activity type; registered without waiting
    /// for the actor, so that `Activity.activityUpdates` misses none started after it was read.
    private nonisolated let startListeners = Mutex<[UInt64: (type: String, continuation: AsyncStream<ActivitySnapshot>.Continuation)]>([:])
    private nonisolated let nextStartListener = Atomic<UInt64>(0)
    private var eventListeners: [UInt64: AsyncStream<ActivityEvent>.Continuation] = [:]
    private var authorization: AuthorizationSnapshot?
    /// `authorization`, readable without waiting for the actor: the baseline of an
    /// enablement stream is what was known when it was made.
    private nonisolated let knownAuthorization = Mutex<AuthorizationSnapshot?>(nil)
    private var enablementListeners: [UInt64: (setting: AuthorizationSetting, last: Bool?, continuation: AsyncStream<Bool>.Continuation)] = [:]
    /// Followers of the push-to-start token of each activity type.
    private var pushToStartListeners: [String: [UInt64: AsyncStream<String>.Continuation]] = [:]

    private static let registry = Mutex<[IslandKit.Configuration: IslandConnection]>([:])

    /// Opens one connection to the daemon: its socket, or (IslandKitTesting) a daemon in this
    /// process.
    package typealias Connector = @Sendable () async throws -> VarlinkClient
    private let connector: Connector

    /// The connection for `configuration` (by default, the one set with `IslandKit.configure`);
    /// inside IslandKitTesting's `TestIsland.withIsland`, one to the test's daemon.
    public static func shared(_ configuration: IslandKit.Configuration = IslandKit.configuration) -> IslandConnection {
        if let standIn { return standIn(configuration) }
        return registry.withLock { connections in
            if let existing = connections[configuration] { return existing }
            let connection = IslandConnection(configuration: configuration)
            connections[configuration] = connection
            return connection
        }
    }

    /// A connection of its own, not shared with `Activity` objects.
    public init(configuration: IslandKit.Configuration) {
        self.init(configuration: configuration, connector: { try await VarlinkClient.connect(unixPath: configuration.socketPath) })
    }

    /// What `shared()` answers instead, for the task it is bound in and its child tasks.
    @TaskLocal package static var standIn: (@Sendable (IslandKit.Configuration) -> IslandConnection)?

    package init(configuration: IslandKit.Configuration, connector: @escaping Connector) {
        self.configuration = configuration
        self.connector = connector
    }

    /// Closes both connections and stops reconnecting; pending calls fail.
    public func close() async {
        closed = true
        supervisor?.cancel()
        supervisor = nil
        await disconnect()
        failWaiters(unavailable("the connection was closed"))
        for listener in eventListeners.values { listener.finish() }
        eventListeners = [:]
        for listener in enablementListeners.values { listener.continuation.finish() }
        enablementListeners = [:]
        for listeners in pushToStartListeners.values { listeners.values.forEach { $0.finish() } }
        pushToStartListeners = [:]
        let starts = startListeners.withLock { listeners in
            defer { listeners = [:] }
            return listeners.values.map(\.continuation)
        }
        starts.forEach { $0.finish() }
    }

    // MARK: Producer calls

    private var appParameter: JSONObject {
        // Every producer method's first parameter.
        configuration.appID.map { [ProducerNames.Request.app: .string($0)] } ?? [:]
    }

    /// Starts an activity (org.island.Producer.Request).
    /// With `pushToken`, the activity gets a push token (`ActivitySnapshot.pushToken`), for
    /// its server to update it through the daemon's broker.
    /// `sourceApp`: the desktop entry id of the app a producer that speaks for other apps (a
    /// bridge) verified as the sender, for presenters to head the activity with.
    public func request(type: String, attributes: JSONObject, content: RawActivityContent, key: String? = nil,
                        ownerGone: ActivityOwnerGonePolicy = .keep, pushToken: Bool = false,
                        sourceApp: String? = nil) async throws -> (activity: ActivitySnapshot, created: Bool) {
        typealias Names = ProducerNames.Request
        var parameters = appParameter
        parameters[Names.type] = .string(type)
        parameters[Names.attributes] = .object(attributes)
        parameters[Names.content] = content.json
        if let key { parameters[Names.key] = .string(key) }
        parameters[Names.ownerGone] = .string(ownerGone.rawValue)
        if pushToken { parameters[Names.pushToken] = true }
        if let sourceApp { parameters[Names.sourceApp] = .string(sourceApp) }
        // Only a keyed request may be retried after a lost connection: it is idempotent.
        let reply = try await perform(ProducerNames.Request.method, parameters, retry: key != nil)
        let activity = try snapshot(reply[Names.activity])
        track(activity)
        return (activity, reply[Names.created]?.boolValue ?? true)
    }

    /// Replaces an activity's content (org.island.Producer.Update).
    public func update(id: String, content: RawActivityContent, alert: AlertConfiguration? = nil,
                       timestamp: Double? = nil) async throws -> (activity: ActivitySnapshot, delivery: ActivityUpdateResult) {
        typealias Names = ProducerNames.Update
        var parameters = appParameter
        parameters[Names.id] = .string(id)
        parameters[Names.content] = content.json
        if let alert { parameters[Names.alert] = [ProducerNames.Alert.title: .string(alert.title), ProducerNames.Alert.body: .string(alert.body)] }
        if let timestamp { parameters[Names.timestamp] = .double(timestamp) }
        let reply = try await perform(ProducerNames.Update.method, parameters, retry: true)
        let activity = try snapshot(reply[Names.activity])
        return (activity, ActivityUpdateResult(json: reply[Names.delivery]))
    }

    /// Ends an activity (org.island.Producer.End).
    public func end(id: String, content: RawActivityContent? = nil, dismissalPolicy: ActivityUIDismissalPolicy = .default,
                    timestamp: Double? = nil) async throws -> ActivitySnapshot {
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
        let reply = try await perform(ProducerNames.End.method, parameters, retry: false)
        return try snapshot(reply[Names.activity])
    }

    /// The app's activities, optionally of one type and in some states.
    public func list(type: String? = nil, states: [ActivityState]? = nil) async throws -> [ActivitySnapshot] {
        typealias Names = ProducerNames.List
        var parameters = appParameter
        if let type { parameters[Names.type] = .string(type) }
        if let states { parameters[Names.states] = .array(states.map { .string($0.rawValue) }) }
        let reply = try await perform(ProducerNames.List.method, parameters, retry: true)
        return (reply[Names.activities]?.arrayValue ?? []).compactMap(ActivitySnapshot.init(json:))
    }

    /// The activity's push token (org.island.Producer.PushToken), made when it has none; with
    /// `rotate`, a new one that replaces it.
    public func pushToken(id: String, rotate: Bool = false) async throws -> String {
        typealias Names = ProducerNames.PushToken
        var parameters = appParameter
        parameters[Names.id] = .string(id)
        if rotate { parameters[Names.rotate] = true }
        let reply = try await perform(ProducerNames.PushToken.method, parameters, retry: !rotate)
        guard let token = reply[Names.pushToken]?.stringValue else {
            throw ActivityAuthorizationError.other(name: "org.island.InvalidReply", parameters: reply)
        }
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
        let reply = try await perform(ProducerNames.PushToStartToken.method, parameters, retry: !rotate)
        guard let token = reply[Names.pushToken]?.stringValue else {
            throw ActivityAuthorizationError.other(name: "org.island.InvalidReply", parameters: reply)
        }
        return token
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

    private func removePushToStartListener(type: String, _ id: UInt64) {
        pushToStartListeners[type]?[id] = nil
    }

    /// The app's authorization, limits and remaining budgets.
    public func authorizationInfo() async throws -> AuthorizationSnapshot {
        let reply = try await perform(ProducerNames.Authorization.method, appParameter, retry: true)
        guard let info = AuthorizationSnapshot(json: reply[ProducerNames.Authorization.authorization]) else {
            throw ActivityAuthorizationError.other(name: "org.island.InvalidReply", parameters: reply)
        }
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

    private func removeEventListener(_ id: UInt64) { eventListeners[id] = nil }

    // MARK: Activities and authorization for the typed API

    /// The shared channel of an activity, created on first sight.
    func channel(for activity: ActivitySnapshot) -> ActivityChannel {
        if let channel = channels[activity.id] { return channel }
        let channel = ActivityChannel(activity)
        channels[activity.id] = channel
        return channel
    }

    private func track(_ activity: ActivitySnapshot) {
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
    private func sighted(_ activity: ActivitySnapshot) {
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

    private func removeEnablementListener(_ id: UInt64) { enablementListeners[id] = nil }

    private func apply(_ info: AuthorizationSnapshot) {
        authorization = info
        knownAuthorization.withLock { $0 = info }
        for (id, listener) in enablementListeners where listener.last != listener.setting.value(in: info) {
            let value = listener.setting.value(in: info)
            // The first value heard is the baseline, not a change.
            if listener.last != nil { listener.continuation.yield(value) }
            enablementListeners[id]?.last = value
        }
    }

    // MARK: Layouts (org.island.Extension)

    /// Validates and stores `layout` for the app's activities of `type`, replacing any earlier
    /// one (org.island.Extension.RegisterLayout). On a connection of its own: the extension
    /// role is not the producer's, and a connection keeps its first role.
    public func registerLayout(type: String, layout: JSONObject) async throws {
        var parameters = appParameter
        parameters[ExtensionNames.RegisterLayout.type] = .string(type)
        parameters[ExtensionNames.RegisterLayout.layout] = .object(layout)
        _ = try await performAsExtension(ExtensionNames.RegisterLayout.method, parameters)
    }

    /// Removes the app's layout for `type` (org.island.Extension.RemoveLayout): its
    /// activities fall back to the default layout.
    public func removeLayout(type: String) async throws {
        var parameters = appParameter
        parameters[ExtensionNames.RemoveLayout.type] = .string(type)
        _ = try await performAsExtension(ExtensionNames.RemoveLayout.method, parameters)
    }

    private func performAsExtension(_ method: String, _ parameters: JSONObject) async throws -> JSONObject {
        let client: VarlinkClient
        do {
            client = try await connector()
        } catch {
            throw unavailable(describe(error))
        }
        do {
            let reply = try await client.call(method, parameters)
            await client.close()
            return reply
        } catch let error as VarlinkError {
            await client.close()
            throw ActivityAuthorizationError(error)
        } catch {
            await client.close()
            throw unavailable(describe(error))
        }
    }

    // MARK: Calls

    private func snapshot(_ json: JSON?) throws -> ActivitySnapshot {
        guard let activity = ActivitySnapshot(json: json) else {
            throw ActivityAuthorizationError.other(name: "org.island.InvalidReply", parameters: ["activity": json ?? .null])
        }
        return activity
    }

    /// Calls `method`, waiting for the daemon while it reconnects. A call whose connection
    /// is lost is sent once more after the reconnect when `retry` (it is idempotent).
    private func perform(_ method: String, _ parameters: JSONObject, retry: Bool) async throws -> JSONObject {
        var attempt = 0
        while true {
            attempt += 1
            let client = try await readyClient()
            do {
                return try await client.call(method, parameters)
            } catch let error as VarlinkError where !error.name.hasPrefix(ConnectionNames.interface + ".") {
                throw ActivityAuthorizationError(error)
            } catch {
                await connectionLost(client)
                if !retry || attempt >= 2 { throw unavailable(describe(error)) }
            }
        }
    }

    private func connectionLost(_ lost: VarlinkClient) async {
        guard client === lost else { return }
        client = nil
        // Ending the watch stream makes the supervisor reconnect.
        await watchClient?.close()
    }

    /// The call connection once it is bound and the watch stream runs.
    private func readyClient() async throws -> VarlinkClient {
        if let client { return client }
        if closed { throw unavailable("the connection was closed") }
        if supervisor == nil {
            supervisor = Task { await self.supervise() }
        }
        nextID += 1
        let id = nextID
        let timeout = configuration.reconnectTimeout
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = continuation
            Task {
                try? await Task.sleep(for: timeout)
                self.expireWaiter(id)
            }
        }
    }

    private func expireWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: unavailable("no answer within \(configuration.reconnectTimeout)"))
    }

    private func failWaiters(_ error: any Error) {
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(throwing: error) }
    }

    private func unavailable(_ reason: String) -> ActivityAuthorizationError {
        .daemonUnavailable(socketPath: configuration.socketPath, reason: reason)
    }

    private nonisolated func describe(_ error: any Error) -> String {
        switch error {
        case VarlinkClientError.connectionClosed: "the connection closed"
        case let error as VarlinkError: error.description
        default: Self.describeSystemError("\(error)")
        }
    }

    /// SwiftNIO's connect errors read `connect(descriptor:addr:size:): … (errno: 2)`; say it plainly.
    public static func describeSystemError(_ text: String) -> String {
        guard let match = text.firstMatch(of: #/errno: (\d+)/#), let code = Int32(match.output.1) else { return text }
        switch code {
        case ENOENT: return "no socket there"
        case ECONNREFUSED: return "connection refused (nothing listens on the socket)"
        case EACCES: return "permission denied"
        default: return String(cString: strerror(code))
        }
    }

    // MARK: The supervisor

    /// A local daemon restarts in well under a second: retry soon, and never wait long.
    static let reconnectBackoff = Backoff(first: .milliseconds(50), maximum: .seconds(2))

    private func supervise() async {
        var attempt = 0
        while !closed, !Task.isCancelled {
            do {
                let stream = try await connect()
                attempt = 0
                do {
                    for try await reply in stream { handle(reply[ProducerNames.Watch.event]) }
                } catch {
                    logger.debug("the watch stream ended", metadata: ["error": "\(describe(error))"])
                }
                await disconnect()
            } catch let error as VarlinkError where error.name.hasPrefix(IslandErrorNames.interface + ".") && !error.name.hasPrefix(ConnectionNames.interface + ".") {
                // The daemon answers but refuses this app: no retry will change that.
                await disconnect()
                failWaiters(ActivityAuthorizationError(error))
                supervisor = nil
                return
            } catch {
                await disconnect()
                if !everConnected {
                    // Never reached: say so now instead of making the caller wait.
                    failWaiters(unavailable(describe(error)))
                    supervisor = nil
                    return
                }
                logger.debug("reconnecting", metadata: ["error": "\(describe(error))", "delay": "\(Self.reconnectBackoff.delay(attempt: attempt))"])
            }
            if closed || Task.isCancelled { break }
            try? await Task.sleep(for: Self.reconnectBackoff.delay(attempt: attempt))
            attempt += 1
        }
        supervisor = nil
    }

    private func disconnect() async {
        let (call, watch) = (client, watchClient)
        client = nil
        watchClient = nil
        await call?.close()
        await watch?.close()
    }

    /// Connects both connections, starts the watch stream, binds the app, re-reads its
    /// activities; then releases the waiting calls.
    private func connect() async throws -> AsyncThrowingStream<JSONObject, any Error> {
        let path = configuration.socketPath
        let call = try await connector()
        let watch: VarlinkClient
        do {
            watch = try await connector()
        } catch {
            await call.close()
            throw error
        }
        watchClient = watch
        let stream = watch.stream(ProducerNames.Watch.method, appParameter)
        let info: AuthorizationSnapshot?
        let activities: [ActivitySnapshot]
        do {
            // The round trips also give the daemon time to register the watch before any
            // call of ours can change an activity.
            info = AuthorizationSnapshot(json: try await call.call(ProducerNames.Authorization.method, appParameter)[ProducerNames.Authorization.authorization])
            let listed = try await call.call(ProducerNames.List.method, appParameter)
            activities = (listed[ProducerNames.List.activities]?.arrayValue ?? []).compactMap(ActivitySnapshot.init(json:))
        } catch {
            await call.close()
            await watch.close()
            watchClient = nil
            throw error
        }
        let reconnected = everConnected
        // What runs when we first connect has not started now: `activityUpdates` tells of
        // activities that start after it.
        if !reconnected { known.formUnion(activities.filter { $0.state != .dismissed }.map(\.id)) }
        everConnected = true
        client = call
        if let info { apply(info) }
        if reconnected {
            logger.debug("reconnected to the daemon", metadata: ["socket": "\(path)"])
            let listed = Set(activities.map(\.id))
            // Those that started while the daemon was away (by push, say) start now for us.
            known.formIntersection(listed)
            for activity in activities {
                sighted(activity)
                channels[activity.id]?.receive(activity, force: true)
                for listener in eventListeners.values { listener.yield(ActivityEvent(resync: activity)) }
            }
            // Activities that are gone were dismissed while the daemon was away.
            for (id, channel) in channels where !listed.contains(id) {
                var gone = channel.latest
                gone.state = .dismissed
                channel.receive(gone, force: false)
                channels[id] = nil
            }
        }
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(returning: call) }
        return stream
    }

    private func handle(_ json: JSON?) {
        guard let event = ActivityEvent(json: json) else { return }
        switch event.kind {
        case .state, .content:
            if let activity = event.activity {
                sighted(activity)
                channels[activity.id]?.receive(activity, force: false)
                if activity.state == .dismissed { channels[activity.id] = nil }
            }
        case .authorization:
            if let info = event.authorization { apply(info) }
        case .pushToken:
            if let id = event.activity?.id, let token = event.pushToken { channels[id]?.receive(pushToken: token) }
        case .pushToStartToken:
            if let type = event.type, let token = event.pushToken {
                pushToStartListeners[type]?.values.forEach { $0.yield(token) }
            }
        case .tap:
            if let id = event.activity?.id { channels[id]?.receive(.tap(url: event.url.flatMap { URL(string: $0) })) }
        case .button:
            if let id = event.activity?.id, let action = event.action { channels[id]?.receive(.button(action: action)) }
        case .resync, .focus:
            break
        }
        for listener in eventListeners.values { listener.yield(event) }
    }
}
