import OrderedCollections

/// Something an activity waits for. The order breaks ties between timers due at the same
/// instant: a coalesced content is delivered before the activity goes stale or ends, so the
/// final state shown is the latest one.
enum ActivityTimerKind: Int, Comparable, Sendable {
    /// A pending activity's `ScheduledStart.startsAt`: start it.
    case start
    /// `nextDeliveryAt`: deliver the coalesced content.
    case delivery
    /// `ownerGraceEndsAt`: the owner did not return; turn stale.
    case ownerGrace
    /// The content's `staleDate` passed: turn stale.
    case staleDate
    /// `activeSince + maximumActiveDuration`: end with reason `expired`.
    case expiry
    /// `dismissAt`: dismiss and drop.
    case dismissal

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

struct ActivityTimer: Sendable {
    var id: String
    var at: Double
    var kind: ActivityTimerKind

    /// Earlier first, then by kind.
    func precedes(_ other: ActivityTimer) -> Bool { (at, kind) < (other.at, other.kind) }
}

extension ActivityManager {
    /// The earliest time at which `advance(to:)` has something to do, or nil when nothing waits.
    /// A scan of every activity; `advance(to:)` itself returns at once when nothing is due.
    package var nextDeadline: Double? { earliestTimer()?.at }

    /// A time no later than `nextDeadline`, known without that scan of every activity, for an
    /// owner that schedules a wake-up after every operation: waking early costs one
    /// `advance(to:)` that finds nothing due and makes the bound exact again. Nil when nothing
    /// waits.
    package var nextWakeUp: Double? {
        if timerBound == -.infinity { return nextDeadline }
        return timerBound.isFinite ? timerBound : nil
    }

    /// Applies every timer due at or before `now`, in time order, each at its own time: an
    /// activity whose 8 hours ran out while the daemon was down ends at the 8-hour mark, and is
    /// dismissed in the same call if its dismissal time has passed too.
    ///
    /// After a restore or a change of limits it then dismisses the ended activities beyond
    /// their bounds, oldest first.
    package mutating func advance(to now: Double) -> [ActivityEvent] {
        var events: [ActivityEvent] = []
        if now >= timerBound {
            while let timer = earliestTimer(), timer.at <= now, let activity = activities[timer.id] {
                events += fire(timer, on: activity)
            }
            refreshTimerBound()
        }
        if endedBoundsDue {
            endedBoundsDue = false
            events += dismissExcessEnded(at: now)
        }
        return events
    }

    mutating func fire(_ timer: ActivityTimer, on activity: Activity) -> [ActivityEvent] {
        var changed = activity
        let at = timer.at
        switch timer.kind {
        case .start:
            return startScheduled(activity, at: at)
        case .delivery:
            changed.deliveredContent = changed.content
            changed.deliveredAt = at
            changed.nextDeliveryAt = nil
            store(changed)
            return [.changed(changed), .delivered(changed)]
        case .ownerGrace:
            changed.ownerGraceEndsAt = nil
            guard changed.state != .stale else {
                store(changed)
                return [.changed(changed)]
            }
            changed.state = .stale
            changed.updatedAt = at
            store(changed)
            return [.changed(changed), .delivered(changed)]
        case .staleDate:
            changed.state = .stale
            changed.updatedAt = at
            store(changed)
            return [.changed(changed), .delivered(changed)]
        case .expiry:
            return finish(activity, reason: .expired, dismissalPolicy: .default, at: at).events
        case .dismissal:
            return dismissEnded(activity, at: at).events
        }
    }

    /// The earliest timer of `activity`, if it waits for anything; `appLimits`, its app's
    /// limits, when the caller has them.
    func nextTimer(of activity: Activity, limits appLimits: ActivityLimits? = nil) -> ActivityTimer? {
        var earliest: ActivityTimer?
        func consider(_ at: Double?, _ kind: ActivityTimerKind) {
            guard let at else { return }
            let timer = ActivityTimer(id: activity.id, at: at, kind: kind)
            if earliest.map(timer.precedes) ?? true { earliest = timer }
        }
        if activity.state == .pending {
            // Nothing else runs before it starts: no delivery (nobody sees it), no stale date,
            // and its 8 hours count from its start.
            consider(activity.schedule?.startsAt, .start)
        } else if activity.isLive {
            consider(activity.nextDeliveryAt, .delivery)
            consider(activity.ownerGraceEndsAt, .ownerGrace)
            if activity.state == .active { consider(activity.content.staleDate, .staleDate) }
            consider(activity.activeSince + (appLimits ?? limits.limits(for: activity.app)).maximumActiveDuration, .expiry)
        } else if activity.state == .ended {
            // Final content given by a second end waits for its slot like an update's.
            consider(activity.nextDeliveryAt, .delivery)
            consider(activity.dismissAt, .dismissal)
        }
        return earliest
    }

    /// The earliest timer of all; ties go to the older activity.
    func earliestTimer() -> ActivityTimer? {
        var earliest: ActivityTimer?
        for activity in activities.values {
            guard let timer = nextTimer(of: activity) else { continue }
            if earliest.map(timer.precedes) ?? true { earliest = timer }
        }
        return earliest
    }

    mutating func refreshTimerBound() {
        timerBound = earliestTimer()?.at ?? .infinity
    }
}
