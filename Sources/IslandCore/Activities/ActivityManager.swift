import OrderedJSON
import OrderedCollections

/// Every activity and budget, and the rules of docs/design.md §3–4 over them: a value the daemon
/// holds (in an actor) and persists through the events each operation returns.
///
/// Pure: time is the `now` argument of every operation (seconds since the Unix epoch) and ids
/// come from `makeID`. Timers are data: the daemon sleeps until `nextDeadline` and then calls
/// `advance(to:)`. It calls `advance(to: now)` before every other operation too, so an
/// operation never sees an activity whose deadline has already passed (operations do not do it
/// themselves: a refused operation could not hand back the events of the timers it applied).
package struct ActivityManager: Sendable {
    /// The limits in force; replace on configuration reload.
    package var limits: LimitsPolicy {
        didSet {
            lastAppLimits = nil
            refreshTimerBound()
            endedBoundsDue = true
        }
    }
    /// The app `appLimits(for:)` was asked for last, and its limits: a producer streaming
    /// updates asks for one app's each time, and comparing its id costs a tenth of hashing it.
    /// Forgotten when `limits` changes.
    private var lastAppLimits: (app: String, limits: ActivityLimits)?
    /// Makes the id of each new activity (UUIDs in the daemon, a counter in tests).
    package var makeID: @Sendable () -> String
    /// The user's choices; change them with `setGlobalEnabled`, `setEnabled`, `setFrequentUpdates`.
    package internal(set) var settings: ActivitySettings
    /// Start and alert spending per owner.
    package internal(set) var budgets: ActivityBudgets

    /// Every activity not yet dismissed, in creation order.
    var activities: OrderedDictionary<String, Activity>
    /// Never later than the earliest timer: `advance(to:)` returns at once before it. It may be
    /// earlier than any real timer after one was cancelled; `advance` then tightens it.
    var timerBound: Double = -.infinity
    /// The bounds on ended activities may be exceeded (restored from a snapshot, or the limits
    /// changed): the next `advance(to:)` applies them.
    var endedBoundsDue = true

    package init(
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

    /// The activity with `id`, unless it was dismissed. Not filtered by owner: callers acting
    /// for a producer use the owner-checked operations.
    package func activity(id: String) -> Activity? { activities[id] }

    /// Activities matching every given filter, oldest first (ties in creation order). `app`
    /// matches every owner of the app: what a producer sees is `list(owner:…)`.
    package func list(app: String? = nil, type: String? = nil, states: Set<ActivityState>? = nil) -> [Activity] {
        list(type: type, states: states) { app == nil || $0.app == app }
    }

    /// The activities of `owner` matching the filters: all a producer may ever list.
    package func list(owner: ActivityOwner, type: String? = nil, states: Set<ActivityState>? = nil) -> [Activity] {
        list(type: type, states: states) { $0.owner == owner }
    }

    private func list(type: String?, states: Set<ActivityState>?, where belongs: (Activity) -> Bool) -> [Activity] {
        activities.values.enumerated()
            .filter { _, activity in
                belongs(activity) && (type == nil || activity.type == type) && (states?.contains(activity.state) ?? true)
            }
            .sorted { ($0.element.createdAt, $0.offset) < ($1.element.createdAt, $1.offset) }
            .map(\.element)
    }

    /// Live (pending, active or stale) activities of every owner of `app`, or of every app
    /// when nil.
    package func liveCount(app: String? = nil) -> Int {
        activities.values.reduce(0) { count, activity in
            count + (activity.isLive && (app == nil || activity.app == app) ? 1 : 0)
        }
    }

    /// Live activities of `owner`: what its per-app maximum counts.
    package func liveCount(owner: ActivityOwner) -> Int {
        activities.values.reduce(0) { count, activity in count + (activity.isLive && activity.owner == owner ? 1 : 0) }
    }

    // MARK: Storage

    /// Writes `activity` back, keeping the timer bound no later than its timers.
    mutating func store(_ activity: Activity) {
        activities[activity.id] = activity
        if let timer = nextTimer(of: activity) { timerBound = min(timerBound, timer.at) }
    }

    /// The same for an activity found at `index` (`ownedIndex`), whose app's limits are
    /// `appLimits`: no look-up of its id, nor of its app's limits, again.
    mutating func store(_ activity: Activity, at index: Int, limits appLimits: ActivityLimits) {
        activities.values[index] = activity
        if let timer = nextTimer(of: activity, limits: appLimits) { timerBound = min(timerBound, timer.at) }
    }

    /// The activity `id` as seen by `owner`: another app's, or another user's, does not exist
    /// for it.
    func owned(id: String, by owner: ActivityOwner) throws(IslandError) -> Activity {
        activities.values[try ownedIndex(id: id, by: owner)]
    }

    /// `limits.limits(for: app)`, remembered for the next call.
    mutating func appLimits(for app: String) -> ActivityLimits {
        if let lastAppLimits, lastAppLimits.app == app { return lastAppLimits.limits }
        let found = limits.limits(for: app)
        lastAppLimits = (app, found)
        return found
    }

    /// Where `owned(id:by:)` is in `activities`.
    func ownedIndex(id: String, by owner: ActivityOwner) throws(IslandError) -> Int {
        guard let index = activities.index(forKey: id), activities.values[index].owner == owner else { throw .noSuchActivity(id: id) }
        return index
    }
}
