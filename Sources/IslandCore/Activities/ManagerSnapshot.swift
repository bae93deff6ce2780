package import OrderedJSON
import OrderedCollections

/// Everything an `ActivityManager` needs to come back after a restart: its activities, the
/// budgets spent, and the user settings. Timers are not stored; they follow from the activities.
package struct ManagerSnapshot: Sendable, Hashable {
    /// Every activity not yet dismissed, in creation order.
    package var activities: [Activity]
    package var budgets: ActivityBudgets
    package var settings: ActivitySettings

    package init(activities: [Activity] = [], budgets: ActivityBudgets = ActivityBudgets(), settings: ActivitySettings = ActivitySettings()) {
        self.activities = activities
        self.budgets = budgets
        self.settings = settings
    }

    /// `{"activities": [{…}], "budgets": {…}, "settings": {…}, "pushSpending": [{…}]}`:
    /// everything in one document.
    package var json: JSONObject {
        var object: JSONObject = ["activities": .array(activities.map { .object($0.json) })]
        object.merge(settingsAndBudgetsJSON) { _, new in new }
        object["pushSpending"] = .array(budgets.pushes.rows.map { .object($0.row) })
        return object
    }

    package init(json: JSONObject) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json)
        var activities: [Activity] = []
        for (index, element) in try reader.array("activities").enumerated() {
            activities.append(try Activity(ActivityJSONReader(element, path: "activities.\(index)")))
        }
        try self.init(activities: activities, settingsAndBudgetsJSON: json)
        let rows = reader.optional("pushSpending") == nil ? [] : try reader.array("pushSpending")
        for (index, element) in rows.enumerated() {
            let path = "pushSpending.\(index)"
            try readPushSpending(row: ActivityJSONReader(element, path: path).object, path: path)
        }
    }

    /// `{"budgets": {…}, "settings": {…}}`: the snapshot without its activities, for a store
    /// that keeps each activity in a row of its own (`Activity.json`), and without the pushes'
    /// spending, which has a row per owner (`PushSpending.rows`).
    package var settingsAndBudgetsJSON: JSONObject {
        ["budgets": .object(budgets.json), "settings": .object(settings.json)]
    }

    /// Reassembles a snapshot from separately stored activities and `settingsAndBudgetsJSON`
    /// (missing parts take their defaults; other members are ignored).
    package init(activities: [Activity], settingsAndBudgetsJSON json: JSONObject) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json)
        self.activities = activities
        budgets = try ActivityBudgets(json: reader.optionalObject("budgets") ?? [:], path: "budgets")
        settings = try ActivitySettings(json: reader.optionalObject("settings") ?? [:], path: "settings")
    }

    /// Adds an owner's push spending as `PushSpending.row(for:)` stored it.
    package mutating func readPushSpending(row: JSONObject, path: String) throws(ActivityDecodingError) {
        try budgets.pushes.read(row: row, path: path)
    }
}

extension ActivityManager {
    /// The manager's whole state, for persistence.
    package var snapshot: ManagerSnapshot {
        ManagerSnapshot(activities: Array(activities.values), budgets: budgets, settings: settings)
    }

    /// `snapshot.settingsAndBudgetsJSON` without copying the activities: what to store on
    /// `.settingsChanged` and `.budgetsChanged`.
    package var settingsAndBudgetsJSON: JSONObject {
        ManagerSnapshot(budgets: budgets, settings: settings).settingsAndBudgetsJSON
    }

    /// Restores a manager from `snapshot`. Timers are recomputed from the activities, so
    /// whatever fell due while the daemon was down (expiry, staleness, dismissal, a coalesced
    /// delivery) happens on the first `advance(to:)`, in time order — except a scheduled start
    /// that passed, which happens at `now`, late (`LateStart`). Budget spending that no
    /// window counts any more at `now` is forgotten.
    ///
    /// Dismissed activities in the snapshot are skipped: they were already gone.
    package init(
        snapshot: ManagerSnapshot,
        limits: LimitsPolicy = LimitsPolicy(),
        now: Double,
        makeID: @escaping @Sendable () -> String
    ) {
        self.init(limits: limits, settings: snapshot.settings, makeID: makeID)
        // Stable, so activities created at the same instant keep the snapshot's order.
        let restored = snapshot.activities.enumerated()
            .filter { $0.element.state != .dismissed }
            .sorted { ($0.element.createdAt, $0.offset) < ($1.element.createdAt, $1.offset) }
        for (_, activity) in restored { activities[activity.id] = activity }
        budgets = snapshot.budgets
        budgets.prune(limits: limits, now: now)
        startLateSchedules(restoredAt: now)
        refreshTimerBound()
    }
}
