import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// Scheduled starts (ActivityKit's `request(…, start:)`): pending until the date, on the
/// manager's injected clock, then started with the alert; across a restore too.
@Suite("Scheduled starts: pending until the date, then started with the alert")
struct ActivityScheduleTests: ActivityTesting {
    static let alert = Alert(title: "Doors open", body: "Gate B")

    func schedule(
        _ manager: inout ActivityManager, at start: Double, alert: Alert? = ActivityScheduleTests.alert,
        now: Double
    ) throws(IslandError) -> RequestOutcome {
        try manager.request(
            app: pizza, type: "Concert", attributes: ["hall": "A"], content: content(0), start: start, alert: alert,
            entitlement: entitled, now: now)
    }

    @Test func aFutureStartIsPendingSeenByItsAppAndByNoPresenter() throws {
        var manager = makeManager()
        let outcome = try schedule(&manager, at: t0 + 600, now: t0)
        expectState(outcome.activity.state, .pending)
        #expect(outcome.activity.schedule == ScheduledStart(date: t0 + 600, alert: Self.alert))
        // Persisted and told to its app (`changed`), never `delivered` to presenters.
        expectLabels(outcome.events, ["changed:1:pending", "budgets:\(pizza)"])
        #expect(manager.list(owner: ActivityOwner(app: pizza)).map(\.state) == [.pending])
        expectDeadline(manager.nextDeadline, t0 + 600)
    }

