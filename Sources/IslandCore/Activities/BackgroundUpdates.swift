import OrderedCollections

/// Updates at priority 1 (`PushPriority.background`, broadcast channels only) while the island
/// is busy: each activity's latest is held — one per activity, so what is held is bounded by
/// the activities — and all are handed back once the island is no longer busy. Such an update
/// never alerts (a message at priority 1 with an alert is refused before it gets here), so
/// applying it later wakes nothing. Pure: the caller says until when the island is busy and
/// what time it is.
///
/// The island is busy while an expansion shows on it: an alert presented, or an activity the
/// user expanded (`IslandInteractions.busyUntil`).
package struct BackgroundUpdates<Update: Sendable>: Sendable {
    package struct Held: Sendable {
        package var activity: String
        package var timestamp: Double
        package var update: Update
    }

    package enum Decision: Sendable, Hashable {
        /// The island is not busy: apply it now.
        case applyNow
        /// Held until the island is no longer busy, expected at `until` (later if another alert
        /// comes, sooner if the user lets go).
        case held(until: Double)
    }

    /// By activity, in the order first held.
    private var byActivity: OrderedDictionary<String, Held> = [:] {
        didSet { isEmpty = byActivity.isEmpty }
    }

    /// What is held, in the order first held.
    package var held: [Held] { Array(byActivity.values) }
    /// Kept as a stored value: it is asked after every commit, and working it out from
    /// `byActivity` there pays for this generic type's metadata each time, several times what
    /// it checks.
    package private(set) var isEmpty = true

    package init() {}

    /// An update of activity `id` with `timestamp`, at `now`, while the island is busy until
    /// `busyUntil` (nil or past: not busy). A held update with a later timestamp stays: the
    /// latest wins, whatever order the channel delivered them in.
    package mutating func offer(_ update: Update, activity id: String, timestamp: Double, busyUntil: Double?, now: Double) -> Decision {
        guard let until = busyUntil, until > now else { return .applyNow }
        hold(update, activity: id, timestamp: timestamp)
        return .held(until: until)
    }

    /// Holds an update of activity `id` whatever the island does (one held before a restart,
    /// read back from the store): kept unless a later one is held already.
    package mutating func hold(_ update: Update, activity id: String, timestamp: Double) {
        if let existing = byActivity[id], existing.timestamp > timestamp { return }
        byActivity[id] = Held(activity: id, timestamp: timestamp, update: update)
    }

    /// Whether the update held for activity `id` is the one stamped `timestamp`: a later one
    /// may have replaced it meanwhile.
    package func holds(activity id: String, timestamp: Double) -> Bool {
        byActivity[id]?.timestamp == timestamp
    }

    /// Every held update, in the order first held, once the island is no longer busy at `now`;
    /// none while it is.
    package mutating func release(busyUntil: Double?, now: Double) -> [Held] {
        if let until = busyUntil, until > now { return [] }
        defer { byActivity = [:] }
        return held
    }

    /// Activity `id` is gone: what was held for it goes too. Whether anything was.
    @discardableResult
    package mutating func forget(activity id: String) -> Bool {
        byActivity.removeValue(forKey: id) != nil
    }
}
