extension ActivityManager {
    /// The last producer connection of `app` went away. Each live activity follows its
    /// `OwnerGonePolicy`: `keep` does nothing, `end` ends it now with reason `ownerGone`, `stale`
    /// turns it stale after `ownerGoneGracePeriod` unless `ownerReturned(app:)` comes first.
    public mutating func ownerGone(app: String, now: Double) -> [ActivityEvent] {
        var events: [ActivityEvent] = []
        let grace = limits.limits(for: app).ownerGoneGracePeriod
        for activity in activities.values where activity.app == app && activity.isLive {
            switch activity.ownerGonePolicy {
            case .keep:
                continue
            case .end:
                events += finish(activity, reason: .ownerGone, dismissalPolicy: .default, at: now).events
            case .stale:
                // A second disconnect must not push the deadline back: the first one started it.
                guard activity.ownerGraceEndsAt == nil else { continue }
                var waiting = activity
                waiting.ownerGraceEndsAt = now + grace
                store(waiting)
                events.append(.changed(waiting))
            }
        }
        return events
    }

    /// A producer of `app` connected again: cancels the grace periods `ownerGone` started.
    /// Activities that already turned stale stay stale until the app updates them.
    public mutating func ownerReturned(app: String) -> [ActivityEvent] {
        var events: [ActivityEvent] = []
        for activity in activities.values where activity.app == app && activity.ownerGraceEndsAt != nil {
            var returned = activity
            returned.ownerGraceEndsAt = nil
            // The timer bound may now be early; `advance` tightens it.
            activities[returned.id] = returned
            events.append(.changed(returned))
        }
        return events
    }
}
