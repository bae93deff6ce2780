/// One consequence of a manager operation. Operations return their events in order, so the
/// daemon persists and publishes exactly what changed and nothing else.
package enum ActivityEvent: Sendable, Hashable {
    /// The stored activity changed in any way: persist it (and tell its app's watchers).
    case changed(Activity)
    /// What presenters see of the activity changed — it appeared, its `deliveredContent` was
    /// (re)delivered, or its `state` changed: publish it. Always follows a `.changed` of the same
    /// activity; a throttled update yields `.changed` alone, as presenters see nothing new yet.
    case delivered(Activity)
    /// An alerting update was delivered: presenters expand the activity and show the alert.
    case alerted(id: String, alert: Alert)
    /// The activity was dismissed and dropped from the manager: delete it from storage and
    /// presenters. Follows a `.changed` carrying its final, `dismissed` state.
    case removed(id: String)
    /// The user settings changed: persist `ActivityManager.settings`.
    case settingsChanged
    /// The app spent from its start or alert budget: persist `ActivityManager.budgets`.
    case budgetsChanged(app: String)
    /// The owner spent from its push budget: persist its row (`PushSpending.row(for:)`).
    case pushesSpent(ActivityOwner)
    /// Do Not Disturb was turned on (`since`, when) or off (nil): tell presenters and
    /// watchers. Follows the `.settingsChanged` that persists it.
    case focusChanged(since: Double?)
}

extension ActivityEvent {
    /// The activity of a `.changed` event.
    var changedActivity: Activity? {
        if case .changed(let activity) = self { activity } else { nil }
    }
}

/// The reply to `ActivityManager.request`.
package struct RequestOutcome: Sendable, Hashable {
    package var activity: Activity
    /// False when the idempotency key matched an existing activity, which is returned as is.
    package var created: Bool
    package var events: [ActivityEvent]
}

/// The reply to `ActivityManager.update`: whether the content reached presenters and whether the
/// alert was shown, so budget effects are never silent.
package struct UpdateOutcome: Sendable, Hashable {
    package var activity: Activity
    /// The content was accepted but coalesced: presenters get it (or a later one) at `deliverAt`.
    package var throttled: Bool
    /// When presenters get this content: `now` unless throttled.
    package var deliverAt: Double
    /// The alert was shown.
    package var alerted: Bool
    /// Why an alert that was given was not shown (the update applied silently); nil when it
    /// was shown or none was given.
    package var alertSuppression: AlertSuppression?
    /// An alert was given but not shown.
    package var alertSuppressed: Bool { alertSuppression != nil }
    /// Alerting updates the app has left in the current window.
    package var alertsRemaining: Int
    package var events: [ActivityEvent]
}

/// Why an alerting update applied without its alert.
package enum AlertSuppression: String, Sendable, Hashable {
    /// The app's alert budget is spent.
    case budget
    /// The user turned Do Not Disturb on.
    case focus
    /// The activity is pending: nobody sees it yet, and its start brings its own alert.
    case pending
}

/// The reply to `ActivityManager.end`.
package struct EndOutcome: Sendable, Hashable {
    /// The ended activity (`dismissed` when dismissal was immediate).
    package var activity: Activity
    package var events: [ActivityEvent]
}
