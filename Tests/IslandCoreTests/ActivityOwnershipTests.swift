import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// In the system scope an activity belongs to (app, uid): two users running the same app
/// never see or touch each other's activities, and every per-app limit, key and budget is
/// theirs alone (docs/design.md §3–4).
@Suite("Ownership: one app run by two users")
struct ActivityOwnershipTests: ActivityTesting {
    let alice: UInt32 = 1000
    let bob: UInt32 = 1001

    @Test func aUserListsOnlyTheirOwnActivities() throws {
        var manager = makeManager()
        let mine = try manager.start(uid: alice)
        let theirs = try manager.start(uid: bob)
        #expect(mine.owner == ActivityOwner(app: pizza, uid: alice))
        expectIDs(manager.list(owner: ActivityOwner(app: pizza, uid: alice)).map(\.id), [mine.id])
        expectIDs(manager.list(owner: ActivityOwner(app: pizza, uid: bob)).map(\.id), [theirs.id])
        #expect(manager.list(owner: ActivityOwner(app: pizza)).isEmpty, "the user scope's owner is a third one")
        #expect(manager.list(app: pizza).count == 2, "an app filter alone still sees every user's")
    }

    @Test func anotherUsersActivityDoesNotExistForUpdateOrEnd() throws {
        var manager = makeManager()
        let mine = try manager.start(uid: alice)
        #expect(throws: IslandError.noSuchActivity(id: mine.id)) { try manager.update(mine.id, step: 9, uid: bob, at: t0 + 1) }
        #expect(throws: IslandError.noSuchActivity(id: mine.id)) {
            try manager.end(app: pizza, uid: bob, id: mine.id, now: t0 + 1)
        }
        #expect(throws: IslandError.noSuchActivity(id: mine.id)) { try manager.update(mine.id, step: 9, at: t0 + 1) }
        #expect(manager.activity(id: mine.id)?.content == content(0))
        expectState(manager.activity(id: mine.id)?.state, .active)
        // Its owner still can.
        #expect(try manager.update(mine.id, step: 1, uid: alice, at: t0 + 2).activity.content == content(1))
        expectState(try manager.end(app: pizza, uid: alice, id: mine.id, now: t0 + 3).activity.state, .ended)
    }

    @Test func keysArePerOwner() throws {
        var manager = makeManager()
        let mine = try manager.start(uid: alice, key: "order-42")
        let theirs = try manager.request(
            app: pizza, uid: bob, type: "Delivery", attributes: ["order": "42"], content: content(0),
            key: "order-42", entitlement: entitled, now: t0 + 1)
        #expect(theirs.created, "another user's key is not this user's")
        #expect(theirs.activity.id != mine.id)
        #expect(theirs.activity.uid == bob)
        #expect(try manager.start(uid: alice, key: "order-42", at: t0 + 2) == mine)
    }

    @Test func thePerAppMaximumIsPerOwner() throws {
        var manager = makeManager(limits: limits { $0.maximumActivitiesPerApp = 2 })
        for second in 0..<2 { try manager.start(uid: alice, at: t0 + Double(second)) }
        #expect(throws: IslandError.targetMaximumExceeded(app: pizza, limit: 2)) { try manager.start(uid: alice, at: t0 + 2) }
        #expect(manager.liveCount(owner: ActivityOwner(app: pizza, uid: alice)) == 2)
        try manager.start(uid: bob, at: t0 + 3)
        try manager.start(uid: bob, at: t0 + 4)
        #expect(manager.liveCount(owner: ActivityOwner(app: pizza, uid: bob)) == 2)
        #expect(manager.liveCount(app: pizza) == 4)
    }

    @Test func theGlobalMaximumCountsEveryOwner() throws {
        var manager = makeManager(limits: limits { $0.maximumActivities = 3 })
        try manager.start(uid: alice)
        try manager.start(uid: alice)
        try manager.start(uid: bob)
        #expect(throws: IslandError.globalMaximumExceeded(limit: 3)) { try manager.start(uid: bob, at: t0 + 1) }
    }

    @Test func startBudgetsArePerOwner() throws {
        var manager = makeManager(
            limits: limits {
                $0.startBudget = 2
                $0.maximumActivitiesPerApp = 10
            })
        try manager.start(uid: alice, at: t0)
        try manager.start(uid: alice, at: t0 + 1)
        #expect(throws: IslandError.startBudgetExceeded(app: pizza, limit: 2, window: 60, retryAfter: 58)) {
            try manager.start(uid: alice, at: t0 + 2)
        }
        #expect(manager.authorization(app: pizza, uid: alice, entitlement: entitled, now: t0 + 2).remainingStarts == 0)
        #expect(manager.authorization(app: pizza, uid: bob, entitlement: entitled, now: t0 + 2).remainingStarts == 2)
        try manager.start(uid: bob, at: t0 + 2)
        #expect(manager.authorization(app: pizza, uid: bob, entitlement: entitled, now: t0 + 2).liveActivities == 1)
    }

    @Test func alertBudgetsArePerOwner() throws {
        var manager = makeManager(limits: limits { $0.alertBudget = 1 })
        let mine = try manager.start(uid: alice)
        let theirs = try manager.start(uid: bob)
        let alert = Alert(title: "Ready", body: "")
        #expect(try manager.update(mine.id, step: 1, uid: alice, alert: alert, at: t0 + 1).alerted)
        #expect(try manager.update(mine.id, step: 2, uid: alice, alert: alert, at: t0 + 2).alertSuppressed)
        #expect(try manager.update(theirs.id, step: 1, uid: bob, alert: alert, at: t0 + 3).alerted)
    }

    @Test func budgetsOfEveryOwnerSurviveARestart() throws {
        var manager = makeManager()
        try manager.start(uid: alice, at: t0)
        try manager.start(uid: bob, at: t0 + 1)
        try manager.start(at: t0 + 2)
        let text = JSON.object(manager.budgets.json).serialized()
        let budgets = try ActivityBudgets(json: try #require(JSONParser.parse(text).objectValue))
        #expect(budgets == manager.budgets)
        #expect(budgets.starts.times[ActivityOwner(app: pizza, uid: alice)] == [t0])
        #expect(budgets.starts.times[ActivityOwner(app: pizza, uid: bob)] == [t0 + 1])
        #expect(budgets.starts.times[ActivityOwner(app: pizza)] == [t0 + 2])
    }

    @Test func theOwnerIsStoredWithTheActivity() throws {
        var manager = makeManager()
        let mine = try manager.start(uid: alice)
        let read = try Activity(json: mine.json)
        #expect(read == mine)
        #expect(read.owner == ActivityOwner(app: pizza, uid: alice))
        let userScope = try manager.start()
        #expect(userScope.json["uid"] == nil, "the user scope stores what it always did")
        #expect(throws: ActivityDecodingError.self) {
            var json = mine.json
            json["uid"] = .int(-1)
            _ = try Activity(json: json)
        }
    }

    @Test func oneUsersProducerLeavingTouchesOnlyTheirActivities() throws {
        var manager = makeManager()
        let mine = try manager.start(uid: alice, ownerGonePolicy: .end)
        let theirs = try manager.start(uid: bob, ownerGonePolicy: .end)
        let events = manager.ownerGone(app: pizza, uid: bob, now: t0 + 1)
        expectLabels(events, ["changed:\(theirs.id):ended", "delivered:\(theirs.id)"])
        expectState(manager.activity(id: mine.id)?.state, .active)

        let graced = try manager.start(uid: alice, ownerGonePolicy: .stale, at: t0 + 2)
        let otherGraced = try manager.start(uid: bob, ownerGonePolicy: .stale, at: t0 + 2)
        _ = manager.ownerGone(app: pizza, uid: alice, now: t0 + 3)
        _ = manager.ownerGone(app: pizza, uid: bob, now: t0 + 3)
        expectLabels(manager.ownerReturned(app: pizza, uid: alice), ["changed:\(graced.id):active"])
        #expect(manager.activity(id: otherGraced.id)?.ownerGraceEndsAt == t0 + 33)
    }
}

