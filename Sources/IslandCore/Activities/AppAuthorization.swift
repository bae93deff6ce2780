/// What an app's manifest (its `.desktop` file) declares. The daemon reads manifests and passes
/// this in with every call that needs it, so the manager stays pure.
package struct AppAuthorization: Sendable, Hashable {
    /// `X-Island-LiveActivities=true`: without it every request is `Unentitled`.
    package var entitled: Bool
    /// `X-Island-FrequentUpdates=true`: lets the user turn frequent updates on (they are, by default).
    package var frequentUpdatesAllowed: Bool
    /// Why the app is not entitled, as `Unentitled` says it: which file lacks the key, or
    /// where no entry was found.
    package var refusal: String

    package static let undeclared = "its desktop entry does not declare X-Island-LiveActivities=true"

    package init(entitled: Bool, frequentUpdatesAllowed: Bool = false, refusal: String = undeclared) {
        self.entitled = entitled
        self.frequentUpdatesAllowed = frequentUpdatesAllowed
        self.refusal = refusal
    }
}

/// Everything a producer may want to know about its own authorization (ActivityKit's
/// `areActivitiesEnabled` and `frequentPushesEnabled`, plus the budgets left).
package struct AuthorizationInfo: Sendable, Hashable {
    /// The app this is about.
    package var app: String
    /// The manifest declares Live Activities.
    package var entitled: Bool
    /// Entitled, and the user has Live Activities on both globally and for the app.
    package var enabled: Bool
    /// Updates reach presenters at `frequentUpdatesPerSecond` rather than `updatesPerSecond`.
    package var frequentUpdates: Bool
    /// The limits that apply to the app.
    package var limits: ActivityLimits
    /// Starts left in the current start-budget window.
    package var remainingStarts: Int
    /// Alerting updates left in the current alert-budget window.
    package var remainingAlerts: Int
    /// The app's live (pending, active or stale) activities.
    package var liveActivities: Int
    /// Live activities across all apps.
    package var globalLiveActivities: Int

    package init(
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
