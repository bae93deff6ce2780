/// Every limit and budget of DESIGN.md §3, with its default. One value applies to all apps;
/// `LimitsPolicy` lets the configuration override any of them per app.
///
/// Times are in seconds, rates per second.
public struct ActivityLimits: Sendable, Hashable {
    /// Compact JSON size of attributes + content state together (`AttributesTooLarge`).
    public var maximumPayloadBytes = 4096
    /// Live (not ended) activities one app may have at once (`TargetMaximumExceeded`).
    public var maximumActivitiesPerApp = 5
    /// Live activities across all apps (`GlobalMaximumExceeded`). Only the global value counts.
    public var maximumActivities = 32
    /// Starts per app within `startBudgetWindow` (`StartBudgetExceeded`).
    public var startBudget = 10
    public var startBudgetWindow: Double = 60
    /// How often one activity's content reaches presenters; faster updates are coalesced.
    public var updatesPerSecond: Double = 2
    /// The same, for an app with frequent updates enabled.
    public var frequentUpdatesPerSecond: Double = 20
    /// Alerting updates per app within `alertBudgetWindow`; beyond, updates apply silently.
    public var alertBudget = 6
    public var alertBudgetWindow: Double = 3600
    /// An activity still running after this long is ended with reason `expired`.
    public var maximumActiveDuration: Double = 8 * 3600
    /// How long an ended activity stays listed under the `default` dismissal policy, and the
    /// latest an `after(date)` dismissal may be.
    public var maximumDismissalDelay: Double = 4 * 3600
    /// With the `stale` producer-death policy: how long after its producer disconnects an
    /// activity turns stale.
    public var ownerGoneGracePeriod: Double = 30

    public init() {}

    public static let defaults = ActivityLimits()
}

/// The limits in force: global values, with per-app overrides.
public struct LimitsPolicy: Sendable, Hashable {
    public var global: ActivityLimits
    public var perApp: [String: ActivityLimits]

    public init(global: ActivityLimits = .defaults, perApp: [String: ActivityLimits] = [:]) {
        self.global = global
        self.perApp = perApp
    }

    /// The limits for `app`: its override when configured, the global values otherwise.
    /// `maximumActivities` always comes from the global values.
    public func limits(for app: String) -> ActivityLimits {
        guard var limits = perApp[app] else { return global }
        limits.maximumActivities = global.maximumActivities
        return limits
    }
}