/// Ended activities waiting for their dismissal are bounded per owner and in all; the oldest
/// ended go first (docs/design.md §3).
@Suite("Ended activities waiting for dismissal are bounded")
struct ActivityEndedBoundTests: ActivityTesting {
    /// Starts and ends one activity of `uid` at `time`; its id.
    func startAndEnd(_ manager: inout ActivityManager, _ app: String, uid: UInt32? = nil, at time: Double) throws -> String {
        let id = try manager.start(app, uid: uid, at: time).id
        _ = try manager.end(app: app, uid: uid, id: id, now: time)
        return id
    }

    func ended(_ manager: ActivityManager) -> [String] { manager.list(states: [.ended]).map(\.id) }

    @Test func anOwnerKeepsItsNewestEndedActivitiesAndTheOldestIsDismissed() throws {
        var manager = makeManager(
            limits: limits {
                $0.maximumEndedActivitiesPerApp = 2
                $0.startBudget = 100
            })
        let first = try startAndEnd(&manager, pizza, at: t0)
        let second = try startAndEnd(&manager, pizza, at: t0 + 1)
        let third = try manager.start(at: t0 + 2).id
        let outcome = try manager.end(app: pizza, id: third, now: t0 + 2)
        expectLabels(
            outcome.events,
            [
                "changed:\(third):ended", "delivered:\(third)", "changed:\(first):dismissed", "removed:\(first)",
            ])
        expectState(outcome.activity.state, .ended)
        expectIDs(ended(manager), [second, third])
    }

