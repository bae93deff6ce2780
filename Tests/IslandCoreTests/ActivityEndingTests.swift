import IslandCore
import OrderedJSON
import Testing

@Suite("Ending and dismissal")
struct ActivityEndingTests: ActivityTesting {
    /// The policy, and when the activity ended at t0 + 100 is dismissed, relative to that end
    /// (nil: at once).
    static let dismissals: [(DismissalPolicy, Double?)] = [
        (.default, 4 * 3600),
        (.after(t0 + 100 + 600), 600),
        (.after(t0 + 100 + 5 * 3600), 4 * 3600),  // capped at end + 4 h
        (.immediate, nil),
        (.after(t0 + 100), nil),  // already due
        (.after(t0), nil),  // in the past: as immediate
    ]

    @Test(arguments: dismissals)
    func dismissalPolicies(policy: DismissalPolicy, dismissAfter: Double?) throws {
        var manager = makeManager()
        let id = try manager.start().id
        let end = t0 + 100
        let outcome = try manager.end(app: pizza, id: id, dismissalPolicy: policy, now: end)
        #expect(outcome.activity.endReason == .app)
        #expect(outcome.activity.endedAt == end)

        if let dismissAfter {
            #expect(outcome.activity.state == .ended)
            #expect(outcome.activity.dismissAt == end + dismissAfter)
            #expect(manager.nextDeadline == end + dismissAfter)
            #expect(manager.advance(to: end + dismissAfter - 1).isEmpty)
            #expect(manager.advance(to: end + dismissAfter).labels == ["changed:1:dismissed", "removed:1"])
        } else {
            #expect(outcome.activity.state == .dismissed)
            #expect(outcome.activity.dismissAt == end)
            #expect(outcome.events.labels == ["changed:1:dismissed", "removed:1"])
        }
        #expect(manager.activity(id: id) == nil)
    }

    @Test func finalContentIsDeliveredAtOnceDespiteTheRate() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 10)
        #expect(try manager.update(id, step: 2, at: t0 + 10.1).throttled)

        let outcome = try manager.end(app: pizza, id: id, content: content(9), now: t0 + 10.2)
        #expect(outcome.activity.content == content(9))
        #expect(outcome.activity.deliveredContent == content(9))
        #expect(outcome.activity.deliveredAt == t0 + 10.2)
        #expect(outcome.activity.nextDeliveryAt == nil)
        #expect(outcome.events.labels == ["changed:1:ended", "delivered:1"])
    }

    @Test func endingWithoutContentDeliversTheCoalescedContent() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 10)
        _ = try manager.update(id, step: 2, at: t0 + 10.1)
        let outcome = try manager.end(app: pizza, id: id, now: t0 + 10.2)
        #expect(outcome.activity.deliveredContent == content(2))
        #expect(outcome.activity.nextDeliveryAt == nil)
    }

    @Test func theUserDismissesALiveActivity() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let events = try manager.dismiss(id: id, now: t0 + 5)
        #expect(events.labels == ["changed:1:dismissed", "removed:1"])
        guard case .changed(let dismissed) = events.first else { Issue.record("no change"); return }
        #expect(dismissed.endReason == .user)
        #expect(dismissed.endedAt == t0 + 5)
        #expect(dismissed.dismissAt == t0 + 5)
        #expect(manager.activity(id: id) == nil)
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.dismiss(id: id, now: t0 + 6) }
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.update(id, step: 1, at: t0 + 6) }
    }

    @Test func anEndedActivityDismissedByTheUserKeepsItsReason() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.end(app: pizza, id: id, now: t0 + 1)
        let events = try manager.dismiss(id: id, now: t0 + 2)
        guard case .changed(let dismissed) = events.first else { Issue.record("no change"); return }
        #expect(dismissed.state == .dismissed)
        #expect(dismissed.endReason == .app)
        #expect(dismissed.endedAt == t0 + 1)
        #expect(dismissed.dismissAt == t0 + 2)
        #expect(manager.nextDeadline == nil)
    }

    @Test func timersDueTogetherApplyInTimeOrder() throws {
        var manager = makeManager()
        let a = try manager.start(content: content(0, staleDate: t0 + 30), at: t0).id
        let b = try manager.start(weather, at: t0 + 10).id
        _ = try manager.end(app: weather, id: b, dismissalPolicy: .after(t0 + 20), now: t0 + 10)
        let events = manager.advance(to: t0 + 8 * 3600 + 60)
        #expect(events.labels == [
            "changed:2:dismissed", "removed:2",  // t0 + 20
            "changed:1:stale", "delivered:1",  // t0 + 30
            "changed:1:ended", "delivered:1",  // t0 + 8 h
        ])
        #expect(manager.activity(id: a)?.endReason == .expired)
        #expect(manager.activity(id: a)?.endedAt == t0 + 8 * 3600)
    }
}
