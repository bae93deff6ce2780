/// Every limit and budget of docs/design.md §3, with its default. One value applies to all apps;
/// `LimitsPolicy` lets the configuration override any of them per app. "Per app" means per
/// owner (`ActivityOwner`): in the system scope each user running the app has its own.
///
/// Times are in seconds, rates per second.
package struct ActivityLimits: Sendable, Hashable {
    /// Compact JSON size of attributes + content state together (`AttributesTooLarge`).
    package var maximumPayloadBytes = 4096
    /// Live (not ended) activities one app may have at once (`TargetMaximumExceeded`).
    package var maximumActivitiesPerApp = 5
    /// Live activities across all apps (`GlobalMaximumExceeded`). Only the global value counts.
    package var maximumActivities = 32
    /// Ended activities of one app waiting for their dismissal; beyond, the oldest ended one
    /// is dismissed at once. Without a bound an app ending what it starts fills every snapshot:
    /// the start budget alone lets it end 2,400 in the 4 hours an ended activity stays listed.
    package var maximumEndedActivitiesPerApp = 10
    /// The same across all apps; only the global value counts.
    package var maximumEndedActivities = 64
    /// Starts per app within `startBudgetWindow` (`StartBudgetExceeded`).
    package var startBudget = 10
    package var startBudgetWindow: Double = 60
    /// How often one activity's content reaches presenters; faster updates are coalesced.
    package var updatesPerSecond: Double = 2
    /// The same, for an app with frequent updates enabled.
    package var frequentUpdatesPerSecond: Double = 20
    /// Alerting updates per app within `alertBudgetWindow`; beyond, updates apply silently.
    package var alertBudget = 6
    package var alertBudgetWindow: Double = 3600
    /// Pushes at priority 10 (`PushPriority.high`) per app within `pushBudgetWindow`
    /// (`PushBudgetExceeded` beyond); priority 5 and 1 spend nothing.
    package var pushBudget = 120
    /// The same, for an app with frequent updates enabled.
    package var frequentPushBudget = 1200
    package var pushBudgetWindow: Double = 3600
    /// An activity still running after this long is ended with reason `expired`.
    package var maximumActiveDuration: Double = 8 * 3600
    /// How long an ended activity stays listed under the `default` dismissal policy, and the
    /// latest an `after(date)` dismissal may be.
    package var maximumDismissalDelay: Double = 4 * 3600
    /// With the `stale` producer-death policy: how long after its producer disconnects an
    /// activity turns stale.
    package var ownerGoneGracePeriod: Double = 30

    package init() {}

    package static let defaults = ActivityLimits()

    /// Containers nested in the attributes, and in the state, each counted from its own object
    /// (`{}` is 1). Fixed rather than configurable: every message the daemon builds wraps them
    /// a few levels deeper, and must stay within the wire's 64 (`NestingTooDeep`).
    package static let maximumNesting = 32
    /// The `type` name in UTF-8 bytes; it is repeated in every item and snapshot (`TypeTooLong`).
    package static let maximumTypeBytes = 128
    /// A request's idempotency `key` in UTF-8 bytes (`KeyTooLong`).
    package static let maximumKeyBytes = 256
    /// How far ahead of the daemon's clock an ordering timestamp may be, in seconds
    /// (`ImplausibleTimestamp`): a producer's or a server's clock may run ahead by this much,
    /// and no last timestamp (a "pin") can hold later updates out for longer than this.
    package static let maximumTimestampSkew: Double = 600
    /// The latest date a `staleDate` may be, in seconds since 1970: the year 5138, past any
    /// date meant (Foundation's `distantFuture` is the year 4001), while the time in
    /// milliseconds has been past it since 1973 (`ImplausibleStaleDate`). Fixed, not the clock
    /// plus a skew as for timestamps: a stale date far ahead is a choice, one in milliseconds a
    /// mistake that would keep the activity from ever going stale.
    package static let latestDate: Double = 1e11
    /// An alert's title and body together, in UTF-8 bytes (`AlertTooLarge`). Fixed: it is sent
    /// to every presenter with the update, outside the attributes and state that
    /// `maximumPayloadBytes` bounds, and a notification needs far less.
    package static let maximumAlertBytes = 1024
}

/// The limits in force: global values, with per-app overrides.
package struct LimitsPolicy: Sendable, Hashable {
    package var global: ActivityLimits
    package var perApp: [String: ActivityLimits]

    package init(global: ActivityLimits = .defaults, perApp: [String: ActivityLimits] = [:]) {
        self.global = global
        self.perApp = perApp
    }

    /// The limits for `app`: its override when configured, the global values otherwise.
    /// `maximumActivities` and `maximumEndedActivities` always come from the global values.
    package func limits(for app: String) -> ActivityLimits {
        guard var limits = perApp[app] else { return global }
        limits.maximumActivities = global.maximumActivities
        limits.maximumEndedActivities = global.maximumEndedActivities
        return limits
    }
}
