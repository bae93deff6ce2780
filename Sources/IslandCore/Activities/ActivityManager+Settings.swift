extension ActivityManager {
    /// Whether Live Activities are on for every app (the user's global switch).
    package var isGloballyEnabled: Bool { settings.enabled }

    /// Whether the user allows `app` to run activities, globally and for the app. Says nothing
    /// about the manifest: see `authorization(app:entitlement:now:)` for the whole answer.
    package func isEnabled(app: String) -> Bool { settings.isEnabled(app: app) }

    /// Turns Live Activities on or off for every app. Off ends every live activity with reason
    /// `user` (default dismissal) and later requests are `denied`.
    package mutating func setGlobalEnabled(_ enabled: Bool, now: Double) -> [ActivityEvent] {
        guard settings.enabled != enabled else { return [] }
        settings.enabled = enabled
        var events: [ActivityEvent] = [.settingsChanged]
        if !enabled { events += finishAll(reason: .user, at: now) { _ in true } }
        return events
    }

    /// Turns Live Activities on or off for `app`. Off ends its live activities with reason
    /// `user` (default dismissal) and later requests are `denied`.
    package mutating func setEnabled(app: String, _ enabled: Bool, now: Double) -> [ActivityEvent] {
        guard settings.settings(for: app).enabled != enabled else { return [] }
        settings.apps[app, default: AppActivitySettings()].enabled = enabled
        var events: [ActivityEvent] = [.settingsChanged]
        if !enabled { events += finishAll(reason: .user, at: now) { $0.app == app } }
        return events
    }

    /// Turns frequent updates on or off for `app`. Only effective when its manifest allows
    /// them; a delivery already scheduled keeps its time. (`now` is taken like every other
    /// settings operation takes it, though nothing here depends on it yet.)
    package mutating func setFrequentUpdates(app: String, _ enabled: Bool, now: Double) -> [ActivityEvent] {
        guard settings.settings(for: app).frequentUpdates != enabled else { return [] }
        settings.apps[app, default: AppActivitySettings()].frequentUpdates = enabled
        return [.settingsChanged]
    }

    /// When the user turned Do Not Disturb (focus) on; nil while it is off.
    package var focusSince: Double? { settings.focusSince }

    /// Turns Do Not Disturb on or off. While on, alerting updates apply without their alert
    /// (`AlertSuppression.focus`). Turning it on again keeps the time it was first turned on.
    package mutating func setFocus(_ on: Bool, now: Double) -> [ActivityEvent] {
        guard (settings.focusSince != nil) != on else { return [] }
        settings.focusSince = on ? now : nil
        return [.settingsChanged, .focusChanged(since: settings.focusSince)]
    }

    /// What `app` run by `uid` (nil in the user scope) may do at `now`, given its manifest:
    /// the budgets and counts are that owner's.
    package func authorization(app: String, uid: UInt32? = nil, entitlement: AppAuthorization, now: Double) -> AuthorizationInfo {
        let appLimits = limits.limits(for: app)
        let owner = ActivityOwner(app: app, uid: uid)
        return AuthorizationInfo(
            app: app,
            entitled: entitlement.entitled,
            enabled: entitlement.entitled && settings.isEnabled(app: app),
            frequentUpdates: settings.frequentUpdates(app: app, authorization: entitlement),
            limits: appLimits,
            remainingStarts: budgets.starts.remaining(
                owner: owner, budget: appLimits.startBudget, window: appLimits.startBudgetWindow, now: now),
            remainingAlerts: budgets.alerts.remaining(
                owner: owner, budget: appLimits.alertBudget, window: appLimits.alertBudgetWindow, now: now),
            liveActivities: liveCount(owner: owner),
            globalLiveActivities: liveCount()
        )
    }
}
