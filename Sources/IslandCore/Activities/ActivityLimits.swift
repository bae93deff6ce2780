/// Every limit and budget of docs/design.md §3, with its default. One value applies to all apps;
/// `LimitsPolicy` lets the configuration override any of them per app. "Per app" means per
/// owner (`ActivityOwner`): in the system scope each user running the app has its own.
///
/// Times are in seconds, rates per second.
public struct ActivityLimits: Sendable, Hashable {
    /// Compact JSON size of attributes + content state together (`AttributesTooLarge`).
    public var maximumPayloadBytes = 4096
    /// Live (not ended) activities one app may have at once (`TargetMaximumExceeded`).
    public var maximumActivitiesPerApp = 5
    /// Live activities across all apps (`GlobalMaximumExceeded`). Only the global value counts.
    public var maximumActivities = 32
    /// Ended activities of one app waiting for their dismissal; beyond, the oldest ended one
    /// is dismissed at once. Without a bound an app ending what it starts fills every snapshot:
    /// the start budget alone lets it end 2,400 in the 4 hours an ended activity stays listed.
    public var maximumEndedActivitiesPerApp = 10
    /// The same across all apps; only the global value counts.
    public var maximumEndedActivities = 64
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
    /// Pushes at priority 10 (`PushPriority.high`) per app within `pushBudgetWindow`
    /// (`PushBudgetExceeded` beyond); priority 5 and 1 spend nothing.
    public var pushBudget = 120
    /// The same, for an app with frequent updates enabled.
    public var frequentPushBudget = 1200
    public var pushBudgetWindow: Double = 3600
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

    /// Containers nested in the attributes, and in the state, each counted from its own object
    /// (`{}` is 1). Fixed rather than configurable: every message the daemon builds wraps them
    /// a few levels deeper, and must stay within the wire's 64 (`NestingTooDeep`).
    public static let maximumNesting = 32
    /// The `type` name in UTF-8 bytes; it is repeated in every item and snapshot (`TypeTooLong`).
    public static let maximumTypeBytes = 128
    /// A request's idempotency `key` in UTF-8 bytes (`KeyTooLong`).
    public static let maximumKeyBytes = 256
    /// How far ahead of the daemon's clock an ordering timestamp may be, in seconds
    /// (`ImplausibleTimestamp`): a producer's or a server's clock may run ahead by this much,
    /// and no last timestamp (a "pin") can hold later updates out for longer than this.
    public static let maximumTimestampSkew: Double = 600
    /// The latest date a `staleDate` may be, in seconds since 1970: the year 5138, past any
    /// date meant (Foundation's `distantFuture` is the year 4001), while the time in
    /// milliseconds has been past it since 1973 (`ImplausibleStaleDate`). Fixed, not the clock
    /// plus a skew as for timestamps: a stale date far ahead is a choice, one in milliseconds a
    /// mistake that would keep the activity from ever going stale.
    public static let latestDate: Double = 1e11
    /// An alert's title and body together, in UTF-8 bytes (`AlertTooLarge`). Fixed: it is sent
    /// to every presenter with the update, outside the attributes and state that
    /// `maximumPayloadBytes` bounds, and a notification needs far less.
    public static let maximumAlertBytes = 1024
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
    /// `maximumActivities` and `maximumEndedActivities` always come from the global values.
    public func limits(for app: String) -> ActivityLimits {
        guard var limits = perApp[app] else { return global }
        limits.maximumActivities = global.maximumActivities
        limits.maximumEndedActivities = global.maximumEndedActivities
        return limits
    }
}
