package import OrderedJSON
import OrderedCollections

/// When each owner last spent from one budget (starts, or alerts): a sliding window, so a
/// burst cannot be followed by another burst just because a fixed minute rolled over.
///
/// An entry at `t` counts while `now < t + window`.
package struct SlidingWindowLog: Sendable, Hashable {
    /// Per owner, the spending times in ascending order.
    package private(set) var times: [ActivityOwner: [Double]]

    package init(times: [ActivityOwner: [Double]] = [:]) {
        self.times = times.mapValues { $0.sorted() }
    }

    /// Entries of `owner` still inside the window at `now`.
    func inWindow(owner: ActivityOwner, window: Double, now: Double) -> ArraySlice<Double> {
        let all = times[owner] ?? []
        let firstInside = all.firstIndex { $0 + window > now } ?? all.endIndex
        return all[firstInside...]
    }

    /// What `owner` may still spend at `now`.
    func remaining(owner: ActivityOwner, budget: Int, window: Double, now: Double) -> Int {
        max(0, budget - inWindow(owner: owner, window: window, now: now).count)
    }

    /// Seconds until `owner` may spend again; 0 when it may now. With a budget of 0 nothing is
    /// ever allowed, and the answer is the window.
    func retryAfter(owner: ActivityOwner, budget: Int, window: Double, now: Double) -> Double {
        let spent = inWindow(owner: owner, window: window, now: now)
        guard spent.count >= budget else { return 0 }
        guard budget > 0 else { return window }
        // The window has room again once enough of the oldest entries have left it.
        let freeing = spent[spent.startIndex + (spent.count - budget)]
        return freeing + window - now
    }

    /// Records spending at `now`, forgetting what has left the window.
    mutating func record(owner: ActivityOwner, window: Double, now: Double) {
        var kept = Array(inWindow(owner: owner, window: window, now: now))
        let position = kept.lastIndex { $0 <= now }.map { $0 + 1 } ?? 0
        kept.insert(now, at: position)
        times[owner] = kept
    }

    /// Forgets every entry that has left its app's window, as given by `window(app)`.
    mutating func prune(now: Double, window: (String) -> Double) {
        for owner in Array(times.keys) {
            let kept = inWindow(owner: owner, window: window(owner.app), now: now)
            times[owner] = kept.isEmpty ? nil : Array(kept)
        }
    }

    /// The uids that spent (system scope).
    var uids: Set<UInt32> { Set(times.keys.compactMap(\.uid)) }

    /// `{"<app>": [t, …]}` for the owners with `uid`, apps sorted.
    func json(uid: UInt32?) -> JSONObject {
        var object: JSONObject = [:]
        for owner in times.keys.filter({ $0.uid == uid }).sorted(by: { $0.app < $1.app }) {
            object[owner.app] = .array(times[owner]!.map(JSON.double))
        }
        return object
    }

    /// Reads `json` (`json(uid:)`'s shape) as the spending of the owners with `uid`.
    /// `path` prefixes member names in errors.
    mutating func read(_ json: JSONObject, uid: UInt32?, path: String) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        for app in json.keys {
            var entries: [Double] = []
            for (index, entry) in try reader.array(app).enumerated() {
                guard let time = entry.doubleValue else {
                    throw ActivityDecodingError(path: "\(reader.pathOf(app)).\(index)", problem: "expected a number, found \(entry.typeName)")
                }
                entries.append(time)
            }
            times[ActivityOwner(app: app, uid: uid)] = entries.sorted()
        }
    }
}

/// The budgets the manager keeps per owner: starts, alerting updates and priority-10 pushes.
package struct ActivityBudgets: Sendable, Hashable {
    package internal(set) var starts: SlidingWindowLog
    package internal(set) var alerts: SlidingWindowLog
    /// Pushes at priority 10, which a budget of their own bounds. Stored apart from `json`,
    /// a row per owner (`PushSpending.row(for:)`).
    package internal(set) var pushes: PushSpending

    package init(
        starts: SlidingWindowLog = SlidingWindowLog(), alerts: SlidingWindowLog = SlidingWindowLog(),
        pushes: PushSpending = PushSpending()
    ) {
        self.starts = starts
        self.alerts = alerts
        self.pushes = pushes
    }

    /// `{"starts": {"<app>": [t, …]}, "alerts": {…}}`, and in the system scope
    /// `"users": {"<uid>": {"starts": {…}, "alerts": {…}}}` for what each user's apps spent.
    /// Not the pushes: they are spent far more often, and each owner's have a row of their own.
    package var json: JSONObject {
        var object: JSONObject = ["starts": .object(starts.json(uid: nil)), "alerts": .object(alerts.json(uid: nil))]
        let uids = starts.uids.union(alerts.uids)
        if !uids.isEmpty {
            var users: JSONObject = [:]
            for uid in uids.sorted() {
                users[String(uid)] = .object(["starts": .object(starts.json(uid: uid)), "alerts": .object(alerts.json(uid: uid))])
            }
            object["users"] = .object(users)
        }
        return object
    }

    /// Reads `json`; missing members are empty. `path` prefixes member names in errors. The
    /// pushes' spending times a daemon before the rows of `PushSpending` kept here are read too.
    package init(json: JSONObject, path: String = "") throws(ActivityDecodingError) {
        self.init()
        try read(json, uid: nil, path: path)
        let reader = ActivityJSONReader(json, path: path)
        let users = try reader.optionalObject("users") ?? [:]
        let usersReader = ActivityJSONReader(users, path: reader.pathOf("users"))
        for key in users.keys {
            guard let uid = UInt32(key) else {
                throw ActivityDecodingError(path: usersReader.pathOf(key), problem: "expected a uid")
            }
            try read(try usersReader.object(key), uid: uid, path: usersReader.pathOf(key))
        }
    }

    private mutating func read(_ json: JSONObject, uid: UInt32?, path: String) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        try starts.read(reader.optionalObject("starts") ?? [:], uid: uid, path: reader.pathOf("starts"))
        try alerts.read(reader.optionalObject("alerts") ?? [:], uid: uid, path: reader.pathOf("alerts"))
        try pushes.readTimes(reader.optionalObject("pushes") ?? [:], uid: uid, path: reader.pathOf("pushes"))
    }

    /// Whether `json` (a manager's stored document's budgets) holds pushes' spending times, as
    /// a daemon before `PushSpending`'s rows stored them.
    package static func holdsPushTimes(_ json: JSONObject) -> Bool {
        json["pushes"] != nil || (json["users"]?.objectValue?.values.contains { $0["pushes"] != nil } ?? false)
    }

    /// Forgets spending that no window still counts.
    mutating func prune(limits: LimitsPolicy, now: Double) {
        starts.prune(now: now) { limits.limits(for: $0).startBudgetWindow }
        alerts.prune(now: now) { limits.limits(for: $0).alertBudgetWindow }
        pushes.prune(now: now) { limits.limits(for: $0).pushBudgetWindow }
    }
}
