import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// APNs' priority and expiry over MQTT: read from the payload, the expiry checked again as a
/// push arrives, and the push budget spent by priority 10 alone.
@Suite("Push priority and expiry")
struct PushPriorityTests: ActivityTesting {
    func decode(_ text: String) throws(PushRefusal) -> PushRequest {
        try PushPayload.decode(Array(text.utf8))
    }

    @Test func priorityAndExpirationAreRead() throws {
        let plain = try decode(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}}}"#)
        #expect(plain.priority == .high && plain.expiration == nil)
        let low = try decode(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "priority": 5, "expiration": 1700000100}}"#)
        #expect(low.priority == .low && low.expiration == 1_700_000_100)
        // 1 is read (broadcast channels use it); whether it is allowed is the receiver's rule.
        #expect(try decode(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "priority": 1}}"#).priority == .background)
        #expect(try decode(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "expiration": 0}}"#).expiration == 0)
    }

    @Test(arguments: [
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "priority": 7}}"#, "aps.priority must be 10, 5 or 1"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "priority": 10.5}}"#, "aps.priority must be 10, 5 or 1"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "priority": "10"}}"#, "aps.priority must be a number"),
        (
            #"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "expiration": -1}}"#,
            "aps.expiration must be 0 or a date in seconds since the epoch"
        ),
    ])
    func badValuesAreRefusedByName(_ text: String, _ reason: String) {
        #expect(throws: PushRefusal.invalidPayload(reason: reason)) { try decode(text) }
    }

    @Test func aPushArrivingAfterItsExpirationIsRefusedByName() throws {
        var request = PushRequest(event: .update, timestamp: t0)
        request.expiration = t0 + 10
        try request.checkArrival(at: t0 + 10)
        #expect(throws: PushRefusal.expired(expiration: t0 + 10, receivedAt: t0 + 10.5)) { try request.checkArrival(at: t0 + 10.5) }
        #expect(PushRefusal.expired(expiration: 1, receivedAt: 2).name == "org.island.PushExpired")
        // Now or never is the broker's to honour: what arrives, arrived now.
        request.expiration = 0
        try request.checkArrival(at: t0 + 1000)
    }

    @Test func priorityTenSpendsTheBudgetAndIsRefusedByNameBeyondIt() throws {
        var manager = makeManager(
            limits: limits {
                $0.pushBudget = 2; $0.pushBudgetWindow = 3600
            })
        let id = try manager.start().id
        for step in 1...2 {
            let outcome = try manager.pushUpdate(
                app: pizza, id: id, content: content(step), priority: .high, entitlement: entitled,
                now: t0 + Double(step))
            #expect(outcome.events.labels.contains("pushes:\(pizza)"))
        }
        // Both spends are in the minute [t0 - 20, t0 + 40), and count until its end plus the
        // hour: at most a minute longer than their own times would, never less.
        #expect(throws: IslandError.pushBudgetExceeded(app: pizza, limit: 2, window: 3600, retryAfter: 3600 + 40 - 3)) {
            try manager.pushUpdate(app: pizza, id: id, content: content(3), priority: .high, entitlement: entitled, now: t0 + 3)
        }
        #expect(manager.activity(id: id)?.content == content(2), "a refused push changes nothing")
        #expect(throws: IslandError.pushBudgetExceeded(app: pizza, limit: 2, window: 3600, retryAfter: 0.5)) {
            try manager.pushUpdate(app: pizza, id: id, content: content(3), priority: .high, entitlement: entitled, now: t0 + 3639.5)
        }
        // The window moves on.
        _ = try manager.pushUpdate(app: pizza, id: id, content: content(4), priority: .high, entitlement: entitled, now: t0 + 3640)
    }

    @Test func noWindowEverHoldsMoreThanTheBudget() throws {
        // Spends as fast as the budget allows, over three hours at odd moments: whatever the
        // buckets do, no hour-long window holds more than the budget.
        var manager = makeManager(
            limits: limits {
                $0.pushBudget = 5; $0.pushBudgetWindow = 3600
            })
        let id = try manager.start().id
        var spent: [Double] = []
        var now = t0
        while now < t0 + 3 * 3600 {
            if (try? manager.pushUpdate(app: pizza, id: id, content: content(spent.count), priority: .high, entitlement: entitled, now: now)) != nil {
                spent.append(now)
            }
            now += 7.3
        }
        #expect(spent.count >= 5 * 3 - 1, "the budget comes back each hour: \(spent.count)")
        for start in spent {
            #expect(spent.filter { $0 >= start && $0 < start + 3600 }.count <= 5)
        }
    }

    @Test func priorityFiveSpendsNothingAndCoalescesToTheLatest() throws {
        var manager = makeManager(limits: limits { $0.pushBudget = 1 })
        let id = try manager.start().id
        var outcomes: [UpdateOutcome] = []
        for step in 1...50 {
            outcomes.append(
                try manager.pushUpdate(
                    app: pizza, id: id, content: content(step), priority: .low, entitlement: entitled,
                    now: t0 + 0.1 + Double(step) * 0.001))
        }
        #expect(outcomes.allSatisfy { !$0.events.labels.contains("pushes:\(pizza)") })
        #expect(manager.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 1) == 1)
        // Within one delivery slot: presenters get the latest, once, when the slot comes.
        #expect(outcomes.filter { !$0.throttled }.count <= 1)
        let delivered = manager.advance(to: t0 + 0.5)
        expectLabels(delivered, ["changed:\(id):active", "delivered:\(id)"])
        #expect(manager.activity(id: id)?.deliveredContent == content(50))
        // The budget is whole for priority 10.
        _ = try manager.pushUpdate(app: pizza, id: id, content: content(51), priority: .high, entitlement: entitled, now: t0 + 1)
    }

    @Test func frequentUpdatesRaiseTheBudget() throws {
        var manager = makeManager(
            limits: limits {
                $0.pushBudget = 1; $0.frequentPushBudget = 3
            })
        _ = manager.setFrequentUpdates(app: pizza, true, now: t0)
        let id = try manager.start(entitlement: entitledFrequent).id
        for step in 1...3 {
            _ = try manager.pushUpdate(
                app: pizza, id: id, content: content(step), priority: .high, entitlement: entitledFrequent,
                now: t0 + Double(step))
        }
        #expect(manager.remainingPushes(app: pizza, entitlement: entitledFrequent, now: t0 + 4) == 0)
    }

    @Test func anotherAppsActivityIsNotFoundBeforeTheBudgetIsSaid() throws {
        var manager = makeManager(limits: limits { $0.pushBudget = 0 })
        let id = try manager.start(weather).id
        #expect(throws: IslandError.noSuchActivity(id: id)) {
            try manager.pushUpdate(app: pizza, id: id, content: content(1), priority: .high, entitlement: entitled, now: t0 + 1)
        }
    }

    @Test func thePushBudgetIsStoredInARowOfItsOwnThatHoldsACountAMinute() throws {
        var manager = makeManager(limits: limits { $0.frequentPushBudget = 100_000 })
        _ = manager.setFrequentUpdates(app: pizza, true, now: t0)
        let id = try manager.start(entitlement: entitledFrequent).id
        let owner = ActivityOwner(app: pizza)
        #expect(manager.budgets.pushes.rows.isEmpty)
        var buckets: Set<Int> = []
        var sizes: [Int] = []
        for step in 1...600 {
            let outcome = try manager.pushUpdate(
                app: pizza, id: id, content: content(step), priority: .high, entitlement: entitledFrequent,
                now: t0 + Double(step) * 0.01)
            #expect(outcome.events.last == .pushesSpent(owner))
            buckets.insert(manager.budgets.pushes.row(for: owner)["buckets"]?.arrayValue?.count ?? 0)
            sizes.append(JSON.object(manager.budgets.pushes.row(for: owner)).serialized().count)
        }
        #expect(buckets == [1], "six seconds, one bucket: the row holds a count, not every time")
        #expect(sizes.max()! - sizes.min()! == 2, "it grows with the count's digits alone: \(sizes.min()!)…\(sizes.max()!) bytes")
        #expect(manager.budgets.json["pushes"] == nil, "not in the manager's document")
        let row = try #require(JSONParser.parse(JSON.object(manager.budgets.pushes.row(for: owner)).serialized()).objectValue)
        #expect(row == ["app": .string(pizza), "bucketSec": 60.0, "buckets": [[28_333_333, 600]]])
        var restored = ManagerSnapshot()
        try restored.readPushSpending(row: row, path: "")
        #expect(restored.budgets.pushes == manager.budgets.pushes)
        #expect(PushSpending.settingKey(for: owner) == "pushes/-/\(pizza)")
        #expect(PushSpending.settingKey(for: ActivityOwner(app: pizza, uid: 1000)) == "pushes/1000/\(pizza)")
    }

    @Test func aPushBudgetSpentBeforeARestartIsStillSpentAfter() throws {
        var manager = makeManager(limits: limits { $0.pushBudget = 3 })
        let id = try manager.start().id
        for step in 1...3 {
            _ = try manager.pushUpdate(app: pizza, id: id, content: content(step), priority: .high, entitlement: entitled, now: t0 + Double(step))
        }
        let stored = try #require(JSONParser.parse(JSON.object(manager.snapshot.json).serialized()).objectValue)
        var restored = ActivityManager(snapshot: try ManagerSnapshot(json: stored), limits: manager.limits, now: t0 + 600, makeID: { "x" })
        #expect(restored.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 600) == 0)
        #expect(throws: IslandError.pushBudgetExceeded(app: pizza, limit: 3, window: 3600, retryAfter: 3600 + 40 - 600)) {
            try restored.pushUpdate(app: pizza, id: id, content: content(4), priority: .high, entitlement: entitled, now: t0 + 600)
        }
        // And forgotten once the window has passed, as before the restart.
        let late = ActivityManager(snapshot: try ManagerSnapshot(json: stored), limits: manager.limits, now: t0 + 3640, makeID: { "x" })
        #expect(late.budgets.pushes.rows.isEmpty)
    }

    @Test func pushSpendingTimesAnOlderDaemonStoredAreReadIntoBucketsThatCountThemAsLongAtLeast() throws {
        // A daemon before the rows kept every spending time in the manager's document.
        let old: JSONObject = [
            "starts": [:], "alerts": [:], "pushes": [pizza: [.double(t0 + 1), .double(t0 + 2)]],
            "users": ["1000": ["starts": [:], "alerts": [:], "pushes": [weather: [.double(t0 + 5)]]]],
        ]
        #expect(ActivityBudgets.holdsPushTimes(old))
        let budgets = try ActivityBudgets(json: old)
        #expect(!ActivityBudgets.holdsPushTimes(budgets.json), "stored again without them")
        let restored = ActivityManager(
            snapshot: ManagerSnapshot(budgets: budgets), limits: limits { $0.pushBudget = 2 }, now: t0 + 10, makeID: { "x" })
        #expect(restored.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 10) == 0)
        #expect(restored.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 3600 + 1.5) == 0)
        #expect(restored.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 3640) == 2)
        #expect(restored.remainingPushes(app: weather, uid: 1000, entitlement: entitled, now: t0 + 10) == 1)
        #expect(Set(restored.budgets.pushes.rows.map(\.key)) == ["pushes/-/\(pizza)", "pushes/1000/\(weather)"])
    }

    @Test func aStoredRowSaysWhatIsWrong() throws {
        var snapshot = ManagerSnapshot()
        #expect(throws: ActivityDecodingError(path: "r.buckets.0", problem: "expected [bucket, count]")) {
            try snapshot.readPushSpending(row: ["app": "a", "bucketSec": 60, "buckets": [[1, 0]]], path: "r")
        }
        #expect(throws: ActivityDecodingError(path: "r.buckets.1", problem: "expected [bucket, count]")) {
            try snapshot.readPushSpending(row: ["app": "a", "bucketSec": 60, "buckets": [[1, 1], [2, .int(Int.max)]]], path: "r")
        }
        #expect(throws: ActivityDecodingError(path: "r.buckets", problem: "more than 4096 buckets")) {
            try snapshot.readPushSpending(
                row: ["app": "a", "bucketSec": 60, "buckets": .array((0...4096).map { .array([.int($0), 1]) })], path: "r")
        }
        #expect(throws: ActivityDecodingError(path: "r.bucketSec", problem: "expected a number of seconds of at least 0.001")) {
            try snapshot.readPushSpending(row: ["app": "a", "bucketSec": 0, "buckets": []], path: "r")
        }
        #expect(throws: ActivityDecodingError(path: "r.uid", problem: "expected a uid")) {
            try snapshot.readPushSpending(row: ["app": "a", "uid": -1, "bucketSec": 60, "buckets": []], path: "r")
        }
    }
}
