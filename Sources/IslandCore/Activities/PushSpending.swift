package import OrderedJSON
import OrderedCollections

/// What one owner spent from its push budget, counted per bucket of 1/60 of the window rather
/// than as every spending time. Priority-10 pushes are frequent (an app with frequent updates
/// may send thousands an hour), and each is committed: recording one, and storing what was
/// spent, then costs the same however many came before — one count changed, at most 61 pairs
/// of integers written.
///
/// The precision kept: a spend counts from its moment until the end of its bucket plus the
/// window, so for up to one bucket (a minute of an hour) longer than its exact time would, and
/// never shorter. Within any window the budget is therefore never exceeded, as the exact log
/// would ensure; a spend is only freed up to a bucket later, and `retryAfter` says when it is.
package struct SpendingBuckets: Sendable, Hashable {
    /// One bucket's spends: bucket `number` covers `[number × width, (number + 1) × width)`.
    package struct Bucket: Sendable, Hashable {
        package var number: Int
        package var count: Int
    }

    /// Seconds each bucket covers.
    package private(set) var width: Double
    /// Ascending by number, every count at least 1.
    package private(set) var buckets: [Bucket] = []

    package init(window: Double) {
        width = Self.width(window: window)
    }

    private init(width: Double) {
        self.width = width
    }

    /// 1/60 of `window`, but never below a millisecond: bucket numbers of times since 1970 stay
    /// far inside an `Int`, and a window that short is a test's.
    static func width(window: Double) -> Double {
        max(window / 60, 0.001)
    }

    /// The bucket that holds `time`. A time no clock gives is pinned rather than trapping.
    private func number(of time: Double) -> Int {
        Int((time / width).rounded(.down).clamped(to: -0x1p52...0x1p52))
    }

    /// The instant a bucket's spends are taken to have happened at: its end, the latest any
    /// of them may have.
    private func end(of bucket: Bucket) -> Double {
        Double(bucket.number + 1) * width
    }

    /// The buckets still counted at `now`.
    private func counted(window: Double, now: Double) -> ArraySlice<Bucket> {
        let first = buckets.firstIndex { end(of: $0) + window > now } ?? buckets.endIndex
        return buckets[first...]
    }

    /// Spends counted at `now`.
    func spent(window: Double, now: Double) -> Int {
        counted(window: window, now: now).reduce(0) { $0 + $1.count }
    }

    /// Seconds until one more may be spent; 0 when it may now. With a budget of 0 nothing is
    /// ever allowed, and the answer is the window.
    func retryAfter(budget: Int, window: Double, now: Double) -> Double {
        let counted = counted(window: window, now: now)
        let spent = counted.reduce(0) { $0 + $1.count }
        guard spent >= budget else { return 0 }
        guard budget > 0 else { return window }
        // Room again once the oldest `spent - budget + 1` have left the window.
        var leaving = spent - budget + 1
        for bucket in counted {
            leaving -= bucket.count
            if leaving <= 0 { return end(of: bucket) + window - now }
        }
        return window
    }

    /// Records one spend at `now`, forgetting what has left the window. A window changed since
    /// the buckets were made makes them again first, so the precision follows the window.
    mutating func record(window: Double, now: Double) {
        rebucket(window: window)
        forget(window: window, now: now)
        add(1, at: number(of: now))
    }

    /// Drops the buckets no longer counted at `now`.
    mutating func forget(window: Double, now: Double) {
        buckets.removeFirst(buckets.count - counted(window: window, now: now).count)
    }

    /// Remakes the buckets at the width `window` asks for: each bucket's spends go to the new
    /// bucket that holds the last instant of the old one, so none counts for less time than it
    /// did.
    mutating func rebucket(window: Double) {
        let width = Self.width(window: window)
        guard width != self.width else { return }
        var remade = SpendingBuckets(width: width)
        for bucket in buckets {
            remade.add(bucket.count, at: Int((end(of: bucket) / width).rounded(.up).clamped(to: -0x1p52...0x1p52)) - 1)
        }
        self = remade
    }

    private mutating func add(_ count: Int, at number: Int) {
        // Spends come in time order: the last bucket, or a new one after it, almost always.
        let position = (buckets.lastIndex { $0.number <= number } ?? -1)
        if position >= 0, buckets[position].number == number {
            buckets[position].count += count
        } else {
            buckets.insert(Bucket(number: number, count: count), at: position + 1)
        }
    }

    package var isEmpty: Bool { buckets.isEmpty }

    // MARK: Stored form

    /// `{"bucketSec": 60, "buckets": [[number, count], …]}`.
    var json: JSONObject {
        ["bucketSec": .double(width), "buckets": bucketsJSON]
    }

    /// `json`'s `buckets`.
    var bucketsJSON: JSON {
        .array(buckets.map { .array([.int($0.number), .int($0.count)]) })
    }

    /// Reads `json` (`json`'s shape). `path` prefixes member names in errors.
    init(json: JSONObject, path: String) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        guard let width = json["bucketSec"]?.doubleValue, width.isFinite, width >= 0.001 else {
            throw ActivityDecodingError(path: reader.pathOf("bucketSec"), problem: "expected a number of seconds of at least 0.001")
        }
        self.init(width: width)
        let elements = try reader.array("buckets")
        // Bounds no row this daemon writes comes near (61 buckets, a count within a budget),
        // so that the sums of a damaged one cannot overflow.
        guard elements.count <= 4096 else {
            throw ActivityDecodingError(path: reader.pathOf("buckets"), problem: "more than 4096 buckets")
        }
        var read: [Bucket] = []
        for (index, element) in elements.enumerated() {
            guard let pair = element.arrayValue, pair.count == 2, let number = pair[0].intValue, let count = pair[1].intValue,
                abs(number) <= 1 << 52, count > 0, count <= 1 << 32
            else {
                throw ActivityDecodingError(path: "\(reader.pathOf("buckets")).\(index)", problem: "expected [bucket, count]")
            }
            read.append(Bucket(number: number, count: count))
        }
        for bucket in read.sorted(by: { $0.number < $1.number }) { add(bucket.count, at: bucket.number) }
    }

    /// Spending stored as every time (as daemons before the buckets stored it), each in a
    /// bucket of a millisecond: exact until the first `rebucket` makes them a window's.
    init(times: [Double]) {
        self.init(width: 0.001)
        for time in times.sorted() { add(1, at: number(of: time)) }
    }
}

