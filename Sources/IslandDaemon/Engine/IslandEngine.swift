import IslandCore
import OrderedJSON
import IslandStore
import Logging
import NIOCore
import VarlinkCore

/// The authoritative state of the daemon: every activity, the island, the layouts and the
/// user's settings. Every change goes through this actor, one at a time, along one pipeline
/// (IslandEngine+Pipeline.swift): the pure core *decides* (or refuses with a named error),
/// presenters are *shown* the change, the store *commits* it, and only then does the change
/// *finish*: watchers are told and the caller answered — so nothing acknowledged can be lost
/// by a crash. Presenters are shown a decision before it is durable: after a crash (or a
/// failed commit) they resync to what was committed.
///
/// The actor runs on an event loop, the one the daemon's connections are served on: a call
/// read there is decided at once (`perform`), with no task and no hop to another thread, and
/// only the commit leaves the loop, for the store's writer thread.
///
/// Its parts: the presenters (`PresenterHub`), the watchers (`WatcherHub`), the pipeline
/// and its timer, and in extensions the calls of each role — producers here, presenters,
/// extensions' layouts and admins in files of their own. Push is a client of the engine
/// (Push/PushGateway.swift): it calls the producers' operations, and hears of changes as an
/// `EngineObserver`.
actor IslandEngine {
    nonisolated let loop: any EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    let scope: DaemonScope
    let store: StoreWriter
    let clock: @Sendable () -> Double
    let logger: Logger
    let startedAt: Double

    // The engine's state is touched only on its loop, one call at a time, and callbacks that
    // the transport may fire from inside the engine's own work come back through
    // `performLater`, in a turn of their own: no access to it ever overlaps another. Swift
    // would still check every access to an actor's stored property at run time; unchecked,
    // the properties every update reads and changes save ~10 such checks per update.
    @exclusivity(unchecked) var manager: ActivityManager
    /// The apps' desktop entries: who is entitled to what.
    var registry: AppRegistry {
        didSet {
            entitlements.removeAll()
            lastEntitlement = nil
        }
    }
    /// What each app with a desktop entry is entitled to, as `registry` says: worked out once
    /// per app and registry rather than for every update, and only for apps that have an entry
    /// (an app without one is looked up again each time, see `entitlement(for:)`), so it holds
    /// at most one value per installed app.
    private var entitlements: [String: AppAuthorization] = [:]
    /// The entry of `entitlements` asked for last: a producer streaming updates asks for the
    /// same app each time, and comparing its id costs a tenth of hashing it.
    private var lastEntitlement: (app: String, authorization: AppAuthorization)?
    @exclusivity(unchecked) var presenters: PresenterHub
    @exclusivity(unchecked) var watchers: WatcherHub
    /// Open producer connections per owner, for the producer-death policies.
    var producers = ProducerConnections()
    /// Layout types being registered, while their commits are under way: they count against
    /// the limit already, or concurrent registrations could all pass it.
    var registeringLayouts: [ActivityOwner: Set<String>] = [:]

    /// The pipeline's bookkeeping (PipelineStateMachine.swift), whose steps
    /// IslandEngine+Pipeline.swift and IslandEngine+Timer.swift carry out.
    @exclusivity(unchecked) var pipeline: PipelineStateMachine<TurnCommit>
    /// The engine's one timer, set as `pipeline` says.
    var timer: Scheduled<Void>?
    /// The timer that ends a linger of commits nobody waits for, set as `pipeline` says.
    var lingerTimer: NIOScheduledCallback?
    /// The ends of commits nobody is told of at once, parked by the store's writer for the
    /// loop's next turn (ParkedFinishes.swift), and how long they may wait for it.
    let parkedFinishes = ParkedFinishes<[TurnCommit]>()
    let parkedFinishDelay: TimeAmount
    /// A client that keeps rows of its own beside the activities (push), told of changes as
    /// they are decided and committed.
    var observer: (any EngineObserver)?
    /// Told at the end of each turn that decided something: the loop's scheduling samples the
    /// CPUs' contention there (Runtime/EventLoopScheduling.swift), so that an idle daemon never
    /// wakes for it.
    var turnEnded: (@Sendable () -> Void)?

    /// `linger`: how long commits nobody waits for may wait for company (tests make it long,
    /// to see what lingers). `parkedFinishDelay`: how long the end of a commit nobody is told
    /// of at once may wait for the loop's next turn (`ParkedFinishes`; tests make it long too).
    init(
        manager: ActivityManager, registry: AppRegistry, layouts: [ActivityOwner: [String: JSON]],
        scope: DaemonScope, store: StoreWriter, loop: any EventLoop, clock: @escaping @Sendable () -> Double, logger: Logger,
        linger: PipelineStateMachine<TurnCommit>.Linger = .standard, parkedFinishDelay: TimeAmount = .seconds(1)
    ) {
        self.loop = loop
        self.parkedFinishDelay = parkedFinishDelay
        self.pipeline = PipelineStateMachine(linger: linger)
        self.manager = manager
        self.scope = scope
        self.registry = registry
        let activities = manager.list()
        self.presenters = PresenterHub(
            activities: activities, focusSince: manager.focusSince, scope: scope,
            layouts: LayoutCache(registered: layouts, apps: registry))
        self.watchers = WatcherHub(activities: activities)
        self.store = store
        self.clock = clock
        self.logger = logger
        self.startedAt = clock()
    }

    /// Applies whatever fell due while the daemon was down and starts the timer.
    /// `turnEnded`: see the property.
    func start(
        installedLayouts: [String: [String: JSON]], hideWhileSharing: Bool = true,
        lockScreen: LockScreenPolicy = LockScreenPolicy(), turnEnded: (@Sendable () -> Void)? = nil
    ) async {
        self.turnEnded = turnEnded
        presenters.layouts.reload(apps: registry, installed: installedLayouts)
        presenters.share(nil, hidingContent: hideWhileSharing)
        presenters.lock(nil, policy: lockScreen, now: clock())
        await advanceAndWait()
    }

    // MARK: Reaching the engine

    /// Runs `body` on the engine: at once when called on its loop (as a connection's handler
    /// is), otherwise queued there.
    nonisolated func perform(_ body: @escaping @Sendable (isolated IslandEngine) -> Void) {
        if loop.inEventLoop {
            onLoop(body)
        } else {
            loop.execute { self.onLoop(body) }
        }
    }

    /// Whether the caller runs on the engine's loop, where `onLoop` may enter it.
    nonisolated var isOnLoop: Bool { loop.inEventLoop }

    /// Runs `body` on the engine from its loop's thread: `assumeIsolated` without its check
    /// at run time, which asks the concurrency runtime whether the current executor is the
    /// engine's (~400 instructions, more than once per update). Sound only where the loop's
    /// thread runs the caller — after `loop.inEventLoop`, or in work the loop runs
    /// (`loop.execute`) — as the engine's executor is its loop (`unownedExecutor`). Debug
    /// builds check.
    nonisolated func onLoop<T>(_ body: (isolated IslandEngine) -> T) -> T {
        assert(loop.inEventLoop, "the engine was entered off its event loop")
        return withUncheckedIsolation(body)
    }

    /// Runs `body` on the engine in a turn of the loop of its own. For callbacks — a
    /// connection closed, a stream cancelled — which the transport may fire from inside the
    /// engine's own work: a watcher cut off for overflowing is cancelled as the engine sends
    /// it an event, while the engine is changing its watchers.
    nonisolated func performLater(_ body: @escaping @Sendable (isolated IslandEngine) -> Void) {
        loop.execute { self.onLoop(body) }
    }

    typealias Completion<T> = @Sendable (Result<T, EngineError>) -> Void

    /// The asynchronous form of an operation that answers through a completion.
    func awaiting<T: Sendable>(_ start: (@escaping Completion<T>) -> Void) async throws(EngineError) -> T {
        let promise = loop.makePromise(of: Result<T, EngineError>.self)
        start { promise.succeed($0) }
        // The promise is only ever succeeded, with the outcome.
        guard let result = try? await promise.futureResult.get() else { preconditionFailure("an engine operation never completed") }
        return try result.get()
    }

    /// Who a producer of `app` running as `uid` acts for: in the system scope each user's
    /// (docs/design.md §4), in the user scope the app's, every producer being the same user.
    func owner(app: String, uid: UInt32?) -> ActivityOwner {
        ActivityOwner(app: app, uid: scope == .system ? uid : nil)
    }

    func entitlement(for app: String) -> AppAuthorization {
        if let lastEntitlement, lastEntitlement.app == app { return lastEntitlement.authorization }
        if let known = entitlements[app] {
            lastEntitlement = (app, known)
            return known
        }
        if registry.manifest(for: app) == nil, let found = registry.lookedUpOnceMore(app) {
            // Written a moment ago, before the watch's rescan: a refusal looks once more, a
            // few `open` calls for the one name the id gives, which never block
            // (`readRegularFile`); the rescan then replaces the registry as usual.
            registry.adopt(found)
            presenters.layouts.adopt(apps: registry)
        }
        let manifest = registry.manifest(for: app)
        let authorization = AppAuthorization(
            entitled: manifest?.supportsLiveActivities ?? false,
            frequentUpdatesAllowed: manifest?.supportsFrequentUpdates ?? false,
            refusal: registry.refusal(for: app) ?? AppAuthorization.undeclared)
        if manifest != nil {
            entitlements[app] = authorization
            lastEntitlement = (app, authorization)
        }
        return authorization
    }

    // MARK: Producer

    /// The producer's operations answer through `completion`, with what `prepare` makes of
    /// their outcome. `prepare` runs once the change is committed, on the store's writer thread,
    /// so that building a reply (the whole activity, encoded) keeps off the event loop.
    func request<Reply: Sendable>(
        app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?,
        ownerGone: OwnerGonePolicy, sourceApp: String? = nil, start: Double? = nil, alert: Alert? = nil,
        uid: UInt32?, decided: @escaping @Sendable () -> Void = {},
        prepare: @escaping @Sendable ((Activity, Bool)) -> Reply, completion: @escaping Completion<Reply>
    ) {
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        decide(
            decided: decided,
            { manager, now throws(IslandError) in
                let result = try manager.request(
                    app: app, uid: owner.uid, type: type, attributes: attributes, content: content, key: key,
                    ownerGonePolicy: ownerGone, sourceApp: sourceApp, start: start, alert: alert,
                    entitlement: entitlement, now: now)
                return ((result.activity, result.created), result.events)
            }, prepare: prepare, completion: completion)
    }

    func request(
        app: String, type: String, attributes: JSONObject, content: ActivityContent, key: String?,
        ownerGone: OwnerGonePolicy, sourceApp: String? = nil, uid: UInt32?
    ) async throws(EngineError) -> (Activity, Bool) {
        try await awaiting { done in
            request(
                app: app, type: type, attributes: attributes, content: content, key: key, ownerGone: ownerGone,
                sourceApp: sourceApp, uid: uid, prepare: { $0 }, completion: done)
        }
    }

    func update<Reply: Sendable>(
        app: String, uid: UInt32?, id: String, content: ActivityContent, alert: Alert?, timestamp: Double?,
        decided: @escaping @Sendable () -> Void = {}, prepare: @escaping @Sendable (UpdateOutcome) -> Reply,
        completion: @escaping Completion<Reply>
    ) {
        update(
            app: app, uid: uid, id: id, content: content, alert: alert, timestamp: timestamp,
            waiter: ClosureWaiter(decided: decided, prepare: prepare) { _, result in completion(result) })
    }

    /// An update whose caller waits for it as `waiter`: one object for the whole way (the
    /// producer's calls, on every update).
    func update(
        app: String, uid: UInt32?, id: String, content: ActivityContent, alert: Alert?, timestamp: Double?,
        waiter: some DecisionTaker<UpdateOutcome>
    ) {
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        decide(
            { manager, now throws(IslandError) in
                let outcome = try manager.update(
                    app: app, uid: owner.uid, id: id, content: content, alert: alert, timestamp: timestamp,
                    entitlement: entitlement, now: now)
                return (outcome, outcome.events)
            }, waiter: waiter)
    }

    func end<Reply: Sendable>(
        app: String, uid: UInt32?, id: String, content: ActivityContent?, dismissal: DismissalPolicy,
        timestamp: Double?, syncing: Bool = true, decided: @escaping @Sendable () -> Void = {},
        prepare: @escaping @Sendable (Activity) -> Reply, completion: @escaping Completion<Reply>
    ) {
        end(
            app: app, uid: uid, id: id, content: content, dismissal: dismissal, timestamp: timestamp,
            waiter: ClosureWaiter(decided: decided, prepare: prepare, syncing: syncing) { _, result in completion(result) })
    }

    func end(
        app: String, uid: UInt32?, id: String, content: ActivityContent?, dismissal: DismissalPolicy,
        timestamp: Double?, waiter: some DecisionTaker<Activity>
    ) {
        let entitlement = entitlement(for: app)
        let owner = owner(app: app, uid: uid)
        decide(
            { manager, now throws(IslandError) in
                let result = try manager.end(
                    app: app, uid: owner.uid, id: id, content: content, dismissalPolicy: dismissal, timestamp: timestamp,
                    entitlement: entitlement, now: now)
                return (result.activity, result.events)
            }, waiter: waiter)
    }

    func list(app: String, uid: UInt32?, type: String?, states: Set<ActivityState>?) -> [Activity] {
        manager.list(owner: owner(app: app, uid: uid), type: type, states: states)
    }

    func authorization(app: String, uid: UInt32?) -> AuthorizationInfo {
        authorization(of: owner(app: app, uid: uid), now: clock())
    }

    func authorization(of owner: ActivityOwner, now: Double) -> AuthorizationInfo {
        manager.authorization(app: owner.app, uid: owner.uid, entitlement: entitlement(for: owner.app), now: now)
    }

    /// Streams the app's events to `responder` until the call ends.
    func watch(app: String, uid: UInt32?, ids: Set<String>?, responder: VarlinkResponder) {
        let id = watchers.add(owner: owner(app: app, uid: uid), ids: ids, focusSince: manager.focusSince, responder: responder)
        responder.onCancel { [weak self] in self?.performLater { $0.watchers.remove(id) } }
    }

    /// Counts a producer connection of `app` running as `uid`: the producer-death policies
    /// apply per owner (`ProducerConnections`).
    /// `confined`: the producer runs in a sandbox, and the owner's activities are drawn
    /// without pictures from now on (`LayoutCache.picturesAllowed`).
    func producerConnected(app: String, uid: UInt32?, confined: Bool = false) {
        let owner = owner(app: app, uid: uid)
        if confined, presenters.layouts.confine(owner) {
            presenters.redraw(manager.list(owner: owner).filter { $0.state != .dismissed }.map(\.id), now: clock())
        }
        if producers.connected(owner) {
            apply(manager.ownerReturned(app: app, uid: owner.uid), prepare: {}) { _, _ in }
        }
    }

    func producerDisconnected(app: String, uid: UInt32?) {
        let owner = owner(app: app, uid: uid)
        guard producers.disconnected(owner) else { return }
        decide(
            { manager, now throws(IslandError) in ((), manager.ownerGone(app: app, uid: owner.uid, now: now)) },
            prepare: { $0 }
        ) { [logger] result in
            if case .failure(let error) = result {
                logger.error("could not apply the producer-death policies", metadata: ["app": "\(app)", "error": "\(error)"])
            }
        }
    }
}
