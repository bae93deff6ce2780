/// A start at a later date (ActivityKit's scheduled activities): the activity is `pending`
/// until `startsAt` — listed to its app, shown by no presenter — then becomes active with
/// `alert`, which such a start always has, since nobody is looking when it appears.
package struct ScheduledStart: Sendable, Hashable {
    /// The date the request asked for, seconds since the Unix epoch.
    package var date: Double
    /// When the activity starts: `date`, or, when that passed while the daemon was not
    /// running, the moment it came back (`late`).
    package var startsAt: Double
    /// Shown as the activity starts; nil once it was (or, suppressed, was not).
    package var alert: Alert?
    /// Why the activity started after `date`; nil when it started on time (or has not yet).
    package var late: LateStart?

    package init(date: Double, startsAt: Double? = nil, alert: Alert?, late: LateStart? = nil) {
        self.date = date
        self.startsAt = startsAt ?? date
        self.alert = alert
        self.late = late
    }
}

/// Why a scheduled activity started after its date. The raw values are the wire strings.
package enum LateStart: String, Sendable, Hashable, CaseIterable {
    /// The daemon was not running at the date: the activity started as the daemon came back.
    case daemonDown
}
