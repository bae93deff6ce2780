import IslandJSON

/// Every activity and budget, and the rules of DESIGN.md §3–4 over them: a value the daemon
/// holds (in an actor) and persists through the events each operation returns.
///
/// Pure: time is the `now` argument of every operation (seconds since the Unix epoch) and ids
/// come from `makeID`. Timers are data: the daemon sleeps until `nextDeadline` and then calls
/// `advance(to:)`. It calls `advance(to: now)` before every other operation too, so an
/// operation never sees an activity whose deadline has already passed (operations do not do it
/// themselves: a refused operation could not hand back the events of the timers it applied).
public struct ActivityManager: Sendable {
    /// The limits in force; replace on configuration reload.
    public var limits: LimitsPolicy {
        didSet { refreshTimerBound() }
    }
    /// Makes the id of each new activity (UUIDs in the daemon, a counter in tests).
    public var makeID: @Sendable () -> String
    /// The user's choices; change them with `setGlobalEnabled`, `setEnabled`, `setFrequentUpdates`.
    public internal(set) var settings: ActivitySettings
    /// Start and alert spending per app.
    public internal(set) var budgets: ActivityBudgets

    /// Every activity not yet dismissed, in creation order.
    var activities: OrderedDictionary<String, Activity>
    /// Never later than the earliest timer: `advance(to:)` returns at once before it. It may be
    /// earlier than any real timer after one was cancelled; `advance` then tightens it.
    var timerBound: Double = -.infinity

    public init(
        limits: LimitsPolicy = LimitsPolicy(),
        settings: ActivitySettings = ActivitySettings(),
        makeID: @escaping @Sendable () -> String
    ) {
        self.limits = limits
        self.makeID = makeID
        self.settings = settings
        self.budgets = ActivityBudgets()
        self.activities = [:]
        refreshTimerBound()
    }

    // MARK: Queries

    /// The activity with `id`, unless it was dismissed. Not filtered by app: callers acting for
    /// an app use the app-checked operations.
    public func activity(id: String) -> Activity? { activities[id] }

    /// Activities matching every given filter, oldest first (ties in creation order).
    public func list(app: String? = nil, type: String? = nil, states: Set<ActivityState>? = nil) -> [Activity] {
        activities.values.enumerated()
            .filter { _, activity in
                (app == nil || activity.app == app)
                    && (type == nil || activity.type == type)
                    && (states?.contains(activity.state) ?? true)
            }
            .sorted { ($0.element.createdAt, $0.offset) < ($1.element.createdAt, $1.offset) }
            .map(\.element)
    }

    /// Live (pending, active or stale) activities of `app`, or of every app when nil.
    public func liveCount(app: String? = nil) -> Int {
        activities.values.reduce(0) { count, activity in
            count + (activity.isLive && (app == nil || activity.app == app) ? 1 : 0)
        }
    }

    // MARK: Storage

    /// Writes `activity` back, keeping the timer bound no later than its timers.
    mutating func store(_ activity: Activity) {
        activities[activity.id] = activity
        if let timer = nextTimer(of: activity) { timerBound = min(timerBound, timer.at) }
    }

    /// The activity `id` as seen by `app`: another app's activity does not exist for it.
    func owned(id: String, by app: String) throws(IslandError) -> Activity {
        guard let activity = activities[id], activity.app == app else { throw .noSuchActivity(id: id) }
        return activity
    }
}
