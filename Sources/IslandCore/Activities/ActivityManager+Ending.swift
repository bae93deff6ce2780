import OrderedCollections

extension ActivityManager {
    /// Ends a live activity of `app` run by `uid` (nil in the user scope), with optional final
    /// content that reaches presenters at once, bypassing the rate (the final state is the one
    /// that matters). The ended activities beyond their bounds are dismissed. Refused like
    /// `update`: `noSuchActivity`, `staleTimestamp`, `implausibleTimestamp`,
    /// `attributesTooLarge`.
    ///
    /// `dismissalPolicy` decides how long it stays listed: `default` for
    /// `maximumDismissalDelay`, `immediate` not at all, `after(date)` until the date, clamped
    /// to `[now, now + maximumDismissalDelay]`.
    ///
    /// An activity that has already ended can be ended again, as ActivityKit's
    /// `end(_:dismissalPolicy:)` allows: see `amendEnded`.
    package mutating func end(
        app: String,
        uid: UInt32? = nil,
        id: String,
        content: ActivityContent? = nil,
        dismissalPolicy: DismissalPolicy = .default,
        timestamp: Double? = nil,
        entitlement: AppAuthorization = AppAuthorization(entitled: true),
        now: Double
    ) throws(IslandError) -> EndOutcome {
        var activity = try owned(id: id, by: ActivityOwner(app: app, uid: uid))
        guard activity.isLive else {
            return try amendEnded(
                activity, content: content, dismissalPolicy: dismissalPolicy, timestamp: timestamp,
                entitlement: entitlement, now: now)
        }
        try checkOrder(of: timestamp, for: activity, now: now)
        if let content {
            try checkPayload(attributesSize: activity.attributesSize, content: content, limits: limits.limits(for: app))
            activity.content = content
        }
        if let timestamp { activity.lastTimestamp = timestamp }
        let (ended, events) = finish(activity, reason: .app, dismissalPolicy: dismissalPolicy, at: now)
        return EndOutcome(activity: ended, events: events)
    }

    /// Ends an ended activity again: its final content (when given) and its dismissal policy
    /// replace the ones it ended with. It keeps its end reason and the time it ended, and the
    /// dismissal is clamped to `[now, endedAt + maximumDismissalDelay]`, so ending again never
    /// keeps an activity listed longer than one end could. New content reaches presenters at
    /// the activity's update rate, as an update's does (a first end delivers at once, but only
    /// once). An activity the user or the daemon ended (`user`, `system`) stays as they left it:
    /// `activityEnded`.
    mutating func amendEnded(
        _ ended: Activity, content: ActivityContent?, dismissalPolicy: DismissalPolicy, timestamp: Double?,
        entitlement: AppAuthorization, now: Double
    ) throws(IslandError) -> EndOutcome {
        var activity = ended
        guard activity.state == .ended, activity.endReason != .user, activity.endReason != .system else {
            throw .activityEnded(id: activity.id, state: activity.state)
        }
        try checkOrder(of: timestamp, for: activity, now: now)
        let appLimits = limits.limits(for: activity.app)
        var delivered = false
        if let content {
            try checkPayload(attributesSize: activity.attributesSize, content: content, limits: appLimits)
            activity.content = content
            let slot = activity.deliveredAt + deliveryInterval(app: activity.app, entitlement: entitlement, limits: appLimits)
            if now >= slot {
                activity.deliveredContent = content
                activity.deliveredAt = now
                activity.nextDeliveryAt = nil
                delivered = true
            } else {
                activity.nextDeliveryAt = slot
            }
        }
        if let timestamp { activity.lastTimestamp = timestamp }
        activity.updatedAt = now
        let latest = (activity.endedAt ?? now) + appLimits.maximumDismissalDelay
        let dismissAt =
            switch dismissalPolicy {
            case .default: latest
            case .immediate: now
            case .after(let date): min(max(date, now), latest)
            }
        activity.dismissAt = dismissAt
        if dismissAt <= now {
            // Dismissed now: the latest content is the last the presenters see.
            activity.deliveredContent = activity.content
            activity.nextDeliveryAt = nil
            let (dismissed, events) = dismissEnded(activity, at: now)
            return EndOutcome(activity: dismissed, events: events)
        }
        store(activity)
        return EndOutcome(activity: activity, events: delivered ? [.changed(activity), .delivered(activity)] : [.changed(activity)])
    }

