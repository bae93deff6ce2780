import IslandCore
import OrderedJSON

/// What `ListApps` reports of one app.
struct AppOverview: Sendable, Hashable {
    var id: String
    /// From the desktop entry, when there is one.
    var name: String?
    var entitled: Bool
    var frequentUpdatesAllowed: Bool
    var enabled: Bool
    var frequentUpdates: Bool
    /// Live activities, of every user in the system scope.
    var activities: Int
    var limits: ActivityLimits
}

/// What `Status` reports of the engine.
struct EngineStatus: Sendable, Hashable {
    var activities: Int
    var liveActivities: Int
    var presenters: Int
    var producers: Int
    var uptime: Double
    var limits: ActivityLimits
}

/// The admin role: switching apps on and off, and what the daemon holds.
extension IslandEngine {
    func setEnabled(app: String?, enabled: Bool) async throws(EngineError) {
        if let app, registry.manifest(for: app) == nil, manager.list(app: app).isEmpty {
            throw .unknownApp(app: app)
        }
        try await decide { manager, now throws(IslandError) in
            let events = app.map { manager.setEnabled(app: $0, enabled, now: now) } ?? manager.setGlobalEnabled(enabled, now: now)
            return ((), events)
        }
        authorizationChanged(app: app)
    }

    func setFrequentUpdates(app: String, enabled: Bool) async throws(EngineError) {
        guard registry.manifest(for: app)?.supportsFrequentUpdates == true else {
            throw .frequentUpdatesUndeclared(app: app)
        }
        try await decide { manager, now throws(IslandError) in ((), manager.setFrequentUpdates(app: app, enabled, now: now)) }
        authorizationChanged(app: app)
    }

    /// Turns Do Not Disturb on or off, and answers when it was turned on (nil: off). Once the
    /// change is committed, as every setting is; presenters and watchers are told by its events.
    func setFocus(_ on: Bool) async throws(EngineError) -> Double? {
        try await decide { manager, now throws(IslandError) in
            let events = manager.setFocus(on, now: now)
            return (manager.focusSince, events)
        }
    }

    /// When Do Not Disturb was turned on; nil while it is off.
    var focusSince: Double? { manager.focusSince }

    /// Says whether the screen is shared, and who says so; presenters are shown the change at
    /// once (nothing is stored), and answers as `sharing` does. Turning it on while on keeps its `since`.
    func setSharing(_ on: Bool, source: SharingSource) -> (state: ScreenSharing?, contentHidden: Bool) {
        var sharing: ScreenSharing?
        if on { sharing = ScreenSharing(since: presenters.sharing?.since ?? clock(), source: source) }
        presenters.share(sharing, hidingContent: presenters.hidesWhileSharing)
        return self.sharing
    }

    /// Whether the screen is shared (nil: it is not), and whether presenters are shown no content.
    var sharing: (state: ScreenSharing?, contentHidden: Bool) { (presenters.sharing, presenters.hidesContent) }

    /// Says whether the session is locked, and who says so; presenters are shown the change at
    /// once (nothing is stored). Turning it on while on keeps its `since`.
    func setLock(_ on: Bool, source: LockSource) -> SessionLock? {
        var lock: SessionLock?
        if on { lock = SessionLock(since: presenters.lock?.since ?? clock(), source: source) }
        presenters.lock(lock, policy: presenters.lockPolicy, now: clock())
        return presenters.lock
    }

    /// Whether the session is locked (nil: it is not).
    var sessionLock: SessionLock? { presenters.lock }

    /// What the desktop last said of its lock-screen privacy (nothing: every app left to islandd.conf).
    var desktopLockScreen: DesktopLockScreen { presenters.lockPolicy.desktop }

    /// Takes the desktop's lock-screen privacy in place of what it said before; combined with
    /// islandd.conf's, the stricter wins. Held in memory only, as the lock is: the bridge says
    /// it again to a daemon that restarted.
    func setDesktopLockScreen(_ desktop: DesktopLockScreen) {
        var policy = presenters.lockPolicy
        policy.desktop = desktop
        presenters.lock(presenters.lock, policy: policy, now: clock())
    }

    /// Tells the watchers of `app`, or of every app, their authorization as it is now.
    private func authorizationChanged(app: String?) {
        let now = clock()
        watchers.tellAuthorization(of: app) { owner in authorization(of: owner, now: now) }
    }

    /// Every app that is entitled or has activities, by id, and whether Live Activities are on.
    func apps() -> (apps: [AppOverview], enabled: Bool) {
        let now = clock()
        var ids = Set(registry.manifests.values.filter(\.supportsLiveActivities).map(\.id))
        for activity in manager.list(app: nil, type: nil, states: nil) { ids.insert(activity.app) }
        let apps = ids.sorted().map { id in
            let manifest = registry.manifest(for: id)
            let info = manager.authorization(app: id, entitlement: entitlement(for: id), now: now)
            return AppOverview(
                id: id, name: manifest?.name, entitled: manifest?.supportsLiveActivities ?? false,
                frequentUpdatesAllowed: manifest?.supportsFrequentUpdates ?? false,
                enabled: manager.isEnabled(app: id), frequentUpdates: info.frequentUpdates,
                // Every user's, in the system scope: `info` counts one owner's.
                activities: manager.liveCount(app: id), limits: info.limits)
        }
        return (apps, manager.isGloballyEnabled)
    }

    func status() -> EngineStatus {
        let all = manager.list(app: nil, type: nil, states: nil)
        return EngineStatus(
            activities: all.count, liveActivities: all.filter(\.isLive).count,
            presenters: presenters.presenterCount, producers: producers.total,
            uptime: clock() - startedAt, limits: manager.limits.global)
    }

    /// islandd.conf's `ExpandedSec=` and `AlertSec=` (nil: built in), at start and on reload.
    func timeExpansions(_ daemon: DaemonSettings) {
        presenters.timeExpansions(user: daemon.expandedFor, alert: daemon.alertFor)
    }

    /// Takes the apps, the layouts they install, the limits, whether content is hidden while
    /// the screen is shared and the user's lock-screen privacy as they are now (the last three
    /// unless nil: unchanged).
    func reload(
        registry: AppRegistry, installedLayouts: [String: [String: JSON]], limits: LimitsPolicy?,
        hideWhileSharing: Bool?, lockScreen: LockScreenPolicy? = nil
    ) async {
        self.registry = registry
        if let hideWhileSharing { presenters.share(presenters.sharing, hidingContent: hideWhileSharing) }
        if var lockScreen {
            // islandd.conf says nothing of the desktop's settings: they stay as the bridge said.
            lockScreen.desktop = presenters.lockPolicy.desktop
            presenters.lock(presenters.lock, policy: lockScreen, now: clock())
        }
        presenters.layouts.reload(apps: registry, installed: installedLayouts)
        presenters.redraw(manager.list(app: nil, type: nil, states: nil).filter { $0.state != .dismissed }.map(\.id), now: clock())
        if let limits { manager.limits = limits }
        authorizationChanged(app: nil)
        await advanceAndWait()
    }
}