/// The push budget's spending, per owner. Each owner's is stored in a setting row of its own
/// (`settingKey(for:)`, `row(for:)`), apart from the manager's document, so a push rewrites
/// only its own owner's few integers.
package struct PushSpending: Sendable, Hashable {
    package private(set) var owners: [ActivityOwner: SpendingBuckets] = [:]

    package init() {}

    /// What `owner` may still spend at `now`.
    func remaining(owner: ActivityOwner, budget: Int, window: Double, now: Double) -> Int {
        max(0, budget - (owners[owner]?.spent(window: window, now: now) ?? 0))
    }

    /// Seconds until `owner` may spend again; 0 when it may now.
    func retryAfter(owner: ActivityOwner, budget: Int, window: Double, now: Double) -> Double {
        (owners[owner] ?? SpendingBuckets(window: window)).retryAfter(budget: budget, window: window, now: now)
    }

    /// Records a spend of `owner` at `now`.
    mutating func record(owner: ActivityOwner, window: Double, now: Double) {
        owners[owner, default: SpendingBuckets(window: window)].record(window: window, now: now)
    }

    /// Forgets what has left each app's window (`window(app)`), in buckets made for it.
    mutating func prune(now: Double, window: (String) -> Double) {
        for owner in Array(owners.keys) {
            let window = window(owner.app)
            owners[owner]!.rebucket(window: window)
            owners[owner]!.forget(window: window, now: now)
            if owners[owner]!.isEmpty { owners[owner] = nil }
        }
    }

    // MARK: Stored form

    /// The prefix of every push spending row's setting key.
    package static let settingPrefix = "pushes/"

    /// `pushes/<uid>/<app>`, or `pushes/-/<app>` in the user scope: one row per owner, and
    /// distinct owners never share a key (the uid has no `/`).
    package static func settingKey(for owner: ActivityOwner) -> String {
        settingPrefix + (owner.uid.map(String.init) ?? "-") + "/" + owner.app
    }

    /// `{"app": …, "uid": …, "bucketSec": …, "buckets": […]}`: what `owner` spent, with its
    /// owner, so the row reads back without its key.
    package func row(for owner: ActivityOwner) -> JSONObject {
        // Built member by member, in `SpendingBuckets.json`'s order after the owner's: written
        // for every push at priority 10, where merging a second dictionary in cost as much as
        // the rest of the row.
        let spending = owners[owner] ?? SpendingBuckets(window: ActivityLimits.defaults.pushBudgetWindow)
        var row = JSONObject(minimumCapacity: 4)
        row["app"] = .string(owner.app)
        if let uid = owner.uid { row["uid"] = .int(Int(uid)) }
        row["bucketSec"] = .double(spending.width)
        row["buckets"] = spending.bucketsJSON
        return row
    }

    /// Reads a row `row(for:)` wrote; it replaces whatever was read of its owner before (the
    /// manager's document of an older daemon). `path` prefixes member names in errors.
    package mutating func read(row: JSONObject, path: String) throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(row, path: path)
        let app = try reader.string("app")
        var uid: UInt32?
        if let value = row["uid"] {
            guard let number = value.intValue, let exact = UInt32(exactly: number) else {
                throw ActivityDecodingError(path: reader.pathOf("uid"), problem: "expected a uid")
            }
            uid = exact
        }
        let spending = try SpendingBuckets(json: row, path: path)
        owners[ActivityOwner(app: app, uid: uid)] = spending.isEmpty ? nil : spending
    }

    /// Reads the spending times an older daemon stored in the manager's document
    /// (`{"<app>": [t, …]}` for the owners with `uid`).
    mutating func readTimes(_ json: JSONObject, uid: UInt32?, path: String) throws(ActivityDecodingError) {
        var log = SlidingWindowLog()
        try log.read(json, uid: uid, path: path)
        for (owner, times) in log.times where !times.isEmpty { owners[owner] = SpendingBuckets(times: times) }
    }

    /// Every owner's row, by setting key.
    package var rows: [(key: String, row: JSONObject)] {
        owners.keys.map { (Self.settingKey(for: $0), row(for: $0)) }.sorted { $0.key < $1.key }
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