    /// The user dismissed the activity from a presenter: a live one ends with reason `user`, an
    /// ended one keeps its reason. Either way it is dismissed and dropped.
    package mutating func dismiss(id: String, now: Double) throws(IslandError) -> [ActivityEvent] {
        guard let activity = activities[id] else { throw .noSuchActivity(id: id) }
        if activity.isLive { return finish(activity, reason: .user, dismissalPolicy: .immediate, at: now).events }
        return dismissEnded(activity, at: now).events
    }

    /// Ends a live activity: the latest accepted content is delivered (a coalesced update is not
    /// lost), pending timers are dropped, and dismissal is scheduled — or done, when due now.
    /// A `pending` activity is dismissed as it ends: nobody saw it, so there is nothing to
    /// leave listed.
    mutating func finish(
        _ live: Activity, reason: EndReason, dismissalPolicy requested: DismissalPolicy, at now: Double
    ) -> (activity: Activity, events: [ActivityEvent]) {
        let dismissalPolicy = live.state == .pending ? .immediate : requested
        var activity = live
        activity.deliveredContent = activity.content
        activity.deliveredAt = now
        activity.nextDeliveryAt = nil
        activity.ownerGraceEndsAt = nil
        activity.state = .ended
        activity.endReason = reason
        activity.endedAt = now
        activity.updatedAt = now
        let latest = now + limits.limits(for: activity.app).maximumDismissalDelay
        let dismissAt =
            switch dismissalPolicy {
            case .default: latest
            case .immediate: now
            case .after(let date): min(max(date, now), latest)
            }
        activity.dismissAt = dismissAt
        if dismissAt <= now { return dismissEnded(activity, at: now) }
        store(activity)
        var events: [ActivityEvent] = [.changed(activity), .delivered(activity)]
        events += dismissExcessEnded(at: now)
        // With a bound of 0 the activity just ended is itself the excess.
        if activities[activity.id] == nil,
            let dismissed = events.lazy.compactMap(\.changedActivity).last(where: { $0.id == activity.id })
        {
            activity = dismissed
        }
        return (activity, events)
    }

    /// Dismisses ended activities beyond `maximumEndedActivitiesPerApp` of their owner or
    /// beyond `maximumEndedActivities` in all, the oldest ended first: the newest are the ones
    /// still worth showing.
    mutating func dismissExcessEnded(at now: Double) -> [ActivityEvent] {
        let ended = activities.values.enumerated()
            .filter { $0.element.state == .ended }
            .sorted { ($0.element.endedAt ?? 0, $0.offset) < ($1.element.endedAt ?? 0, $1.offset) }
        let globalMaximum = limits.global.maximumEndedActivities
        var keptPerOwner: [ActivityOwner: Int] = [:]
        var kept = 0
        var excess: [Activity] = []
        for (_, activity) in ended.reversed() {
            let ownerMaximum = limits.limits(for: activity.app).maximumEndedActivitiesPerApp
            if keptPerOwner[activity.owner, default: 0] < ownerMaximum && kept < globalMaximum {
                keptPerOwner[activity.owner, default: 0] += 1
                kept += 1
            } else {
                excess.append(activity)
            }
        }
        return excess.reversed().flatMap { dismissEnded($0, at: now).events }
    }

    /// Dismisses an ended activity and drops it from the manager.
    mutating func dismissEnded(_ ended: Activity, at now: Double) -> (activity: Activity, events: [ActivityEvent]) {
        var activity = ended
        activity.state = .dismissed
        activity.dismissAt = now
        activity.updatedAt = now
        activities.removeValue(forKey: activity.id)
        return (activity, [.changed(activity), .removed(id: activity.id)])
    }

    /// Ends every live activity matching `predicate` with `reason`, default dismissal.
    mutating func finishAll(reason: EndReason, at now: Double, where predicate: (Activity) -> Bool) -> [ActivityEvent] {
        let targets = activities.values.filter { $0.isLive && predicate($0) }
        return targets.flatMap { finish($0, reason: reason, dismissalPolicy: .default, at: now).events }
    }
}
