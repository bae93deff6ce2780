import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("Activity lifecycle")
struct ActivityLifecycleTests: ActivityTesting {
    @Test func requestStartsAnActiveActivity() throws {
        var manager = makeManager()
        let outcome = try manager.request(
            app: pizza, type: "Delivery", attributes: ["order": "42"], content: content(0, relevance: 0.5),
            key: nil, ownerGonePolicy: .keep, entitlement: entitled, now: t0
        )
        let activity = outcome.activity
        #expect(outcome.created)
        #expect(activity.id == "1")
        #expect(activity.app == pizza)
        #expect(activity.type == "Delivery")
        #expect(activity.attributes == ["order": "42"])
        #expect(activity.state == .active)
        #expect(activity.endReason == nil)
        #expect(activity.content == content(0, relevance: 0.5))
        #expect(activity.deliveredContent == activity.content)
        #expect(activity.createdAt == t0)
        #expect(activity.updatedAt == t0)
        #expect(activity.deliveredAt == t0)
        #expect(activity.nextDeliveryAt == nil)
        expectLabels(outcome.events, ["changed:1:active", "delivered:1", "budgets:\(pizza)"])
        #expect(manager.activity(id: "1") == activity)
    }

    @Test func aStaleDateAlreadyPassedStartsStale() throws {
        var manager = makeManager()
        let activity = try manager.start(content: content(0, staleDate: t0))
        #expect(activity.state == .stale)
    }

    @Test func goesStaleWhenItsStaleDatePassesAndActiveAgainOnAFreshUpdate() throws {
        var manager = makeManager()
        let id = try manager.start(content: content(0, staleDate: t0 + 60)).id
        expectDeadline(manager.nextDeadline, t0 + 60)
        #expect(manager.advance(to: t0 + 59.9).isEmpty)

        let events = manager.advance(to: t0 + 60)
        expectLabels(events, ["changed:1:stale", "delivered:1"])
        expectState(manager.activity(id: id)?.state, .stale)
        #expect(manager.activity(id: id)?.updatedAt == t0 + 60)

        // Stale activities take updates; a future stale date makes it active again.
        let outcome = try manager.update(id, step: 1, staleDate: t0 + 600, at: t0 + 70)
        expectState(outcome.activity.state, .active)
        expectDeadline(manager.nextDeadline, t0 + 600)

        // An update whose stale date has already passed leaves it stale.
        let late = try manager.update(id, step: 2, staleDate: t0 + 75, at: t0 + 80)
        expectState(late.activity.state, .stale)
    }

    @Test func fullLifecycleFromStartToRemoval() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 10)
        let end = try manager.end(app: pizza, id: id, content: content(2), dismissalPolicy: .default, now: t0 + 20)
        expectState(end.activity.state, .ended)
        #expect(end.activity.endReason == .app)
        #expect(end.activity.endedAt == t0 + 20)
        #expect(end.activity.dismissAt == t0 + 20 + 4 * 3600)
        #expect(end.activity.deliveredContent == content(2))
        expectLabels(end.events, ["changed:1:ended", "delivered:1"])
        expectIDs(manager.list(states: [.ended]).map(\.id), [id])

        let events = manager.advance(to: t0 + 20 + 4 * 3600)
        expectLabels(events, ["changed:1:dismissed", "removed:1"])
        #expect(manager.activity(id: id) == nil)
        #expect(manager.list().isEmpty)
        expectDeadline(manager.nextDeadline, nil)
    }

    @Test func listFiltersByAppTypeAndStateOldestFirst() throws {
        var manager = makeManager()
        try manager.start(weather, at: t0 + 5)  // 1
        try manager.start(pizza, at: t0 + 1)  // 2
        try manager.start(pizza, at: t0 + 1)  // 3, same instant: creation order
        _ = try manager.end(app: pizza, id: "2", now: t0 + 6)
        let other = try manager.request(
            app: pizza, type: "Timer", attributes: [:], content: content(0), entitlement: entitled, now: t0 + 7
        ).activity  // 4

        expectIDs(manager.list().map(\.id), ["2", "3", "1", "4"])
        expectIDs(manager.list(app: pizza).map(\.id), ["2", "3", "4"])
        expectIDs(manager.list(app: pizza, type: "Delivery").map(\.id), ["2", "3"])
        expectIDs(manager.list(states: [.active]).map(\.id), ["3", "1", "4"])
        expectIDs(manager.list(app: pizza, states: [.ended]).map(\.id), ["2"])
        #expect(manager.list(type: "Timer") == [other])
        #expect(manager.liveCount(app: pizza) == 2)
        #expect(manager.liveCount() == 3)
    }

    @Test func eightHoursAfterTheStartTheActivityExpires() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 3600)  // updates do not extend the 8 hours
        expectDeadline(manager.nextDeadline, t0 + 8 * 3600)
        #expect(manager.advance(to: t0 + 8 * 3600 - 1).isEmpty)

        let events = manager.advance(to: t0 + 8 * 3600)
        expectLabels(events, ["changed:1:ended", "delivered:1"])
        let expired = try #require(manager.activity(id: id))
        #expect(expired.state == .ended)
        #expect(expired.endReason == .expired)
        #expect(expired.endedAt == t0 + 8 * 3600)
        #expect(expired.dismissAt == t0 + 12 * 3600)
        #expect(expired.deliveredContent == content(1))
    }

    @Test func aShorterConfiguredDurationAppliesOnReload() throws {
        var manager = makeManager()
        let id = try manager.start().id
        manager.limits = limits { $0.maximumActiveDuration = 3600 }
        expectDeadline(manager.nextDeadline, t0 + 3600)
        _ = manager.advance(to: t0 + 3600)
        #expect(manager.activity(id: id)?.endReason == .expired)
    }
}