    @Test func itStartsAtItsDateWithItsAlertAndNotBefore() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        #expect(manager.advance(to: t0 + 599.999).isEmpty)
        expectState(manager.activity(id: "1")?.state, .pending)
        let events = manager.advance(to: t0 + 600)
        expectLabels(events, ["changed:1:active", "delivered:1", "alerted:1", "budgets:\(pizza)"])
        let started = try #require(manager.activity(id: "1"))
        #expect(started.deliveredAt == t0 + 600)
        #expect(started.schedule?.alert == nil)
        #expect(started.schedule?.late == nil)
        #expect(started.activeSince == t0 + 600)
    }

    @Test func theStartBudgetIsSpentWhenRequestedNotWhenStarted() throws {
        var manager = makeManager(limits: limits { $0.startBudget = 1 })
        _ = try schedule(&manager, at: t0 + 30, now: t0)
        #expect(throws: IslandError.startBudgetExceeded(app: pizza, limit: 1, window: 60, retryAfter: 50)) {
            try manager.start(at: t0 + 10)
        }
        // Starting spends nothing more: at its date the budget is still one start, spent.
        _ = manager.advance(to: t0 + 30)
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 30).remainingStarts == 0)
    }

    @Test func aStartWithoutAnAlertIsRefusedByName() {
        var manager = makeManager()
        #expect(throws: IslandError.startAlertRequired(start: t0 + 600)) { try schedule(&manager, at: t0 + 600, alert: nil, now: t0) }
        #expect(manager.list().isEmpty)
    }

    @Test func aStartInMillisecondsIsRefusedByName() {
        var manager = makeManager()
        #expect(throws: IslandError.implausibleStartDate(given: t0 * 1000, latest: ActivityLimits.latestDate)) {
            try schedule(&manager, at: t0 * 1000, now: t0)
        }
        #expect(manager.list().isEmpty)
    }

    @Test func aStartAlreadyPastStartsAtOnceWithItsAlert() throws {
        var manager = makeManager()
        let outcome = try schedule(&manager, at: t0 - 5, now: t0)
        expectState(outcome.activity.state, .active)
        expectLabels(outcome.events, ["changed:1:active", "delivered:1", "budgets:\(pizza)", "alerted:1"])
    }

    @Test func itsEightHoursCountFromItsStart() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 3600, now: t0)
        _ = manager.advance(to: t0 + 8 * 3600 + 1)
        expectState(manager.activity(id: "1")?.state, .active)
        _ = manager.advance(to: t0 + 9 * 3600)
        #expect(manager.activity(id: "1")?.endReason == .expired)
    }

    @Test func anUpdateKeepsItPendingAndItsAlertWaitsForTheStart() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        let outcome = try manager.update(
            app: pizza, id: "1", content: content(1), alert: Alert(title: "x", body: "y"),
            entitlement: entitled, now: t0 + 1)
        expectState(outcome.activity.state, .pending)
        #expect(outcome.alertSuppression == .pending)
        #expect(!outcome.events.labels.contains("alerted:1"))
        _ = manager.advance(to: t0 + 600)
        #expect(manager.activity(id: "1")?.deliveredContent == content(1))
    }

    @Test func endingAPendingActivityDismissesItAtOnce() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        let ended = try manager.end(app: pizza, id: "1", now: t0 + 1)
        expectState(ended.activity.state, .dismissed)
        expectLabels(ended.events, ["changed:1:dismissed", "removed:1"])
        expectDeadline(manager.nextDeadline, nil)
    }

    @Test func itsAppGoingAwayLeavesItScheduled() throws {
        var manager = makeManager()
        _ = try manager.request(
            app: pizza, type: "Concert", attributes: [:], content: content(0), ownerGonePolicy: .end,
            start: t0 + 600, alert: Self.alert, entitlement: entitled, now: t0)
        #expect(manager.ownerGone(app: pizza, now: t0 + 1).isEmpty)
        expectState(manager.activity(id: "1")?.state, .pending)
    }

    @Test func doNotDisturbStartsItSilently() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        _ = manager.setFocus(true, now: t0 + 1)
        expectLabels(manager.advance(to: t0 + 600), ["changed:1:active", "delivered:1"])
    }

    @Test func aRestoreBeforeTheDateKeepsItPendingUntilThen() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        let stored = try ManagerSnapshot(json: JSONParser.parse(JSON.object(manager.snapshot.json).serialized()).objectValue!)
        var restored = ActivityManager(snapshot: stored, now: t0 + 100, makeID: { "x" })
        #expect(restored.advance(to: t0 + 100).isEmpty)
        expectState(restored.activity(id: "1")?.state, .pending)
        expectLabels(restored.advance(to: t0 + 600), ["changed:1:active", "delivered:1", "alerted:1", "budgets:\(pizza)"])
        #expect(restored.activity(id: "1")?.schedule?.late == nil)
    }

    @Test func aDatePassedWhileTheDaemonWasDownStartsItAtOnceSayingSo() throws {
        var manager = makeManager()
        _ = try schedule(&manager, at: t0 + 600, now: t0)
        let stored = try ManagerSnapshot(json: JSONParser.parse(JSON.object(manager.snapshot.json).serialized()).objectValue!)
        var restored = ActivityManager(snapshot: stored, now: t0 + 900, makeID: { "x" })
        expectLabels(restored.advance(to: t0 + 900), ["changed:1:active", "delivered:1", "alerted:1", "budgets:\(pizza)"])
        let started = try #require(restored.activity(id: "1"))
        #expect(started.schedule == ScheduledStart(date: t0 + 600, startsAt: t0 + 900, alert: nil, late: .daemonDown))
        #expect(started.deliveredAt == t0 + 900)
        // And so it stays, stored and read back.
        #expect(try Activity(json: started.json) == started)
    }

    @Test func aPendingActivityRoundTripsThroughItsStoredForm() throws {
        var manager = makeManager()
        let pending = try schedule(&manager, at: t0 + 600.5, now: t0).activity
        #expect(try Activity(json: ActivityPersistenceTests.viaText(pending.json)) == pending)
        let text = String(decoding: pending.jsonText, as: UTF8.self)
        #expect(text.contains(#""schedule":{"date":1700000600.5,"startsAt":1700000600.5,"alert":{"title":"Doors open","body":"Gate B"}}"#))
    }
}
