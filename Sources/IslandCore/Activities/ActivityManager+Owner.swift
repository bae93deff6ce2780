import OrderedCollections

extension ActivityManager {
    /// The last producer connection of `app` run by `uid` (nil in the user scope) went away:
    /// another user's connections of the same app keep nothing of this one's alive, nor does
    /// their disconnect touch it. Each live activity of the owner follows its
    /// `OwnerGonePolicy`: `keep` does nothing, `end` ends it now with reason `ownerGone`, `stale`
    /// turns it stale after `ownerGoneGracePeriod` unless `ownerReturned(app:uid:)` comes first.
    /// A pending activity is left alone: a start is scheduled so that it needs no app running.
    package mutating func ownerGone(app: String, uid: UInt32? = nil, now: Double) -> [ActivityEvent] {
        let owner = ActivityOwner(app: app, uid: uid)
        var events: [ActivityEvent] = []
        let grace = limits.limits(for: app).ownerGoneGracePeriod
        for activity in activities.values where activity.owner == owner && activity.isLive && activity.state != .pending {
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

    /// A producer of `app` run by `uid` connected again: cancels the grace periods `ownerGone`
    /// started. Activities that already turned stale stay stale until the app updates them.
    package mutating func ownerReturned(app: String, uid: UInt32? = nil) -> [ActivityEvent] {
        let owner = ActivityOwner(app: app, uid: uid)
        var events: [ActivityEvent] = []
        for activity in activities.values where activity.owner == owner && activity.ownerGraceEndsAt != nil {
            var returned = activity
            returned.ownerGraceEndsAt = nil
            // The timer bound may now be early; `advance` tightens it.
            activities[returned.id] = returned
            events.append(.changed(returned))
        }
        return events
    }
}
