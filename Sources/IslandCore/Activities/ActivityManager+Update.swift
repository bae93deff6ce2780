import OrderedCollections
import OrderedJSON

extension ActivityManager {
    /// Applies new content to a live activity of `app` run by `uid` (nil in the user scope).
    ///
    /// Refused with `noSuchActivity` (unknown, or another owner's), `activityEnded`,
    /// `staleTimestamp`, `implausibleTimestamp`, `attributesTooLarge`, `nestingTooDeep` or `alertTooLarge`. Accepted content becomes
    /// `content` at once — the state turns `active` or `stale` by its stale date — but reaches presenters at most at
    /// the activity's rate (`updatesPerSecond`, or `frequentUpdatesPerSecond` when frequent
    /// updates are on): faster updates are coalesced, the latest wins, and the outcome says
    /// `throttled` and `deliverAt`. An `alert` spends from the owner's alert budget; when that is
    /// empty, or while the user has Do Not Disturb on (which spends nothing), the update applies
    /// without it and the outcome says why (`alertSuppression`). A `pending` activity stays
    /// pending: its new content is what it will start with, and an alert is not shown
    /// (`pending`: its start shows its own).
    ///
    /// `timestamp` (the producer's clock) orders updates: one that is not newer than the last
    /// accepted one is refused. Without a timestamp no order is checked.
    package mutating func update(
        app: String,
        uid: UInt32? = nil,
        id: String,
        content: ActivityContent,
        alert: Alert? = nil,
        timestamp: Double? = nil,
        entitlement: AppAuthorization,
        now: Double
    ) throws(IslandError) -> UpdateOutcome {
        let owner = ActivityOwner(app: app, uid: uid)
        let index = try ownedIndex(id: id, by: owner)
        var activity = activities.values[index]
        guard activity.isLive else { throw .activityEnded(id: id, state: activity.state) }
        try checkOrder(of: timestamp, for: activity, now: now)
        let appLimits = appLimits(for: app)
        try checkPayload(attributesSize: activity.attributesSize, content: content, limits: appLimits)
        if let alert { try Self.checkAlert(alert) }

        let previousState = activity.state
        let pending = previousState == .pending
        activity.content = content
        // A pending activity stays so until its date, whatever its content says.
        activity.state = pending ? .pending : content.isStale(at: now) ? .stale : .active
        activity.updatedAt = now
        if let timestamp { activity.lastTimestamp = timestamp }
        // An update proves the app has a producer again, whatever the daemon has told us.
        activity.ownerGraceEndsAt = nil

        let alertWindow = appLimits.alertBudgetWindow
        var alertsRemaining = budgets.alerts.remaining(owner: owner, budget: appLimits.alertBudget, window: alertWindow, now: now)
        // Focus is checked first: an alert the user chose not to see spends nothing of the
        // app's budget, so the app's alerts are all there when focus ends.
        let suppression: AlertSuppression? =
            alert == nil
            ? nil
            : pending
                ? .pending
                : settings.focusSince != nil
                    ? .focus
                    : alertsRemaining > 0 ? nil : .budget
        let alerted = alert != nil && suppression == nil
        if alerted {
            budgets.alerts.record(owner: owner, window: alertWindow, now: now)
            alertsRemaining -= 1
        }

        let interval = deliveryInterval(app: app, entitlement: entitlement, limits: appLimits)
        let slot = activity.deliveredAt + interval
        // An alert is about this very content, so it is delivered with it, bypassing the rate;
        // the alert budget (6/hour) already bounds how often that happens.
        // Nobody sees a pending activity's content yet: there is no rate to keep.
        let deliverNow = pending || alerted || now >= slot
        if deliverNow {
            activity.deliveredContent = content
            activity.deliveredAt = now
            activity.nextDeliveryAt = nil
        } else {
            activity.nextDeliveryAt = slot
        }
        store(activity, at: index, limits: appLimits)

        // Made as a literal of its first events: `reserveCapacity` on an empty array goes
        // through the standard library's general path of growing one (~200 instructions an
        // update, Benchmarks/profile.py), and an alert's two more grow it only then.
        var events: [ActivityEvent] =
            deliverNow || activity.state != previousState ? [.changed(activity), .delivered(activity)] : [.changed(activity)]
        if let alert, alerted {
            events.append(.alerted(id: id, alert: alert))
            events.append(.budgetsChanged(app: app))
        }
        return UpdateOutcome(
            activity: activity,
            throttled: !deliverNow,
            deliverAt: deliverNow ? now : slot,
            alerted: alerted,
            alertSuppression: suppression,
            alertsRemaining: alertsRemaining,
            events: events
        )
    }

    /// Refuses a timestamp that is not newer than the last accepted one. Equal is refused too:
    /// a timestamp names one version of the content, and a second update claiming the same
    /// version is either a retry of one already applied or a conflicting write that cannot be
    /// ordered — accepting it would let arrival order decide what the user sees. See
    /// `TimestampOrder.check` for the bound ahead of the clock.
    func checkOrder(of timestamp: Double?, for activity: Activity, now: Double) throws(IslandError) {
        guard let timestamp else { return }
        try TimestampOrder.check(timestamp, id: activity.id, last: activity.lastTimestamp, now: now)
    }

    /// Refuses an alert whose title and body together are over `maximumAlertBytes`: it would
    /// reach every presenter, outside the bound of the attributes and state.
    static func checkAlert(_ alert: Alert) throws(IslandError) {
        let size = alert.title.utf8.count + alert.body.utf8.count
        guard size <= ActivityLimits.maximumAlertBytes else {
            throw .alertTooLarge(limit: ActivityLimits.maximumAlertBytes, size: size)
        }
    }

    /// Seconds between two deliveries of one activity of `app`. A non-positive rate in the
    /// configuration means no limit rather than never delivering.
    func deliveryInterval(app: String, entitlement: AppAuthorization, limits: ActivityLimits) -> Double {
        let frequent = settings.frequentUpdates(app: app, authorization: entitlement)
        let rate = frequent ? limits.frequentUpdatesPerSecond : limits.updatesPerSecond
        return rate > 0 ? 1 / rate : 0
    }
}

/// The rule of ordering timestamps, for updates and ends (local or pushed) and for starts
/// through a push-to-start token.
package enum TimestampOrder {
    /// Refuses `timestamp` when it is more than `maximumTimestampSkew` ahead of `now`
    /// (`implausibleTimestamp`: one push in milliseconds would otherwise refuse every later
    /// one in seconds as stale, for ever), then when it is not newer than `last`
    /// (`staleTimestamp`). A `last` itself beyond that bound — kept from before the rule, or
    /// the daemon's clock was set back — orders nothing: the next plausible timestamp replaces
    /// it. So no last timestamp holds updates out for longer than the skew.
    package static func check(_ timestamp: Double, id: String, last: Double?, now: Double) throws(IslandError) {
        let latest = now + ActivityLimits.maximumTimestampSkew
        guard timestamp <= latest else { throw .implausibleTimestamp(id: id, given: timestamp, latest: latest) }
        guard let last, last <= latest else { return }
        guard timestamp > last else { throw .staleTimestamp(id: id, last: last, given: timestamp) }
    }
}
