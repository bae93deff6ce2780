/// What an app's manifest (its `.desktop` file) declares. The daemon reads manifests and passes
/// this in with every call that needs it, so the manager stays pure.
public struct AppAuthorization: Sendable, Hashable {
    /// `X-Island-LiveActivities=true`: without it every request is `Unentitled`.
    public var entitled: Bool
    /// `X-Island-FrequentUpdates=true`: lets the user turn frequent updates on (they are, by default).
    public var frequentUpdatesAllowed: Bool
    /// Why the app is not entitled, as `Unentitled` says it: which file lacks the key, or
    /// where no entry was found.
    public var refusal: String

    public static let undeclared = "its desktop entry does not declare X-Island-LiveActivities=true"

    public init(entitled: Bool, frequentUpdatesAllowed: Bool = false, refusal: String = undeclared) {
        self.entitled = entitled
        self.frequentUpdatesAllowed = frequentUpdatesAllowed
        self.refusal = refusal
    }
}

/// Everything a producer may want to know about its own authorization (ActivityKit's
/// `areActivitiesEnabled` and `frequentPushesEnabled`, plus the budgets left).
public struct AuthorizationInfo: Sendable, Hashable {
    /// The app this is about.
    public var app: String
    /// The manifest declares Live Activities.
    public var entitled: Bool
    /// Entitled, and the user has Live Activities on both globally and for the app.
    public var enabled: Bool
    /// Updates reach presenters at `frequentUpdatesPerSecond` rather than `updatesPerSecond`.
    public var frequentUpdates: Bool
    /// The limits that apply to the app.
    public var limits: ActivityLimits
    /// Starts left in the current start-budget window.
    public var remainingStarts: Int
    /// Alerting updates left in the current alert-budget window.
    public var remainingAlerts: Int
    /// The app's live (pending, active or stale) activities.
    public var liveActivities: Int
    /// Live activities across all apps.
    public var globalLiveActivities: Int

    public init(
        app: String, entitled: Bool, enabled: Bool, frequentUpdates: Bool, limits: ActivityLimits,
        remainingStarts: Int, remainingAlerts: Int, liveActivities: Int, globalLiveActivities: Int
    ) {
        self.app = app
        self.entitled = entitled
        self.enabled = enabled
        self.frequentUpdates = frequentUpdates
        self.limits = limits
        self.remainingStarts = remainingStarts
        self.remainingAlerts = remainingAlerts
        self.liveActivities = liveActivities
        self.globalLiveActivities = globalLiveActivities
    }
}