    @Test func theOldestEndedIsTheOneThatEndedFirst() throws {
        var manager = makeManager(limits: limits { $0.maximumEndedActivitiesPerApp = 1 })
        let olderStart = try manager.start(at: t0).id
        let youngerStart = try manager.start(at: t0 + 1).id
        _ = try manager.end(app: pizza, id: youngerStart, now: t0 + 2)
        _ = try manager.end(app: pizza, id: olderStart, now: t0 + 3)
        expectIDs(ended(manager), [olderStart], "ended last, kept")
    }

    @Test func theBoundIsPerOwner() throws {
        var manager = makeManager(
            limits: limits {
                $0.maximumEndedActivitiesPerApp = 1
                $0.startBudget = 100
            })
        let alice = try startAndEnd(&manager, pizza, uid: 1000, at: t0)
        let bob = try startAndEnd(&manager, pizza, uid: 1001, at: t0 + 1)
        let weatherID = try startAndEnd(&manager, weather, uid: 1000, at: t0 + 2)
        #expect(Set(ended(manager)) == [alice, bob, weatherID])
        let aliceAgain = try startAndEnd(&manager, pizza, uid: 1000, at: t0 + 3)
        #expect(Set(ended(manager)) == [bob, weatherID, aliceAgain])
    }

    @Test func theGlobalBoundDismissesTheOldestOfAnyOwner() throws {
        var manager = makeManager(
            limits: limits {
                $0.maximumEndedActivities = 2
                $0.startBudget = 100
            })
        _ = try startAndEnd(&manager, pizza, uid: 1000, at: t0)
        let second = try startAndEnd(&manager, weather, uid: 1001, at: t0 + 1)
        let third = try startAndEnd(&manager, pizza, uid: 1002, at: t0 + 2)
        expectIDs(ended(manager), [second, third])
    }

    @Test func aBoundOfZeroDismissesAtOnce() throws {
        var manager = makeManager(limits: limits { $0.maximumEndedActivitiesPerApp = 0 })
        let id = try manager.start().id
        let outcome = try manager.end(app: pizza, id: id, now: t0 + 1)
        expectState(outcome.activity.state, .dismissed)
        expectLabels(outcome.events, ["changed:\(id):ended", "delivered:\(id)", "changed:\(id):dismissed", "removed:\(id)"])
        #expect(manager.list().isEmpty)
    }

    @Test func activitiesEndedByTimersAreBoundedToo() throws {
        var manager = makeManager(
            limits: limits {
                $0.maximumEndedActivitiesPerApp = 1
                $0.maximumActiveDuration = 100
            })
        let first = try manager.start(at: t0).id
        let second = try manager.start(at: t0 + 1).id
        let events = manager.advance(to: t0 + 101)
        #expect(events.labels.contains("removed:\(first)"))
        expectIDs(ended(manager), [second])
    }

    @Test func aRestoredOrReconfiguredManagerAppliesTheBoundOnItsNextAdvance() throws {
        var manager = makeManager(limits: limits { $0.startBudget = 100 })
        var ids: [String] = []
        for second in 0..<4 { ids.append(try startAndEnd(&manager, pizza, at: t0 + Double(second))) }
        expectIDs(ended(manager), ids)

        var restored = ActivityManager(
            snapshot: manager.snapshot, limits: limits { $0.maximumEndedActivitiesPerApp = 3 },
            now: t0 + 10, makeID: { "x" })
        expectLabels(restored.advance(to: t0 + 10), ["changed:\(ids[0]):dismissed", "removed:\(ids[0])"])
        expectIDs(ended(restored), Array(ids[1...]))

        restored.limits = limits { $0.maximumEndedActivitiesPerApp = 1 }
        expectLabels(
            restored.advance(to: t0 + 11),
            [
                "changed:\(ids[1]):dismissed", "removed:\(ids[1])", "changed:\(ids[2]):dismissed", "removed:\(ids[2])",
            ])
        expectIDs(ended(restored), [ids[3]])
        #expect(restored.advance(to: t0 + 12).isEmpty)
    }

    @Test func aPerAppOverrideAppliesToThatApp() throws {
        var policy = LimitsPolicy()
        var pizzaLimits = ActivityLimits()
        pizzaLimits.maximumEndedActivitiesPerApp = 1
        pizzaLimits.maximumEndedActivities = 0  // only the global value counts
        policy.perApp[pizza] = pizzaLimits
        var manager = makeManager(limits: policy)
        _ = try startAndEnd(&manager, pizza, at: t0)
        let kept = try startAndEnd(&manager, pizza, at: t0 + 1)
        let weatherIDs = [try startAndEnd(&manager, weather, at: t0 + 2), try startAndEnd(&manager, weather, at: t0 + 3)]
        expectIDs(ended(manager), [kept] + weatherIDs)
    }
}
