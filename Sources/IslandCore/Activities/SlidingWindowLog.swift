import IslandJSON

/// When each app last spent from one budget (starts, or alerts): a sliding window, so a burst
/// cannot be followed by another burst just because a fixed minute rolled over.
///
/// An entry at `t` counts while `now < t + window`.
public struct SlidingWindowLog: Sendable, Hashable {
    /// Per app, the spending times in ascending order.
    public private(set) var times: [String: [Double]]

    public init(times: [String: [Double]] = [:]) {
        self.times = times.mapValues { $0.sorted() }
    }

    /// Entries of `app` still inside the window at `now`.
    func inWindow(app: String, window: Double, now: Double) -> ArraySlice<Double> {
        let all = times[app] ?? []
        let firstInside = all.firstIndex { $0 + window > now } ?? all.endIndex
        return all[firstInside...]
    }

    /// What `app` may still spend at `now`.
    func remaining(app: String, budget: Int, window: Double, now: Double) -> Int {
        max(0, budget - inWindow(app: app, window: window, now: now).count)
    }

    /// Seconds until `app` may spend again; 0 when it may now. With a budget of 0 nothing is
    /// ever allowed, and the answer is the window.
    func retryAfter(app: String, budget: Int, window: Double, now: Double) -> Double {
        let spent = inWindow(app: app, window: window, now: now)
        guard spent.count >= budget else { return 0 }
        guard budget > 0 else { return window }
        // The window has room again once enough of the oldest entries have left it.
        let freeing = spent[spent.startIndex + (spent.count - budget)]
        return freeing + window - now
    }

    /// Records spending at `now`, forgetting what has left the window.
    mutating func record(app: String, window: Double, now: Double) {
        var kept = Array(inWindow(app: app, window: window, now: now))
        let position = kept.lastIndex { $0 <= now }.map { $0 + 1 } ?? 0
        kept.insert(now, at: position)
        times[app] = kept
    }

    /// Forgets every entry that has left its app's window, as given by `window(app)`.
    mutating func prune(now: Double, window: (String) -> Double) {
        for app in times.keys.sorted() {
            let kept = inWindow(app: app, window: window(app), now: now)
            times[app] = kept.isEmpty ? nil : Array(kept)
        }
    }

    /// `{"<app>": [t, …]}`, apps sorted.
    public var json: JSONObject {
        var object: JSONObject = [:]
        for app in times.keys.sorted() { object[app] = .array(times[app]!.map(JSON.double)) }
        return object
    }

    /// Reads `json`. `path` prefixes member names in errors.
    public init(json: JSONObject, path: String = "") throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        var times: [String: [Double]] = [:]
        for app in json.keys {
            var entries: [Double] = []
            for (index, entry) in try reader.array(app).enumerated() {
                guard let time = entry.doubleValue else {
                    throw ActivityDecodingError(path: "\(reader.pathOf(app)).\(index)", problem: "expected a number, found \(entry.typeName)")
                }
                entries.append(time)
            }
            times[app] = entries
        }
        self.init(times: times)
    }
}

/// The per-app budgets the manager keeps: starts and alerting updates.
public struct ActivityBudgets: Sendable, Hashable {
    public internal(set) var starts: SlidingWindowLog
    public internal(set) var alerts: SlidingWindowLog

    public init(starts: SlidingWindowLog = SlidingWindowLog(), alerts: SlidingWindowLog = SlidingWindowLog()) {
        self.starts = starts
        self.alerts = alerts
    }

    /// `{"starts": {"<app>": [t, …]}, "alerts": {…}}`.
    public var json: JSONObject { ["starts": .object(starts.json), "alerts": .object(alerts.json)] }

    /// Reads `json`; missing members are empty. `path` prefixes member names in errors.
    public init(json: JSONObject, path: String = "") throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        starts = try SlidingWindowLog(json: reader.optionalObject("starts") ?? [:], path: reader.pathOf("starts"))
        alerts = try SlidingWindowLog(json: reader.optionalObject("alerts") ?? [:], path: reader.pathOf("alerts"))
    }

    /// Forgets spending that no window still counts.
    mutating func prune(limits: LimitsPolicy, now: Double) {
        starts.prune(now: now) { limits.limits(for: $0).startBudgetWindow }
        alerts.prune(now: now) { limits.limits(for: $0).alertBudgetWindow }
    }
}
