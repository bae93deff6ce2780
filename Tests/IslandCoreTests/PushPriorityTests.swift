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
            #expect(outcome.events.labels.contains("budgets:\(pizza)"))
        }
        #expect(throws: IslandError.pushBudgetExceeded(app: pizza, limit: 2, window: 3600, retryAfter: 3600 - 2)) {
            try manager.pushUpdate(app: pizza, id: id, content: content(3), priority: .high, entitlement: entitled, now: t0 + 3)
        }
        #expect(manager.activity(id: id)?.content == content(2), "a refused push changes nothing")
        // The window moves on.
        _ = try manager.pushUpdate(app: pizza, id: id, content: content(4), priority: .high, entitlement: entitled, now: t0 + 3601.5)
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
        #expect(outcomes.allSatisfy { !$0.events.labels.contains("budgets:\(pizza)") })
        #expect(manager.remainingPushes(app: pizza, entitlement: entitled, now: t0 + 1) == 1)
        // Within one delivery slot: presenters get the latest, once, when the slot comes.
        #expect(outcomes.filter { !$0.throttled }.count <= 1)
        let delivered = manager.advance(to: t0 + 0.5)
        #expect(delivered.labels == ["changed:\(id):active", "delivered:\(id)"])
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

    @Test func thePushBudgetIsStoredOnlyWhenSpent() throws {
        var manager = makeManager()
        let id = try manager.start().id
        #expect(manager.snapshot.budgets.json["pushes"] == nil)
        _ = try manager.pushUpdate(app: pizza, id: id, content: content(1), priority: .high, entitlement: entitled, now: t0 + 1)
        let json = manager.snapshot.budgets.json
        #expect(json["pushes"] != nil)
        #expect(try ActivityBudgets(json: json) == manager.snapshot.budgets)
    }
}
