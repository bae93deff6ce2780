/// A push's priority, as APNs' `apns-priority`: how soon it must reach the screen, and so what
/// it costs. The raw values are the payload's numbers.
package enum PushPriority: Int, Sendable, Hashable, CaseIterable {
    /// Only on broadcast channels: delivered when the island is not busy, never waking anything.
    case background = 1
    /// Exempt from the push budget; coalesced to the latest per activity.
    case low = 5
    /// At once (within the activity's update rate); spends from the app's push budget.
    case high = 10
}

extension ActivityManager {
    /// An update through a push at `priority`: the rules of `update`, plus the app's push
    /// budget for `high` — `pushBudget` (or `frequentPushBudget`, with frequent updates on)
    /// per `pushBudgetWindow`, refused beyond with `pushBudgetExceeded` and nothing spent.
    /// `low` spends nothing; its content is coalesced, the latest wins, as every update's is
    /// beyond the activity's rate. A refused update spends nothing either.
    package mutating func pushUpdate(
        app: String,
        uid: UInt32? = nil,
        id: String,
        content: ActivityContent,
        alert: Alert? = nil,
        timestamp: Double? = nil,
        priority: PushPriority,
        entitlement: AppAuthorization,
        now: Double
    ) throws(IslandError) -> UpdateOutcome {
        let owner = ActivityOwner(app: app, uid: uid)
        let appLimits = limits.limits(for: app)
        let budget = settings.frequentUpdates(app: app, authorization: entitlement) ? appLimits.frequentPushBudget : appLimits.pushBudget
        let window = appLimits.pushBudgetWindow
        let spends = priority == .high
        if spends, budgets.pushes.remaining(owner: owner, budget: budget, window: window, now: now) <= 0 {
            // Only the activity's owner learns of the budget: another app's id is unknown.
            _ = try owned(id: id, by: owner)
            throw .pushBudgetExceeded(
                app: app, limit: budget, window: window,
                retryAfter: budgets.pushes.retryAfter(owner: owner, budget: budget, window: window, now: now))
        }
        var outcome = try update(
            app: app, uid: uid, id: id, content: content, alert: alert, timestamp: timestamp,
            entitlement: entitlement, now: now)
        if spends {
            budgets.pushes.record(owner: owner, window: window, now: now)
            outcome.events.append(.pushesSpent(owner))
        }
        return outcome
    }

    /// Pushes at priority 10 the owner may still send in the current window.
    package func remainingPushes(app: String, uid: UInt32? = nil, entitlement: AppAuthorization, now: Double) -> Int {
        let appLimits = limits.limits(for: app)
        let budget = settings.frequentUpdates(app: app, authorization: entitlement) ? appLimits.frequentPushBudget : appLimits.pushBudget
        return budgets.pushes.remaining(owner: ActivityOwner(app: app, uid: uid), budget: budget, window: appLimits.pushBudgetWindow, now: now)
    }
}
