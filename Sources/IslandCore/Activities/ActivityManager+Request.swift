package import OrderedJSON
import OrderedCollections

extension ActivityManager {
    /// Starts an activity for `app` run by `uid` (nil in the user scope) — or, when `key`
    /// matches a live (pending, active or stale) activity of the same owner, returns that one
    /// unchanged (`created: false`, no budget spent), so a producer can retry a request whose
    /// reply it lost. Once that activity has ended its key is free (docs/design.md §3): a nightly
    /// job with a stable key starts a new activity each night, not the last one's ended card. `sourceApp` is the app the activity is about when the producer may speak for it,
    /// which the caller decided. Limits and budgets count per owner: another user's activities of the same app
    /// neither match the key nor count against this one's limits.
    ///
    /// Checked in this order: `unentitled`, `denied`, `typeTooLong`, `keyTooLong`, the key,
    /// `implausibleStartDate`, `startAlertRequired`, `alertTooLarge`, `attributesTooLarge`, `nestingTooDeep` (the state), `implausibleStaleDate`, `nestingTooDeep`
    /// (the attributes), `targetMaximumExceeded`,
    /// `globalMaximumExceeded`, `startBudgetExceeded`. The new
    /// activity is `active`, or `stale` when its content's stale date has already passed.
    ///
    /// With `start` (and then `alert`, which it requires) later than `now`, the activity is
    /// `pending` until then (`ScheduledStart`): it counts against the limits and spends from
    /// the start budget now, when it is requested, and presenters hear of it only as it starts.
    /// A `start` not later than `now` starts it at once, with its alert.
    package mutating func request(
        app: String,
        uid: UInt32? = nil,
        type: String,
        attributes: JSONObject,
        content: ActivityContent,
        key: String? = nil,
        ownerGonePolicy: OwnerGonePolicy = .keep,
        sourceApp: String? = nil,
        start: Double? = nil,
        alert: Alert? = nil,
        entitlement: AppAuthorization,
        now: Double
    ) throws(IslandError) -> RequestOutcome {
        guard entitlement.entitled else { throw .unentitled(app: app, reason: entitlement.refusal) }
        guard settings.isEnabled(app: app) else { throw .denied(app: app) }
        try ActivityInput.checkNames(type: type, key: key)
        let owner = ActivityOwner(app: app, uid: uid)
        if let key, let existing = activities.values.first(where: { $0.key == key && $0.owner == owner && $0.isLive }) {
            return RequestOutcome(activity: existing, created: false, events: [])
        }
        if let start {
            guard start <= ActivityLimits.latestDate else { throw .implausibleStartDate(given: start, latest: ActivityLimits.latestDate) }
            guard let alert else { throw .startAlertRequired(start: start) }
            try Self.checkAlert(alert)
        }
        let appLimits = limits.limits(for: app)
        try checkPayload(attributesSize: JSON.serializedSize(of: attributes), content: content, limits: appLimits, attributesFixed: false)
        try ActivityInput.checkNesting(of: attributes)
        guard liveCount(owner: owner) < appLimits.maximumActivitiesPerApp else {
            throw .targetMaximumExceeded(app: app, limit: appLimits.maximumActivitiesPerApp)
        }
        guard liveCount() < appLimits.maximumActivities else {
            throw .globalMaximumExceeded(limit: appLimits.maximumActivities)
        }
        let budget = appLimits.startBudget, window = appLimits.startBudgetWindow
        guard budgets.starts.remaining(owner: owner, budget: budget, window: window, now: now) > 0 else {
            let retryAfter = budgets.starts.retryAfter(owner: owner, budget: budget, window: window, now: now)
            throw .startBudgetExceeded(app: app, limit: budget, window: window, retryAfter: retryAfter)
        }

        let scheduled = start.map { $0 > now } ?? false
        var activity = Activity(
            id: makeID(), owner: owner, sourceApp: sourceApp, type: type, attributes: attributes, key: key,
            ownerGonePolicy: ownerGonePolicy, content: content,
            state: scheduled ? .pending : content.isStale(at: now) ? .stale : .active, now: now
        )
        if let start { activity.schedule = ScheduledStart(date: start, startsAt: max(start, now), alert: alert) }
        budgets.starts.record(owner: owner, window: window, now: now)
        if scheduled {
            store(activity)
            // Its app hears of it (the reply, its watchers); presenters not until it starts.
            return RequestOutcome(activity: activity, created: true, events: [.changed(activity), .budgetsChanged(app: app)])
        }
        let alerted = activity.schedule != nil ? takeStartAlert(of: &activity, now: now) : []
        store(activity)
        return RequestOutcome(
            activity: activity, created: true,
            events: [.changed(activity), .delivered(activity), .budgetsChanged(app: app)] + alerted)
    }

    /// `attributesSize`: `JSON.serializedSize(of:)` the attributes, which an activity keeps.
    /// `attributesFixed`: they were accepted before (an update, an end), so a refusal blames the
    /// state; on a request it blames the larger of the two.
    func checkPayload(
        attributesSize: Int, content: ActivityContent, limits: ActivityLimits,
        attributesFixed: Bool = true
    ) throws(IslandError) {
        let stateSize = content.stateText.count
        let size = attributesSize + stateSize
        guard size <= limits.maximumPayloadBytes else {
            let part: PayloadPart = attributesFixed || stateSize >= attributesSize ? .state : .attributes
            throw .attributesTooLarge(limit: limits.maximumPayloadBytes, size: size, part: part)
        }
        // After the size check, which bounds the text this reads.
        try ActivityInput.checkNesting(ofState: content)
        try ActivityInput.checkStaleDate(of: content)
    }
}
