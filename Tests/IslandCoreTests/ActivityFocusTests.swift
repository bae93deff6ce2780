import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("Do Not Disturb (focus): alerts apply silently, say why, and spend nothing")
struct ActivityFocusTests: ActivityTesting {
    let alert = Alert(title: "Almost there", body: "2 minutes")

    @Test func whileFocusIsOnAnAlertingUpdateAppliesWithoutItsAlertAndSpendsNoBudget() throws {
        var manager = makeManager()
        let id = try manager.start().id
        #expect(manager.focusSince == nil)

        expectLabels(manager.setFocus(true, now: t0 + 5), ["settings", "focus:\(t0 + 5)"])
        #expect(manager.focusSince == t0 + 5)

        let quiet = try manager.update(id, step: 1, alert: alert, at: t0 + 10)
        #expect(!quiet.alerted)
        #expect(quiet.alertSuppressed)
        #expect(quiet.alertSuppression == .focus)
        #expect(!quiet.throttled)
        #expect(quiet.activity.deliveredContent == content(1), "the content applies all the same")
        expectLabels(quiet.events, ["changed:1:active", "delivered:1"], "no alert for presenters, no budget spent")
        #expect(quiet.alertsRemaining == 6)
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 10).remainingAlerts == 6)
    }

    @Test func anUpdateWithoutAlertSaysNothingOfFocus() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = manager.setFocus(true, now: t0 + 1)
        let outcome = try manager.update(id, step: 1, at: t0 + 2)
        #expect(!outcome.alertSuppressed)
        #expect(outcome.alertSuppression == nil)
    }

    @Test func turningFocusOnAgainKeepsWhenItBeganAndOffLetsAlertsThroughAgain() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = manager.setFocus(true, now: t0 + 5)
        #expect(manager.setFocus(true, now: t0 + 50).isEmpty, "no change, no event")
        #expect(manager.focusSince == t0 + 5)

        expectLabels(manager.setFocus(false, now: t0 + 60), ["settings", "focus:off"])
        #expect(manager.focusSince == nil)
        #expect(manager.setFocus(false, now: t0 + 61).isEmpty)

        let loud = try manager.update(id, step: 1, alert: alert, at: t0 + 70)
        #expect(loud.alerted)
        #expect(loud.alertSuppression == nil)
        expectLabels(loud.events, ["changed:1:active", "delivered:1", "alerted:1", "budgets:\(pizza)"])
        #expect(loud.alertsRemaining == 5)
    }

    /// Focus is asked first: an app whose budget is spent hears `focus` while focus is on
    /// (that is why its alert is not shown now) and `budget` once it is off.
    @Test func focusComesBeforeTheBudgetAndTheBudgetSaysSoOnceFocusEnds() throws {
        var manager = makeManager()
        let id = try manager.start().id
        for index in 0..<6 { #expect(try manager.update(id, step: index, alert: alert, at: t0 + 10 + Double(index)).alerted) }

        _ = manager.setFocus(true, now: t0 + 20)
        #expect(try manager.update(id, step: 6, alert: alert, at: t0 + 21).alertSuppression == .focus)
        _ = manager.setFocus(false, now: t0 + 22)
        #expect(try manager.update(id, step: 7, alert: alert, at: t0 + 23).alertSuppression == .budget)
    }

    @Test func focusIsPersistedWithTheSettings() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = manager.setFocus(true, now: t0 + 5)
        let stored = try #require(JSONParser.parse(JSON.object(manager.settingsAndBudgetsJSON).serialized()).objectValue)
        #expect(stored["settings"]?["focusSince"] == .double(t0 + 5))

        let snapshot = try ManagerSnapshot(activities: manager.list(), settingsAndBudgetsJSON: stored)
        var restored = ActivityManager(snapshot: snapshot, now: t0 + 100, makeID: { "x" })
        #expect(restored.focusSince == t0 + 5)
        #expect(try restored.update(id, step: 1, alert: alert, at: t0 + 101).alertSuppression == .focus)

        _ = restored.setFocus(false, now: t0 + 102)
        #expect(restored.settingsAndBudgetsJSON["settings"]?["focusSince"] == nil, "off is the absence of a start")
        // Settings stored before there was focus read as focus off.
        #expect(try ActivitySettings(json: ["enabled": true]).focusSince == nil)
    }
}
