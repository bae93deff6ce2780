import OrderedCollections

extension ActivityManager {
    /// Starts a pending activity at `at`, its `ScheduledStart.startsAt`: `active` (or `stale`,
    /// when its content's stale date has passed meanwhile), presenters shown it with its alert.
    mutating func startScheduled(_ pending: Activity, at: Double) -> [ActivityEvent] {
        var activity = pending
        activity.state = activity.content.isStale(at: at) ? .stale : .active
        activity.deliveredContent = activity.content
        activity.deliveredAt = at
        activity.nextDeliveryAt = nil
        activity.updatedAt = at
        let alerted = takeStartAlert(of: &activity, now: at)
        store(activity)
        return [.changed(activity), .delivered(activity)] + alerted + (alerted.isEmpty ? [] : [.budgetsChanged(app: activity.app)])
    }

    /// The start alert of a scheduled activity starting `now`, taken from its schedule: shown
    /// as an alerting update's is — unless the user has Do Not Disturb on, or the app's alert
    /// budget is spent (then it starts silently, as such an update applies).
    mutating func takeStartAlert(of activity: inout Activity, now: Double) -> [ActivityEvent] {
        guard let alert = activity.schedule?.alert else { return [] }
        activity.schedule?.alert = nil
        let appLimits = limits.limits(for: activity.app)
        guard settings.focusSince == nil,
            budgets.alerts.remaining(owner: activity.owner, budget: appLimits.alertBudget, window: appLimits.alertBudgetWindow, now: now) > 0
        else { return [] }
        budgets.alerts.record(owner: activity.owner, window: appLimits.alertBudgetWindow, now: now)
        return [.alerted(id: activity.id, alert: alert)]
    }

    /// After a restart at `now`: a pending activity whose date passed while the daemon was
    /// down starts now, saying why it is late (`LateStart.daemonDown`).
    mutating func startLateSchedules(restoredAt now: Double) {
        for activity in activities.values where activity.state == .pending {
            guard let schedule = activity.schedule, schedule.startsAt < now else { continue }
            var late = activity
            late.schedule = ScheduledStart(date: schedule.date, startsAt: now, alert: schedule.alert, late: .daemonDown)
            activities[late.id] = late
        }
    }
}
