import IslandCore
import IslandJSON
import IslandStore
import Logging
import NIOCore
import OrderedCollections
import Synchronization
import VarlinkCore

/// The authoritative state of the daemon: every activity, the island, the layouts and the
/// user's settings. All changes go through this actor, one at a time, in three steps: the
/// pure core decides (and refuses with a named error), presenters are shown the change, the
/// store commits, and only then are the caller answered and watchers told — so nothing
/// acknowledged can be lost by a crash. Presenters show a decision before it is durable:
/// after a crash (or a failed commit) they resync to what was committed.
///
/// The actor runs on an event loop, the one the daemon's connections are served on: a call
/// read there is decided at once (`perform`), with no task and no hop to another thread, and
/// only the commit leaves the loop, for the store's writer thread.
actor IslandEngine {
    nonisolated let loop: any EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    private(set) var manager: ActivityManager
    /// What the presenters of each uid see: in the system scope a user's presenters see only
    /// that user's activities and those of system services, so each uid has its own island.
    private var views: [UInt32: PresenterView] = [:]
    private let scope: DaemonScope
    /// The state and delivered content watchers last heard of, per activity.
    private var published: [String: (state: ActivityState, content: ActivityContent)] = [:]
    /// Every activity as presenters are shown it, in creation order: the island, deltas and
    /// snapshots are all built from this, in the order changes were decided.
    private var shown: OrderedDictionary<String, Activity>
    private var registry: AppRegistry
    /// Layouts registered by extensions: owner → type → layout JSON (already validated). In the
    /// system scope an extension's layouts draw only its own user's activities of the app.
    private var layouts: [ActivityOwner: [String: JSON]] { didSet { layoutsGeneration += 1 } }
    /// Layouts installed with apps; a registered layout of the same type wins.
    private var installedLayouts: [String: [String: JSON]] = [:] { didSet { layoutsGeneration += 1 } }
    /// The layout each activity is drawn with, as last worked out: every delta needs it, and
    /// working out a default layout means walking the activity, so it is reused until the
    /// layouts change or the activity's state changes shape.
    private var itemLayouts: [String: ItemLayout] = [:]
    private var layoutsGeneration: UInt64 = 0
    private var layoutRevisions: UInt64 = 0
    private let store: StoreWriter
    private let clock: @Sendable () -> Double
    private let logger: Logger

    private var watchers: [UInt64: Watcher] = [:]
    /// Bytes queued for watchers, and for presenters, that do not keep up: all of them together.
    private let watchBudget = QueueBudget(limit: StreamBounds.allWatchBytes)
    private let presenterBudget = QueueBudget(limit: StreamBounds.allPresenterBytes)
    private var nextSubscriptionID: UInt64 = 0
    /// Open producer connections per owner, for the producer-death policies.
    private var producerConnections: [ActivityOwner: Int] = [:]
    private var timer: Task<Void, Never>?
    private var timerDeadline: Double?
    let startedAt: Double

    struct Watcher {
        let owner: ActivityOwner
        var app: String { owner.app }
        let ids: Set<String>?
        let stream: OutboundStream<WatchEvent>

        func watches(_ activity: Activity) -> Bool {
            owner == activity.owner && (ids?.contains(activity.id) ?? true)
        }
    }

    struct PresenterView {
        var arbiter = IslandArbiter()
        var sequence: UInt64 = 0
        var streams: [UInt64: OutboundStream<PresenterMessage>] = [:]
        /// The layout revision each activity last had in this view's deltas: a delta carries
        /// an item's layout (and the island) only when it changed, since a presenter keeps
        /// what it has.
        var sentLayouts: [String: UInt64] = [:]
    }

    struct ItemLayout {
        let json: JSON
        let isDefault: Bool
        /// Changes only when `json` does, so views compare numbers, not layouts.
        let revision: UInt64
        /// `Layout.defaultLayoutKey` of the delivered state a default layout was worked out from.
        let stateShape: [UInt8]?
        /// `layoutsGeneration` when it was worked out.
        let generation: UInt64
        /// The `Name=` and `Icon=` of the app's desktop entry, looked up with the layout (a
        /// reload bumps the generation) rather than on every delta.
        let app: Wire.AppLabel
    }

    /// Activities of uids below this belong to system services, which every presenter sees.
    static let firstUserUID: UInt32 = 1000

    enum PresenterMessage: Sendable {
        /// Encoded once, however many presenters it goes to.
        case delta(VarlinkEncodedParameters, sequence: UInt64)
        /// The whole state, built when it is sent: first on subscribing, then after overflow.
        case snapshot(resync: Bool)
    }

    init(manager: ActivityManager, registry: AppRegistry, layouts: [ActivityOwner: [String: JSON]],
         scope: DaemonScope, store: StoreWriter, loop: any EventLoop, clock: @escaping @Sendable () -> Double, logger: Logger) {
        self.loop = loop
        self.manager = manager
        self.shown = OrderedDictionary(uniqueKeysWithValues: manager.list().map { ($0.id, $0) })
        self.scope = scope
        self.registry = registry
        self.layouts = layouts
        self.store = store
        self.clock = clock
        self.logger = logger
        self.startedAt = clock()
    }

    // MARK: Producer

    /// Runs `body` on the engine: at once when called on its loop (as a connection's handler
    /// is), otherwise queued there.
    nonisolated func perform(_ body: @escaping @Sendable (isolated IslandEngine) -> Void) {
        if loop.inEventLoop {
            assumeIsolated(body)
        } else {
            loop.execute { self.assumeIsolated(body) }
        }
    }

    typealias Completion<T> = @Sendable (Result<T, VarlinkError>) -> Void

    /// Who a producer of `app` running as `uid` acts for: in the system scope each user's
    /// (DESIGN.md §4), in the user scope the app's, every producer being the same user.
    private func owner(app: String, uid: UInt32?) -> ActivityOwner {
        ActivityOwner(app: app, uid: scope == .system ? uid : nil)
    }

    /// The asynchronous form of an operation that answers through a completion.
    private func awaiting<T: Sendable>(_ start: (@escaping Completion<T>) -> Void) async throws(VarlinkError) -> T {
        let promise = loop.makePromise(of: Result<T, VarlinkError>.self)
        start { promise.succeed($0) }
        // The promise is only ever succeeded, with the outcome.
        guard let result = try? await promise.futureResult.get() else { preconditionFailure("an engine operation never completed") }
        return try result.get()
    }

    /// The producer's operations answer through `completion`, with what `prepare` makes of
    /// their outcome. `prepare` runs once the change is committed, on the store's writer thread,
    /// so that building a reply (the whole activity, encoded) keeps off the event loop.
    func request<Reply: Sendable>(app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?,
                                  ownerGone: OwnerGonePolicy, uid: UInt32?, decided: @Sendable () -> Void = {},
                                  prepare: @escaping @Sendable ((Activity, Bool)) -> Reply, completion: @escaping Completion<Reply>) {
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        mutate(decided: decided, { manager, now throws(IslandError) in
            let result = try manager.request(app: app, uid: owner.uid, type: type, attributes: attributes, content: content, key: key,
                                             ownerGonePolicy: ownerGone, entitlement: entitlement, now: now)
            return ((result.activity, result.created), result.events)
        }, prepare: prepare, completion: completion)
    }

    func request(app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?,
                 ownerGone: OwnerGonePolicy, uid: UInt32?) async throws(VarlinkError) -> (Activity, Bool) {
        try await awaiting { done in
            request(app: app, type: type, attributes: attributes, content: content, key: key, ownerGone: ownerGone,
                    uid: uid, prepare: { $0 }, completion: done)
        }
    }

    func update<Reply: Sendable>(app: String, uid: UInt32?, id: String, content: ActivityContent, alert: Alert?, timestamp: Double?,
                                 decided: @Sendable () -> Void = {}, prepare: @escaping @Sendable (UpdateOutcome) -> Reply,
                                 completion: @escaping Completion<Reply>) {
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        mutate(decided: decided, { manager, now throws(IslandError) in
            let outcome = try manager.update(app: app, uid: owner.uid, id: id, content: content, alert: alert, timestamp: timestamp,
                                             entitlement: entitlement, now: now)
            return (outcome, outcome.events)
        }, prepare: prepare, completion: completion)
    }

    func end<Reply: Sendable>(app: String, uid: UInt32?, id: String, content: ActivityContent?, dismissal: DismissalPolicy,
                              timestamp: Double?, decided: @Sendable () -> Void = {}, prepare: @escaping @Sendable (Activity) -> Reply,
                              completion: @escaping Completion<Reply>) {
        let owner = owner(app: app, uid: uid)
        mutate(decided: decided, { manager, now throws(IslandError) in
            let result = try manager.end(app: app, uid: owner.uid, id: id, content: content, dismissalPolicy: dismissal, timestamp: timestamp, now: now)
            return (result.activity, result.events)
        }, prepare: prepare, completion: completion)
    }

    func list(app: String, uid: UInt32?, type: String?, states: Set<ActivityState>?) -> [Activity] {
        manager.list(owner: owner(app: app, uid: uid), type: type, states: states)
    }

    func authorization(app: String, uid: UInt32?) -> JSON {
        let owner = owner(app: app, uid: uid)
        let info = manager.authorization(app: app, uid: owner.uid, entitlement: entitlement(for: app), now: clock())
        return Self.authorizationJSON(info)
    }

    static func authorizationJSON(_ info: AuthorizationInfo) -> JSON {
        [
            "app": .string(info.app), "enabled": .bool(info.enabled), "frequentUpdates": .bool(info.frequentUpdates),
            "limits": Wire.limits(info.limits, frequent: info.frequentUpdates),
            "remainingStarts": .int(info.remainingStarts), "remainingAlerts": .int(info.remainingAlerts),
            "activities": .int(info.liveActivities), "globalActivities": .int(info.globalLiveActivities),

        ]
    }

    /// Streams the app's events to `responder` until the call ends.
    func watch(app: String, uid: UInt32?, ids: Set<String>?, responder: VarlinkResponder) {
        let stream = OutboundStream(responder: responder, policy: StreamBounds.watch, budget: watchBudget)
        nextSubscriptionID += 1
        let id = nextSubscriptionID
        watchers[id] = Watcher(owner: owner(app: app, uid: uid), ids: ids, stream: stream)
        // Registered: say so, so a client can tell when no later change can escape it.
        let watching = WatchEvent(["kind": "watching"])
        stream.send(watching, encoded: watching.encoded)
        responder.onCancel { [weak self] in Task { await self?.removeWatcher(id) } }
        Task { await stream.run { $0.encoded } }
    }

    private func removeWatcher(_ id: UInt64) { watchers[id] = nil }

    /// Counts a producer connection of `app` running as `uid`: the producer-death policies
    /// apply per owner, so one user's producer keeps nothing of another user's alive.
    func producerConnected(app: String, uid: UInt32?) {
        let owner = owner(app: app, uid: uid)
        producerConnections[owner, default: 0] += 1
        if producerConnections[owner] == 1 {
            let events = manager.ownerReturned(app: app, uid: owner.uid)
            persistAndPublish(events, prepare: {}) { _, _ in }
        }
    }

    func producerDisconnected(app: String, uid: UInt32?) async {
        let owner = owner(app: app, uid: uid)
        let remaining = (producerConnections[owner] ?? 1) - 1
        producerConnections[owner] = remaining > 0 ? remaining : nil
        guard remaining <= 0 else { return }
        do {
            try await mutate { manager, now throws(IslandError) in ((), manager.ownerGone(app: app, uid: owner.uid, now: now)) }
        } catch {
            logger.error("could not apply the producer-death policies", metadata: ["app": "\(app)", "error": "\(error)"])
        }
    }

    // MARK: Extension

    func registerLayout(app: String, uid: UInt32?, type: String, layout: JSON) async throws(VarlinkError) {
        // No activity can have a longer type, so no such layout could ever be used.
        guard type.utf8.count <= ActivityLimits.maximumTypeBytes else {
            let error = IslandError.typeTooLong(limit: ActivityLimits.maximumTypeBytes, size: type.utf8.count)
            throw VarlinkError(error.name, error.parameters)
        }
        do {
            _ = try Layout(json: layout)
        } catch {
            throw VarlinkError("org.island.InvalidLayout", ["type": .string(type), "path": .string(error.path), "reason": .string(error.reason)])
        }
        let owner = owner(app: app, uid: uid)
        try reserveLayout(type, of: owner)
        defer { registering[owner]?.remove(type) }
        try await commit([.putLayout(app: app, uid: owner.uid, type: type, body: layout.description)])
        layouts[owner, default: [:]][type] = layout
        publishItems(ids: manager.list(owner: owner, type: type, states: nil).map(\.id))
    }

    /// Types being registered, while their commits are under way: they count against the
    /// limit already, or concurrent registrations could all pass it.
    private var registering: [ActivityOwner: Set<String>] = [:]

    /// Counts a new type against the app's limit (a type it already has is only replaced).
    private func reserveLayout(_ type: String, of owner: ActivityOwner) throws(VarlinkError) {
        let types = Set((layouts[owner] ?? [:]).keys).union(registering[owner] ?? [])
        guard types.contains(type) || types.count < LayoutLimits.maximumLayoutsPerApp else {
            throw VarlinkError("org.island.TooManyLayouts", ["app": .string(owner.app), "limit": .int(LayoutLimits.maximumLayoutsPerApp)])
        }
        registering[owner, default: []].insert(type)
    }

    func removeLayout(app: String, uid: UInt32?, type: String) async throws(VarlinkError) {
        let owner = owner(app: app, uid: uid)
        try await commit([.deleteLayout(app: app, uid: owner.uid, type: type)])
        layouts[owner]?[type] = nil
        publishItems(ids: manager.list(owner: owner, type: type, states: nil).map(\.id))
    }

    func listLayouts(app: String, uid: UInt32?) -> [(String, JSON)] {
        (layouts[owner(app: app, uid: uid)] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    // MARK: Presenter

    func subscribe(uid: UInt32, responder: VarlinkResponder) {
        // A presenter that falls behind loses nothing it needs: its queued deltas collapse
        // into one resync, and it is sent the whole current state when it reads again.
        let stream = OutboundStream(responder: responder, policy: StreamBounds.presenter, budget: presenterBudget)
        nextSubscriptionID += 1
        let id = nextSubscriptionID
        ensureView(for: uid)
        views[uid]!.streams[id] = stream
        responder.onCancel { [weak self] in Task { await self?.removePresenter(id, uid: uid) } }
        stream.send(.snapshot(resync: false))
        // A snapshot is built when it is sent, so deltas queued before then are already in it.
        let lastSnapshot = Mutex<UInt64>(0)
        Task {
            await stream.run { message in
                switch message {
                case .delta(let update, let sequence):
                    return sequence > lastSnapshot.withLock { $0 } ? update : nil
                case .snapshot(let resync):
                    let (snapshot, sequence) = await self.encodedSnapshot(uid: uid, resync: resync)
                    lastSnapshot.withLock { $0 = sequence }
                    return snapshot
                }
            }
        }
    }

    private func removePresenter(_ id: UInt64, uid: UInt32) { views[uid]?.streams[id] = nil }

    /// Creates the island of `uid`'s presenters on first use, arbitrated from what they may see.
    private func ensureView(for uid: UInt32) {
        guard views[uid] == nil else { return }
        var view = PresenterView()
        _ = view.arbiter.recompute(candidates: candidates(for: uid), now: clock())
        views[uid] = view
    }

    /// The uids that have a view. Loops that change views go over this copy: iterating
    /// `views.keys` itself while changing a view copied the whole dictionary, every update.
    private var viewUIDs: [UInt32] { Array(views.keys) }

    private var presenterCount: Int { views.values.reduce(0) { $0 + $1.streams.count } }

    /// Whether presenters of `uid` may see the activity: their own, and system services'.
    private func isVisible(_ activityID: String, to uid: UInt32) -> Bool {
        guard scope == .system, uid != 0, let owner = (shown[activityID] ?? manager.activity(id: activityID))?.uid else { return true }
        return owner == uid || owner < Self.firstUserUID
    }

    func interact(uid: UInt32, action: String, id: String?, button: String?) async throws(VarlinkError) -> String? {
        let now = clock()
        if let id, !isVisible(id, to: uid) { throw noSuchActivity(id) }
        ensureView(for: uid)
        switch action {
        case "expand":
            guard let id, manager.activity(id: id)?.isLive == true else { throw noSuchActivity(id) }
            if let delta = views[uid]!.arbiter.expand(id: id, now: now) { publish(to: uid, island: delta, items: [], removed: [], alert: nil) }
            scheduleTimer()
            return nil
        case "collapse":
            if let delta = views[uid]!.arbiter.collapse(now: now) { publish(to: uid, island: delta, items: [], removed: [], alert: nil) }
            return nil
        case "tap":
            guard let id, let activity = manager.activity(id: id) else { throw noSuchActivity(id) }
            let url = layoutURL(for: activity, now: now)
            notifyWatchers(of: activity, kind: "tap", with: ["url": url.map { .string($0) } ?? .null])
            return url
        case "button":
            guard let id, let activity = manager.activity(id: id) else { throw noSuchActivity(id) }
            guard let button else { throw VarlinkError.invalidParameter("button") }
            notifyWatchers(of: activity, kind: "button", with: ["action": .string(button)])
            return nil
        case "dismiss":
            guard let id else { throw noSuchActivity(nil) }
            // A system service's activity is on every user's island: one user removing it
            // would remove it for all.
            if scope == .system, uid != 0, let owner = manager.activity(id: id)?.uid, owner != uid {
                throw VarlinkError("org.island.PermissionDenied", [
                    "role": "presenter", "reason": "a system service's activity is shown to every user; only root may dismiss it",
                ])
            }
            try await mutate { manager, now throws(IslandError) in ((), try manager.dismiss(id: id, now: now)) }
            return nil
        default:
            throw VarlinkError.invalidParameter("action")
        }
    }

    private func noSuchActivity(_ id: String?) -> VarlinkError {
        VarlinkError("org.island.NoSuchActivity", ["id": .string(id ?? "")])
    }

    // MARK: Admin

    func setEnabled(app: String?, enabled: Bool) async throws(VarlinkError) {
        if let app, registry.manifest(for: app) == nil, manager.list(app: app).isEmpty {
            throw VarlinkError("org.island.Unentitled", ["app": .string(app), "reason": "no desktop entry and no activities: there is nothing to switch"])
        }
        try await mutate { manager, now throws(IslandError) in
            let events = app.map { manager.setEnabled(app: $0, enabled, now: now) } ?? manager.setGlobalEnabled(enabled, now: now)
            return ((), events)
        }
        authorizationChanged(app: app)
    }

    func setFrequentUpdates(app: String, enabled: Bool) async throws(VarlinkError) {
        guard registry.manifest(for: app)?.supportsFrequentUpdates == true else {
            throw VarlinkError("org.island.Unentitled", ["app": .string(app), "reason": "its desktop entry does not declare X-Island-FrequentUpdates=true"])
        }
        try await mutate { manager, now throws(IslandError) in ((), manager.setFrequentUpdates(app: app, enabled, now: now)) }
        authorizationChanged(app: app)
    }

    func apps() -> (apps: [JSON], enabled: Bool) {
        let now = clock()
        var ids = Set(registry.manifests.values.filter(\.supportsLiveActivities).map(\.id))
        for activity in manager.list(app: nil, type: nil, states: nil) { ids.insert(activity.app) }
        let apps: [JSON] = ids.sorted().map { id in
            let manifest = registry.manifest(for: id)
            let info = manager.authorization(app: id, entitlement: entitlement(for: id), now: now)
            var app: JSONObject = ["id": .string(id)]
            if let name = manifest?.name { app["name"] = .string(name) }
            app["entitled"] = .bool(manifest?.supportsLiveActivities ?? false)
            app["frequentUpdatesAllowed"] = .bool(manifest?.supportsFrequentUpdates ?? false)
            app["enabled"] = .bool(manager.isEnabled(app: id))
            app["frequentUpdates"] = .bool(info.frequentUpdates)
            // Every user's, in the system scope: `info` counts one owner's.
            app["activities"] = .int(manager.liveCount(app: id))
            app["limits"] = Wire.limits(info.limits, frequent: info.frequentUpdates)
            return .object(app)
        }
        return (apps, manager.isGloballyEnabled)
    }

    func status() -> JSONObject {
        let all = manager.list(app: nil, type: nil, states: nil)
        return [
            "activities": .int(all.count),
            "liveActivities": .int(all.filter(\.isLive).count),
            "presenters": .int(presenterCount),
            "producers": .int(producerConnections.values.reduce(0, +)),
            "uptime": .double(clock() - startedAt),
            "limits": Wire.limits(manager.limits.global, frequent: false),
        ]
    }

    func reload(registry: AppRegistry, installedLayouts: [String: [String: JSON]], limits: LimitsPolicy) async {
        self.registry = registry
        self.installedLayouts = installedLayouts
        publishItems(ids: manager.list(app: nil, type: nil, states: nil).filter { $0.state != .dismissed }.map(\.id))
        manager.limits = limits
        authorizationChanged(app: nil)
        await advance()
    }

    // MARK: Start

    /// Applies whatever fell due while the daemon was down and starts the timers.
    func start(installedLayouts: [String: [String: JSON]]) async {
        self.installedLayouts = installedLayouts
        for activity in manager.list() { published[activity.id] = (activity.state, activity.deliveredContent) }
        await advance()
    }

    // MARK: The three steps

    /// Runs a core operation, shows presenters its events, commits them, and only then tells
    /// watchers and completes. Timers that fell due are applied first, so the operation sees
    /// the state as of `now`.
    ///
    /// `decided` runs once the change is made in memory and queued for the disk: from then on
    /// the caller's next pipelined call may be decided too, while this one waits for its commit.
    private func mutate<T: Sendable, Reply: Sendable>(decided: @Sendable () -> Void = {},
                                                      _ body: (inout ActivityManager, Double) throws(IslandError) -> (T, [ActivityEvent]),
                                                      prepare: @escaping @Sendable (T) -> Reply,
                                                      completion: @escaping Completion<Reply>) {
        let now = clock()
        let due = manager.advance(to: now)
        let result: T
        let events: [ActivityEvent]
        do {
            (result, events) = try body(&manager, now)
        } catch {
            // The refusal changed nothing, but the timers it ran first did: keep those.
            persistAndPublish(due, prepare: {}) { _, _ in }
            completion(.failure(VarlinkError(error.name, error.parameters)))
            return
        }
        persistAndPublish(due + events, decided: decided, prepare: { prepare(result) }) { engine, outcome in
            if case .failure = outcome {
                // Nothing of this change reached the disk. Other calls may have changed memory
                // while this one waited, so the disk, not a copy from before, is the truth to
                // return to.
                engine.restoreFromDisk()
            }
            completion(outcome)
        }
    }

    @discardableResult
    private func mutate<T: Sendable>(_ body: (inout ActivityManager, Double) throws(IslandError) -> (T, [ActivityEvent])) async throws(VarlinkError) -> T {
        try await awaiting { done in mutate(body, prepare: { $0 }, completion: done) }
    }

    private func restoreFromDisk() {
        do {
            let stored = try store.store.load()
            manager = StateRestorer.manager(from: stored, limits: manager.limits, now: clock(), logger: logger)
            resyncPresenters()
        } catch {
            logger.critical("cannot reread the state database after a failed write", metadata: ["error": "\(error)"])
        }
    }

    /// Shows presenters the events' changes at once, commits them, and once committed tells
    /// watchers and calls `completion` on the engine, with what `prepare` returned (made on
    /// the writer thread once the commit succeeded) or the error if it failed.
    private func persistAndPublish<Prepared: Sendable>(
        _ events: [ActivityEvent], decided: @Sendable () -> Void = {}, prepare: @escaping @Sendable () -> Prepared,
        then completion: @escaping @Sendable (isolated IslandEngine, Result<Prepared, VarlinkError>) -> Void
    ) {
        guard !events.isEmpty else {
            decided()
            completion(self, .success(prepare()))
            return
        }
        // Commits complete in order, but the callers waiting for them may resume in any order:
        // number each change as it is decided and publish strictly in that order, so watchers
        // and presenters never see an older state after a newer one.
        decisions += 1
        let ticket = decisions
        show(events)
        let mutations = storeMutations(for: events)
        guard !mutations.isEmpty else {
            decided()
            finishCommit(ticket, events, .success(prepare()), then: completion)
            return
        }
        queueCommit(mutations) { result in
            let prepared = result.map { prepare() }
            return { engine in engine.finishCommit(ticket, events, prepared, then: completion) }
        }
        decided()
    }

    /// What a change does once its commit is over: on the writer thread, with the outcome, it
    /// returns what is left to do on the engine.
    private typealias Committed = @Sendable (Result<Void, StoreError>) -> @Sendable (isolated IslandEngine) -> Void

    /// The changes decided during this turn of the loop, in order: they go to the store's
    /// writer thread together once the turn's reads are handled, and come back together — one
    /// hand-off each way per turn, not per change, for a producer that pipelines its calls.
    private var turnCommits: [(mutations: [StoreMutation], committed: Committed)] = []

    private func queueCommit(_ mutations: [StoreMutation], committed: @escaping Committed) {
        if turnCommits.isEmpty {
            loop.execute { self.assumeIsolated { $0.commitTurn() } }
        }
        turnCommits.append((mutations, committed))
    }

    /// Queues the turn's changes for the disk, in the order they were decided; the writer
    /// thread groups them further with whatever arrives during its current transaction.
    private func commitTurn() {
        guard !turnCommits.isEmpty else { return }
        let commits = turnCommits
        turnCommits = []
        store.commit(commits.count == 1 ? commits[0].mutations : commits.flatMap(\.mutations)) { [loop] result in
            let finishing = commits.map { $0.committed(result) }
            loop.execute { self.assumeIsolated { engine in for finish in finishing { finish(engine) } } }
        }
    }

    private func persistAndPublish(_ events: [ActivityEvent]) async throws(VarlinkError) {
        let _: Void = try await awaiting { done in
            persistAndPublish(events, prepare: {}) { _, result in done(result) }
        }
    }

    private func finishCommit<Prepared: Sendable>(
        _ ticket: UInt64, _ events: [ActivityEvent], _ result: Result<Prepared, StoreError>,
        then completion: @Sendable (isolated IslandEngine, Result<Prepared, VarlinkError>) -> Void
    ) {
        switch result {
        case .success(let prepared):
            committed[ticket] = events
            publishCommitted()
            completion(self, .success(prepared))
        case .failure(let error):
            committed[ticket] = []
            publishCommitted()
            completion(self, .failure(persistenceFailure(error)))
        }
    }

    private var decisions: UInt64 = 0
    private var publishedDecisions: UInt64 = 0
    /// Committed changes waiting for an earlier one to be published first.
    private var committed: [UInt64: [ActivityEvent]] = [:]

    private func publishCommitted() {
        while let events = committed.removeValue(forKey: publishedDecisions + 1) {
            publishedDecisions += 1
            if !events.isEmpty { announce(events) }
        }
    }

    /// Commits changes that are not activity events (layouts), and returns once committed.
    private func commit(_ mutations: [StoreMutation]) async throws(VarlinkError) {
        // After the changes already decided, as every commit is.
        commitTurn()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, StoreError>, Never>) in
            store.commit(mutations) { continuation.resume(returning: $0) }
        }
        if case .failure(let error) = result { throw persistenceFailure(error) }
    }

    /// Logs a failed commit and names it for the caller.
    private func persistenceFailure(_ error: StoreError) -> VarlinkError {
        logger.error("could not store a change", metadata: ["error": "\(error)"])
        return VarlinkError("org.island.PersistenceFailure", ["reason": .string(error.description)])
    }

    private func storeMutations(for events: [ActivityEvent]) -> [StoreMutation] {
        var mutations: [StoreMutation] = []
        mutations.reserveCapacity(events.count + 1)
        var settingsChanged = false
        for event in events {
            switch event {
            case .changed(let activity), .delivered(let activity):
                let put = StoreMutation.putActivity(id: activity.id, app: activity.app, state: activity.state.rawValue,
                                                    body: StoredDocument(lazyText: { activity.jsonText }))
                // An update is reported as changed, then delivered: the row is written once.
                if case .putActivity(let id, _, _, _)? = mutations.last, id == activity.id {
                    mutations[mutations.count - 1] = put
                } else {
                    mutations.append(put)
                }
            case .removed(let id):
                mutations.append(.deleteActivity(id: id))
            case .settingsChanged, .budgetsChanged:
                settingsChanged = true
            case .alerted:
                break
            }
        }
        if settingsChanged {
            mutations.append(.putSetting(key: "manager", value: .object(manager.settingsAndBudgetsJSON)))
        }
        return mutations
    }

    // MARK: Publishing

    /// Shows presenters what the events changed, as soon as they are decided: presenters hear
    /// only of what they would draw differently — a throttled update is stored but not shown
    /// until its delivery.
    private func show(_ events: [ActivityEvent]) {
        // Usually one activity: a list, not a hash table.
        var changed: [Activity] = []
        var removed: [String] = []
        var alert: (String, Alert)?
        // Most updates change content only: the arbitration, a sort of every activity, need
        // not run again for them (timeouts of expansions come by the timer).
        var arbitrationChanged = false
        for event in events {
            switch event {
            case .changed(let activity), .delivered(let activity):
                // One hash of the id for the look-up and the update: this runs for every update.
                if let index = shown.index(forKey: activity.id) {
                    arbitrationChanged = arbitrationChanged || Self.candidate(shown.values[index]) != Self.candidate(activity)
                    shown.values[index] = activity
                } else {
                    arbitrationChanged = arbitrationChanged || Self.candidate(activity) != nil
                    shown[activity.id] = activity
                }
                if case .delivered = event {
                    if let index = changed.firstIndex(where: { $0.id == activity.id }) {
                        changed[index] = activity
                    } else {
                        changed.append(activity)
                    }
                }
            case .removed(let id):
                shown.removeValue(forKey: id)
                itemLayouts[id] = nil
                removed.append(id)
            case .alerted(let id, let a):
                alert = (id, a)
            case .settingsChanged, .budgetsChanged:
                break
            }
        }
        recomputeIsland(changed: changed, removed: removed, alert: alert, arbitrationChanged: arbitrationChanged)
        scheduleTimer()
    }

    /// Tells watchers (and the journal) what the events changed, once they are committed:
    /// watchers hear of a state only when it changed and of content only when it was delivered.
    private func announce(_ events: [ActivityEvent]) {
        for event in events {
            switch event {
            case .changed(let activity):
                // One hash of the id for the look-up and the update: this runs for every update.
                let index = published.index(forKey: activity.id)
                let before = index.map { published.values[$0] }
                if before?.state != activity.state {
                    notifyWatchers(of: activity, kind: "state")
                    logLifecycle(activity)
                }
                let heard = (activity.state, before?.content ?? activity.deliveredContent)
                if let index { published.values[index] = heard } else { published[activity.id] = heard }
            case .delivered(let activity):
                let index = published.index(forKey: activity.id)
                // Comparing contents costs as much as the rest of an update: only for watchers.
                if let index, isWatched(activity), published.values[index].content != activity.deliveredContent {
                    notifyWatchers(of: activity, kind: "content")
                }
                let heard = (activity.state, activity.deliveredContent)
                if let index { published.values[index] = heard } else { published[activity.id] = heard }
            case .removed(let id):
                published[id] = nil
            case .alerted, .settingsChanged, .budgetsChanged:
                break
            }
        }
    }

    /// After a failed commit the state was reread from disk: presenters were shown decisions
    /// that are gone, so each gets the committed state whole.
    private func resyncPresenters() {
        shown = OrderedDictionary(uniqueKeysWithValues: manager.list().map { ($0.id, $0) })
        // Activities the disk no longer has will never be removed one by one.
        itemLayouts = itemLayouts.filter { shown[$0.key] != nil }
        let now = clock()
        for uid in viewUIDs {
            views[uid]!.sequence += 1
            _ = views[uid]!.arbiter.recompute(candidates: candidates(for: uid), now: now)
            for stream in views[uid]!.streams.values { stream.send(.snapshot(resync: true)) }
        }
        scheduleTimer()
    }

    /// One journal entry per lifecycle step, with ACTIVITY_ID= and APP_ID= for journalctl.
    private func logLifecycle(_ activity: Activity) {
        var metadata: Logger.Metadata = [
            "activity_id": "\(activity.id)", "app_id": "\(activity.app)", "activity_type": "\(activity.type)",
        ]
        if let reason = activity.endReason { metadata["end_reason"] = "\(reason.rawValue)" }
        logger.info("activity \(activity.state.rawValue)", metadata: metadata)
    }

    private func isWatched(_ activity: Activity) -> Bool {
        watchers.values.contains { $0.watches(activity) }
    }

    /// Sends an event of `kind` carrying the activity, and `members`, to the watchers
    /// following it; built only if there are any, and encoded once for all of them.
    private func notifyWatchers(of activity: Activity, kind: String, with members: KeyValuePairs<StaticString, JSON> = [:]) {
        var event: WatchEvent?
        var ended: [UInt64] = []
        for (id, watcher) in watchers where watcher.watches(activity) {
            // A watcher cut off for falling too far behind is gone from its connection.
            if watcher.stream.isClosed {
                ended.append(id)
                continue
            }
            if event == nil { event = WatchEvent(kind: kind, activity: activity, members: members) }
            watcher.stream.send(event!, encoded: event!.encoded)
        }
        for id in ended { watchers[id] = nil }
    }

    private func authorizationChanged(app: String?) {
        let now = clock()
        for watcher in watchers.values where app == nil || watcher.app == app {
            let info = manager.authorization(app: watcher.app, uid: watcher.owner.uid, entitlement: entitlement(for: watcher.app), now: now)
            let event = WatchEvent(["kind": "authorization", "authorization": Self.authorizationJSON(info)], key: "authorization")
            watcher.stream.send(event, encoded: event.encoded)
        }
    }

    private func recomputeIsland(changed: [Activity], removed: [String], alert: (String, Alert)?,
                                 arbitrationChanged: Bool) {
        let now = clock()
        let arbitrate = arbitrationChanged || !removed.isEmpty || alert != nil
        for uid in viewUIDs {
            let visibleAlert = alert.flatMap { isVisible($0.0, to: uid) ? $0 : nil }
            if let visibleAlert { views[uid]!.arbiter.interactions.alert(id: visibleAlert.0, now: now) }
            let delta = arbitrate ? views[uid]!.arbiter.recompute(candidates: candidates(for: uid), now: now) : nil
            let items = changed.filter { !removed.contains($0.id) && isVisible($0.id, to: uid) }
                .sorted { $0.id < $1.id }
            guard delta != nil || !items.isEmpty || !removed.isEmpty else { continue }
            publish(to: uid, island: delta, items: items, removed: removed, alert: visibleAlert)
        }
    }

    private func publishItems(ids: [String]) {
        guard !ids.isEmpty else { return }
        for uid in viewUIDs {
            let visible = ids.filter { isVisible($0, to: uid) }
            if !visible.isEmpty { publish(to: uid, island: nil, items: visible.compactMap { shown[$0] }, removed: [], alert: nil) }
        }
    }

    private func publish(to uid: UInt32, island delta: IslandDelta?, items: [Activity], removed: [String], alert: (String, Alert)?) {
        // In place: a copy of the view would be one more of its tables to write back per update.
        guard let index = views.index(forKey: uid) else { return }
        publish(in: &views.values[index], island: delta, items: items, removed: removed, alert: alert)
    }

    private func publish(in view: inout PresenterView, island delta: IslandDelta?, items: [Activity], removed: [String],
                         alert: (String, Alert)?) {
        view.sequence += 1
        for id in removed { view.sentLayouts[id] = nil }
        guard !view.streams.isEmpty else { return }
        var text = Self.openUpdate(kind: "delta", sequence: view.sequence, resync: false, capacity: 1024)
        if delta != nil { text.member("island", .object(view.arbiter.presentation.json)) }
        text.key("items")
        text.openArray()
        for activity in items {
            let layout = layout(for: activity)
            let changed = view.sentLayouts[activity.id] != layout.revision
            if changed { view.sentLayouts[activity.id] = layout.revision }
            Wire.writeItem(activity, layout: changed ? (layout.json, layout.isDefault) : nil, app: layout.app, to: &text)
        }
        text.closeArray()
        text.member("removed", .array(removed.map { .string($0) }))
        if let (id, alert) = alert {
            text.member("alert", ["id": .string(id), "title": .string(alert.title), "body": .string(alert.body)])
        }
        let encoded = Self.closeUpdate(&text)
        for stream in view.streams.values { stream.send(.delta(encoded, sequence: view.sequence), encoded: encoded) }
    }

    /// Snapshots last encoded, per uid: presenters subscribing (or resyncing) together share
    /// one encoding, and one buffer, of what may be every activity there is.
    private var snapshots: [UInt32: (sequence: UInt64, resync: Bool, encoded: VarlinkEncodedParameters)] = [:]

    func encodedSnapshot(uid: UInt32, resync: Bool) -> (VarlinkEncodedParameters, sequence: UInt64) {
        ensureView(for: uid)
        let view = views[uid]!
        if let cached = snapshots[uid], cached.sequence == view.sequence, cached.resync == resync {
            return (cached.encoded, view.sequence)
        }
        // The whole state for a presenter: the first message of a subscription, and the
        // resync of one that fell behind.
        var text = Self.openUpdate(kind: "snapshot", sequence: view.sequence, resync: resync, capacity: 4096)
        text.member("island", .object(view.arbiter.presentation.json))
        text.key("items")
        text.openArray()
        for activity in shown.values where activity.state != .dismissed && isVisible(activity.id, to: uid) {
            let layout = layout(for: activity)
            Wire.writeItem(activity, layout: (layout.json, layout.isDefault), app: layout.app, to: &text)
        }
        text.closeArray()
        text.member("removed", [])
        let encoded = Self.closeUpdate(&text)
        snapshots[uid] = (view.sequence, resync, encoded)
        return (encoded, view.sequence)
    }

    /// `{"update": {"kind": …, "sequence": …, "resync": …` — the members every presenter
    /// message starts with; the caller writes the rest and ends it with `closeUpdate`.
    private static func openUpdate(kind: String, sequence: UInt64, resync: Bool, capacity: Int) -> JSONText {
        var text = JSONText(capacity: capacity)
        text.openObject()
        text.key("update")
        text.openObject()
        text.member("kind", string: kind)
        text.member("sequence", int: Int(sequence))
        text.member("resync", bool: resync)
        return text
    }

    private static func closeUpdate(_ text: inout JSONText) -> VarlinkEncodedParameters {
        text.closeObject()
        text.closeObject()
        return VarlinkEncodedParameters(text)
    }

    /// A snapshot as a tree, to look into.
    func snapshotUpdate(uid: UInt32, resync: Bool) -> JSONObject {
        let (encoded, _) = encodedSnapshot(uid: uid, resync: resync)
        return (try? JSONParser.parse(encoded.bytes))?["update"]?.objectValue ?? [:]
    }

    private func registeredLayout(for activity: Activity) -> JSON? {
        layouts[activity.owner]?[activity.type] ?? installedLayouts[activity.app]?[activity.type]
    }

    /// The layout presenters draw the activity with: its app's, or the default one.
    private func layout(for activity: Activity) -> ItemLayout {
        let cached = itemLayouts[activity.id]
        if let cached, cached.generation == layoutsGeneration, !cached.isDefault {
            return cached
        }
        // Only a default layout depends on the state.
        let shape = Layout.defaultLayoutKey(stateText: activity.deliveredContent.stateText)
        if let cached, cached.generation == layoutsGeneration, shape != nil, shape == cached.stateShape {
            return cached
        }
        let json: JSON
        let isDefault: Bool
        if let registered = registeredLayout(for: activity) {
            (json, isDefault) = (registered, false)
        } else {
            (json, isDefault) = (.object(Layout.default(for: activity.type, attributes: activity.attributes,
                                                     state: activity.deliveredContent.state).json), true)
        }
        var revision = cached?.revision ?? 0
        if cached?.json != json {
            layoutRevisions += 1
            revision = layoutRevisions
        }
        let manifest = registry.manifest(for: activity.app)
        let layout = ItemLayout(json: json, isDefault: isDefault, revision: revision, stateShape: isDefault ? shape : nil,
                                generation: layoutsGeneration, app: Wire.AppLabel(name: manifest?.name, icon: manifest?.icon))
        itemLayouts[activity.id] = layout
        return layout
    }

    private func candidates(for uid: UInt32) -> [IslandCandidate] {
        shown.values.compactMap { activity in isVisible(activity.id, to: uid) ? Self.candidate(activity) : nil }
    }

    /// All the arbitration knows of an activity; nil once dismissed.
    private static func candidate(_ activity: Activity) -> IslandCandidate? {
        let state: IslandCandidate.State
        switch activity.state {
        case .pending, .active: state = .active
        case .stale: state = .stale
        case .ended: state = .ended
        case .dismissed: return nil
        }
        return IslandCandidate(id: activity.id, app: activity.app, state: state,
                               relevanceScore: activity.deliveredContent.relevanceScore, startedAt: activity.createdAt)
    }

    /// The layout's tap URL, its templates filled from the activity.
    /// Rendering is bounded (`LayoutLimits.maximumRenderWork`), so it may run here, on the loop;
    /// the scheme must be on the allowlist of the app's own desktop entry (DESIGN.md §6).
    private func layoutURL(for activity: Activity, now: Double) -> String? {
        let declaredSchemes = registry.manifest(for: activity.app)?.urlSchemes ?? []
        guard let json = registeredLayout(for: activity), let layout = try? Layout(json: json), let url = layout.url,
              url.isAllowed(declaredSchemes: declaredSchemes) else {
            return nil
        }
        return LayoutRenderer(attributes: activity.attributes, state: activity.deliveredContent.state, now: now).resolve(url)
    }

    // MARK: Timers

    private func scheduleTimer() {
        // Runs after every change: no arrays, just the earliest of the manager's and the views'.
        var deadline = manager.nextWakeUp
        for view in views.values {
            if let next = view.arbiter.nextDeadline, next < deadline ?? .infinity { deadline = next }
        }
        guard deadline != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = deadline
        guard let deadline else { return }
        let delay = max(0, deadline - clock())
        timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 1))
            guard !Task.isCancelled else { return }
            await self?.timerFired()
        }
    }

    private func timerFired() async {
        timerDeadline = nil
        await advance()
    }

    private func advance() async {
        let now = clock()
        let events = manager.advance(to: now)
        do {
            try await persistAndPublish(events)
        } catch {
            logger.error("could not store timer changes; retrying", metadata: ["error": "\(error)"])
        }
        for uid in viewUIDs {
            if let delta = views[uid]!.arbiter.recompute(candidates: candidates(for: uid), now: now) {
                publish(to: uid, island: delta, items: [], removed: [], alert: nil)
            }
        }
        scheduleTimer()
    }

    // MARK: Helpers

    private func entitlement(for app: String) -> AppAuthorization {
        let manifest = registry.manifest(for: app)
        return AppAuthorization(entitled: manifest?.supportsLiveActivities ?? false,
                                frequentUpdatesAllowed: manifest?.supportsFrequentUpdates ?? false)
    }
}
