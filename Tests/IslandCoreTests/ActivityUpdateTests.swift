import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("Activity updates: ordering, isolation, delivery rate, alerts")
struct ActivityUpdateTests: ActivityTesting {
    @Test func timestampsMustIncrease() throws {
        var manager = makeManager()
        let id = try manager.start().id
        #expect(try manager.update(id, step: 1, timestamp: 100, at: t0 + 1).activity.lastTimestamp == 100)

        let older = IslandError.staleTimestamp(id: id, last: 100, given: 99)
        #expect(throws: older) { try manager.update(id, step: 2, timestamp: 99, at: t0 + 2) }
        #expect(older.name == "org.island.StaleTimestamp")
        #expect(older.parameters == ["id": "1", "last": 100.0, "given": 99.0])
        // Equal is not newer.
        #expect(throws: IslandError.staleTimestamp(id: id, last: 100, given: 100)) {
            try manager.update(id, step: 2, timestamp: 100, at: t0 + 2)
        }
        #expect(manager.activity(id: id)?.content == content(1))

        let newer = try manager.update(id, step: 3, timestamp: 101, at: t0 + 3)
        #expect(newer.activity.content == content(3))
        #expect(newer.activity.lastTimestamp == 101)
        // Without a timestamp nothing is ordered, and the last one is kept.
        #expect(try manager.update(id, step: 4, at: t0 + 4).activity.lastTimestamp == 101)
        // End is ordered too.
        #expect(throws: IslandError.staleTimestamp(id: id, last: 101, given: 50)) {
            try manager.end(app: pizza, id: id, timestamp: 50, now: t0 + 5)
        }
    }

    /// One timestamp in milliseconds (`Date.now()`) once refused every later update and end in
    /// seconds as stale, for ever.
    @Test func aTimestampFarAheadOfTheClockIsRefusedAndNoPinOutlivesTheSkew() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let millis = (t0 + 1) * 1000
        let implausible = IslandError.implausibleTimestamp(id: id, given: millis, latest: t0 + 1 + 600)
        #expect(throws: implausible) { try manager.update(id, step: 1, timestamp: millis, at: t0 + 1) }
        #expect(implausible.name == "org.island.ImplausibleTimestamp")
        #expect(implausible.parameters == ["id": "1", "given": .double(millis), "latest": .double(t0 + 601)])
        #expect(throws: implausible) { try manager.end(app: pizza, id: id, timestamp: millis, now: t0 + 1) }
        #expect(manager.activity(id: id)?.lastTimestamp == nil, "nothing was pinned")
        #expect(try manager.update(id, step: 2, timestamp: t0 + 2, at: t0 + 2).activity.lastTimestamp == t0 + 2)

        // The furthest accepted, 10 min ahead, holds a correct clock out for at most 10 min.
        _ = try manager.update(id, step: 3, timestamp: t0 + 3 + 600, at: t0 + 3)
        #expect(throws: IslandError.staleTimestamp(id: id, last: t0 + 603, given: t0 + 4)) {
            try manager.update(id, step: 4, timestamp: t0 + 4, at: t0 + 4)
        }
        #expect(try manager.update(id, step: 5, timestamp: t0 + 604, at: t0 + 604).activity.lastTimestamp == t0 + 604)
    }

    @Test func aLastTimestampBeyondTheSkewOrdersNothing() throws {
        // Kept from before the rule, or the clock was set back.
        try TimestampOrder.check(t0, id: "1", last: t0 * 1000, now: t0)
        #expect(throws: IslandError.staleTimestamp(id: "1", last: t0 + 600, given: t0)) {
            try TimestampOrder.check(t0, id: "1", last: t0 + 600, now: t0)
        }
    }

    @Test func endedActivitiesTakeNoUpdates() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.end(app: pizza, id: id, now: t0 + 1)
        #expect(throws: IslandError.activityEnded(id: id, state: .ended)) { try manager.update(id, step: 1, at: t0 + 2) }
    }

    @Test func anotherAppsActivityDoesNotExistForIt() throws {
        var manager = makeManager()
        let id = try manager.start(pizza).id
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.update(id, step: 1, app: weather, at: t0 + 1) }
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.end(app: weather, id: id, now: t0 + 1) }
        // The same answer as for an id that never existed.
        #expect(throws: IslandError.noSuchActivity(id: "nope")) { try manager.update("nope", step: 1, at: t0 + 1) }
        expectState(manager.activity(id: id)?.state, .active)
        #expect(manager.activity(id: id)?.content == content(0))
    }

    @Test func updatesFasterThanTheRateAreCoalescedAndTheLatestIsDelivered() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let first = t0 + 10

        let delivered = try manager.update(id, step: 1, at: first)
        #expect(!delivered.throttled)
        #expect(delivered.deliverAt == first)
        #expect(delivered.activity.deliveredContent == content(1))
        expectLabels(delivered.events, ["changed:1:active", "delivered:1"])

        let second = try manager.update(id, step: 2, at: first + 0.2)
        #expect(second.throttled)
        #expect(second.deliverAt == first + 0.5)
        #expect(second.activity.content == content(2))
        #expect(second.activity.deliveredContent == content(1))
        #expect(second.activity.nextDeliveryAt == first + 0.5)
        expectLabels(second.events, ["changed:1:active"])  // stored, but presenters see nothing new

        let third = try manager.update(id, step: 3, at: first + 0.3)
        #expect(third.throttled)
        #expect(third.deliverAt == first + 0.5)

        expectDeadline(manager.nextDeadline, first + 0.5)
        #expect(manager.nextWakeUp == first + 0.5)
        #expect(manager.advance(to: first + 0.49).isEmpty)
        let events = manager.advance(to: first + 0.5)
        expectLabels(events, ["changed:1:active", "delivered:1"])
        #expect(events.last == .delivered(try #require(manager.activity(id: id))))
        let after = try #require(manager.activity(id: id))
        #expect(after.deliveredContent == content(3))
        #expect(after.deliveredAt == first + 0.5)
        #expect(after.nextDeliveryAt == nil)
        expectDeadline(manager.nextDeadline, t0 + 8 * 3600)

        // The next slot counts from that delivery.
        #expect(try manager.update(id, step: 4, at: first + 0.6).deliverAt == first + 1.0)
    }

    /// The rate an update goes by is the app's in the limits in force: replaced between two
    /// updates (a configuration reload), the next update goes by the new ones, both ways.
    @Test func updatesGoByTheLimitsInForceAfterAReload() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let first = t0 + 10
        _ = try manager.update(id, step: 1, at: first)
        #expect(try manager.update(id, step: 2, at: first + 0.2).throttled, "2 per second by default")

        var faster = manager.limits.global
        faster.updatesPerSecond = 100
        manager.limits = LimitsPolicy(global: manager.limits.global, perApp: [pizza: faster])
        let fast = try manager.update(id, step: 3, at: first + 0.3)
        #expect(!fast.throttled && fast.deliverAt == first + 0.3)

        manager.limits = LimitsPolicy(global: manager.limits.global)
        let slow = try manager.update(id, step: 4, at: first + 0.31)
        #expect(slow.throttled && slow.deliverAt == first + 0.8)
    }

    /// (manifest allows frequent updates, the user's choice, seconds between deliveries). The
    /// list's type is spelled out: inferred, it took 1.5 s to type-check.
    @Test(arguments: [(true, true, 1.0 / 20), (true, false, 1.0 / 2), (false, true, 1.0 / 2)] as [(Bool, Bool, Double)])
    func frequentUpdatesRaiseTheRateWhenManifestAndUserAllow(allowed: Bool, userChoice: Bool, interval: Double) throws {
        var manager = makeManager()
        let authorization = AppAuthorization(entitled: true, frequentUpdatesAllowed: allowed)
        _ = manager.setFrequentUpdates(app: pizza, userChoice, now: t0)
        let id = try manager.start(entitlement: authorization).id
        #expect(manager.authorization(app: pizza, entitlement: authorization, now: t0).frequentUpdates == (interval < 0.5))

        let delivered = t0 + 1
        _ = try manager.update(id, step: 1, entitlement: authorization, at: delivered)
        let outcome = try manager.update(id, step: 2, entitlement: authorization, at: delivered + 0.01)
        #expect(outcome.throttled)
        #expect(outcome.deliverAt == delivered + interval)
        #expect(try !manager.update(id, step: 3, entitlement: authorization, at: delivered + interval).throttled)
    }

    @Test func sixAlertsPerHourThenUpdatesApplySilentlyAndSaySo() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let alert = Alert(title: "Almost there", body: "2 minutes")

        for index in 0..<6 {
            let outcome = try manager.update(id, step: index, alert: alert, at: t0 + 10 + Double(index))
            #expect(outcome.alerted)
            #expect(!outcome.alertSuppressed)
            #expect(outcome.alertsRemaining == 5 - index)
            expectLabels(outcome.events, ["changed:1:active", "delivered:1", "alerted:1", "budgets:\(pizza)"])
            #expect(outcome.events.contains(.alerted(id: id, alert: alert)))
        }

        let suppressed = try manager.update(id, step: 6, alert: alert, at: t0 + 20)
        #expect(!suppressed.alerted)
        #expect(suppressed.alertSuppressed)
        #expect(suppressed.alertsRemaining == 0)
        #expect(suppressed.activity.deliveredContent == content(6))  // applied all the same
        expectLabels(suppressed.events, ["changed:1:active", "delivered:1"])
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 20).remainingAlerts == 0)

        // An hour after the first alert, one is available again.
        let later = try manager.update(id, step: 7, alert: alert, at: t0 + 10 + 3600)
        #expect(later.alerted)
        #expect(later.alertsRemaining == 0)
    }

    @Test func anUpdateWithoutAlertReportsNothingAboutAlerts() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let outcome = try manager.update(id, step: 1, at: t0 + 1)
        #expect(!outcome.alerted)
        #expect(!outcome.alertSuppressed)
        #expect(outcome.alertsRemaining == 6)
    }

    @Test func anAlertingUpdateIsDeliveredWithItsAlertDespiteTheRate() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 10)
        _ = try manager.update(id, step: 2, at: t0 + 10.1)  // coalesced
        let outcome = try manager.update(id, step: 3, alert: Alert(title: "Here", body: ""), at: t0 + 10.2)
        #expect(!outcome.throttled)
        #expect(outcome.deliverAt == t0 + 10.2)
        #expect(outcome.activity.deliveredContent == content(3))
        #expect(outcome.activity.nextDeliveryAt == nil)  // the coalesced one is superseded
    }
}
