import IslandCore
import OrderedJSON
import OrderedCollections
import Synchronization
import Testing

/// Shared fixtures of the activity suites, as members of the suites (each conforms) rather
/// than globals, so they cannot clash with other suites of this test target.
protocol ActivityTesting {}

enum ActivityFixtures {
    /// A fixed origin for test time: every instant is `t0 + seconds`.
    static let t0: Double = 1_700_000_000
    static let pizza = "org.example.Pizza"
    static let weather = "org.example.Weather"
    static let entitled = AppAuthorization(entitled: true)
    static let entitledFrequent = AppAuthorization(entitled: true, frequentUpdatesAllowed: true)

    static func content(_ step: Int, staleDate: Double? = nil, relevance: Double = 0) -> ActivityContent {
        ActivityContent(state: ["step": .int(step)], staleDate: staleDate, relevanceScore: relevance)
    }
}

extension ActivityTesting {
    static var t0: Double { ActivityFixtures.t0 }
    var t0: Double { ActivityFixtures.t0 }
    var pizza: String { ActivityFixtures.pizza }
    var weather: String { ActivityFixtures.weather }
    var entitled: AppAuthorization { ActivityFixtures.entitled }
    var entitledFrequent: AppAuthorization { ActivityFixtures.entitledFrequent }

    func content(_ step: Int, staleDate: Double? = nil, relevance: Double = 0) -> ActivityContent {
        ActivityFixtures.content(step, staleDate: staleDate, relevance: relevance)
    }

    func makeManager(limits: LimitsPolicy = LimitsPolicy()) -> ActivityManager {
        let ids = CountingIDs()
        return ActivityManager(limits: limits, makeID: { ids.make() })
    }

    /// Expects `events` to be `expected` as labels ([ActivityEvent].labels). One typed `#expect`
    /// here instead of one per call: an `#expect(events.labels == [literal])` costs the test
    /// build 10-60 ms more of type-checking (the literal's type is inferred through the macro's
    /// expansion); a failure still shows both lists, at the caller's line.
    func expectLabels(
        _ events: [ActivityEvent], _ expected: [String], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(events.labels == expected, comment, sourceLocation: sourceLocation)
    }

    /// Expects an activity's state to be `expected` (nil: no such activity), as expectLabels does.
    func expectState(
        _ state: ActivityState?, _ expected: ActivityState?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(state == expected, comment, sourceLocation: sourceLocation)
    }

    /// Expects the activities' ids to be `expected`, in order, as expectLabels does.
    func expectIDs(_ ids: [String], _ expected: [String], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ids == expected, comment, sourceLocation: sourceLocation)
    }

    /// Limits with global values changed.
    func limits(_ change: (inout ActivityLimits) -> Void) -> LimitsPolicy {
        var global = ActivityLimits()
        change(&global)
        return LimitsPolicy(global: global)
    }
}

/// Ids "1", "2", … in request order.
final class CountingIDs: Sendable {
    private let next = Mutex(0)

    func make() -> String {
        next.withLock { value in
            value += 1
            return String(value)
        }
    }
}

extension ActivityManager {
    /// Starts an activity of `app` with small attributes and content step 0.
    @discardableResult
    mutating func start(
        _ app: String = ActivityFixtures.pizza,
        uid: UInt32? = nil,
        key: String? = nil,
        content initial: ActivityContent = ActivityFixtures.content(0),
        ownerGonePolicy: OwnerGonePolicy = .keep,
        entitlement: AppAuthorization = ActivityFixtures.entitled,
        at now: Double = ActivityFixtures.t0
    ) throws(IslandError) -> Activity {
        try request(
            app: app, uid: uid, type: "Delivery", attributes: ["order": "42"], content: initial, key: key,
            ownerGonePolicy: ownerGonePolicy, entitlement: entitlement, now: now
        ).activity
    }

    /// Updates with content `step`.
    @discardableResult
    mutating func update(
        _ id: String, step: Int, app: String = ActivityFixtures.pizza, uid: UInt32? = nil, alert: Alert? = nil,
        timestamp: Double? = nil,
        staleDate: Double? = nil, entitlement: AppAuthorization = ActivityFixtures.entitled, at now: Double
    ) throws(IslandError) -> UpdateOutcome {
        try update(
            app: app, uid: uid, id: id, content: ActivityFixtures.content(step, staleDate: staleDate), alert: alert,
            timestamp: timestamp, entitlement: entitlement, now: now
        )
    }
}

extension [ActivityEvent] {
    /// The events as short labels, to compare sequences at a glance: `changed:1:active`,
    /// `delivered:1`, `alerted:1`, `removed:1`, `settings`, `budgets:app`, `focus:100.0`, `focus:off`.
    var labels: [String] {
        map { event in
            switch event {
            case .changed(let activity): "changed:\(activity.id):\(activity.state.rawValue)"
            case .delivered(let activity): "delivered:\(activity.id)"
            case .alerted(let id, _): "alerted:\(id)"
            case .removed(let id): "removed:\(id)"
            case .settingsChanged: "settings"
            case .budgetsChanged(let app): "budgets:\(app)"
            case .pushesSpent(let owner): "pushes:\(owner.app)"
            case .focusChanged(let since): "focus:\(since.map { "\($0)" } ?? "off")"
            }
        }
    }
}

/// Expects the next instant something falls due to be `expected` (nil: nothing due). One typed
/// `#expect` for the many in the activity and island suites, as expectLabels.
func expectDeadline(_ deadline: Double?, _ expected: Double?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(deadline == expected, comment, sourceLocation: sourceLocation)
}
