import IslandCore
import OrderedCollections
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
            expectState(outcome.activity.state, .ended)
            #expect(outcome.activity.dismissAt == end + dismissAfter)
            expectDeadline(manager.nextDeadline, end + dismissAfter)
            #expect(manager.advance(to: end + dismissAfter - 1).isEmpty)
            expectLabels(manager.advance(to: end + dismissAfter), ["changed:1:dismissed", "removed:1"])
        } else {
            expectState(outcome.activity.state, .dismissed)
            #expect(outcome.activity.dismissAt == end)
            expectLabels(outcome.events, ["changed:1:dismissed", "removed:1"])
        }
        #expect(manager.activity(id: id) == nil)
    }

    // Ending again, as ActivityKit's end(_:dismissalPolicy:) allows on an ended activity: the
    // second end's dismissal policy and final content replace the first's.

    @Test func endingAnEndedActivityImmediatelyDismissesIt() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.end(app: pizza, id: id, now: t0 + 100)
        let outcome = try manager.end(app: pizza, id: id, dismissalPolicy: .immediate, now: t0 + 200)
        expectState(outcome.activity.state, .dismissed)
        #expect(outcome.activity.endReason == .app)
        expectLabels(outcome.events, ["changed:1:dismissed", "removed:1"])
        #expect(manager.activity(id: id) == nil)
        // Gone now, as any dismissed activity is.
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.end(app: pizza, id: id, now: t0 + 201) }
    }

    @Test func aSecondEndSetsTheDismissalButKeepsWhenAndWhyItEnded() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.end(app: pizza, id: id, now: t0 + 100)
        let outcome = try manager.end(app: pizza, id: id, dismissalPolicy: .after(t0 + 700), now: t0 + 200)
        expectState(outcome.activity.state, .ended)
        #expect(outcome.activity.endReason == .app)
        #expect(outcome.activity.endedAt == t0 + 100)
        #expect(outcome.activity.dismissAt == t0 + 700)
        expectLabels(outcome.events, ["changed:1:ended"])
        expectDeadline(manager.nextDeadline, t0 + 700)
        #expect(manager.advance(to: t0 + 699).isEmpty)
        expectLabels(manager.advance(to: t0 + 700), ["changed:1:dismissed", "removed:1"])
    }

    @Test func endingAgainNeverKeepsItListedLongerThanOneEnd() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let end = t0 + 100
        _ = try manager.end(app: pizza, id: id, dismissalPolicy: .after(end + 60), now: end)
        // The default, and a date past the bound, count from the first end, not from now.
        #expect(try manager.end(app: pizza, id: id, now: end + 30).activity.dismissAt == end + 4 * 3600)
        #expect(
            try manager.end(app: pizza, id: id, dismissalPolicy: .after(end + 9 * 3600), now: end + 3600).activity.dismissAt
                == end + 4 * 3600)
    }

    @Test func aSecondEndsContentReplacesTheFinalContentAtTheUpdateRate() throws {
        var manager = makeManager()
        let id = try manager.start().id
        let end = t0 + 100
        _ = try manager.end(app: pizza, id: id, content: content(1), now: end)
        // Within the rate's interval (2 a second) of the first end's delivery: held until then.
        let held = try manager.end(app: pizza, id: id, content: content(2), now: end + 0.1)
        #expect(held.activity.content == content(2))
        #expect(held.activity.deliveredContent == content(1))
        #expect(held.activity.nextDeliveryAt == end + 0.5)
        expectLabels(held.events, ["changed:1:ended"])
        expectDeadline(manager.nextDeadline, end + 0.5)
        expectLabels(manager.advance(to: end + 0.5), ["changed:1:ended", "delivered:1"])
        #expect(manager.activity(id: id)?.deliveredContent == content(2))
        // Past the interval: at once.
        let now = try manager.end(app: pizza, id: id, content: content(3), now: end + 2)
        #expect(now.activity.deliveredContent == content(3))
        expectLabels(now.events, ["changed:1:ended", "delivered:1"])
    }

    @Test func aSecondEndIsOrderedAndBoundedLikeTheFirst() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.end(app: pizza, id: id, timestamp: t0 + 50, now: t0 + 100)
        #expect(throws: IslandError.staleTimestamp(id: id, last: t0 + 50, given: t0 + 40)) {
            try manager.end(app: pizza, id: id, dismissalPolicy: .immediate, timestamp: t0 + 40, now: t0 + 101)
        }
        #expect(throws: IslandError.noSuchActivity(id: id)) { try manager.end(app: weather, id: id, now: t0 + 101) }
        let big = ActivityContent(state: ["blob": .string(String(repeating: "x", count: 5000))])
        #expect(throws: IslandError.self) { try manager.end(app: pizza, id: id, content: big, now: t0 + 101) }
        expectState(manager.activity(id: id)?.state, .ended)
        #expect(manager.activity(id: id)?.dismissAt == t0 + 100 + 4 * 3600)
    }

    @Test func anActivityTheUserEndedStaysAsTheUserLeftIt() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = manager.setEnabled(app: pizza, false, now: t0 + 100)
        #expect(manager.activity(id: id)?.endReason == .user)
        #expect(throws: IslandError.activityEnded(id: id, state: .ended)) {
            try manager.end(app: pizza, id: id, content: content(5), now: t0 + 101)
        }
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
        expectLabels(outcome.events, ["changed:1:ended", "delivered:1"])
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
        expectLabels(events, ["changed:1:dismissed", "removed:1"])
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
        expectDeadline(manager.nextDeadline, nil)
    }

    @Test func timersDueTogetherApplyInTimeOrder() throws {
        var manager = makeManager()
        let a = try manager.start(content: content(0, staleDate: t0 + 30), at: t0).id
        let b = try manager.start(weather, at: t0 + 10).id
        _ = try manager.end(app: weather, id: b, dismissalPolicy: .after(t0 + 20), now: t0 + 10)
        let events = manager.advance(to: t0 + 8 * 3600 + 60)
        expectLabels(
            events,
            [
                "changed:2:dismissed", "removed:2",  // t0 + 20
                "changed:1:stale", "delivered:1",  // t0 + 30
                "changed:1:ended", "delivered:1",  // t0 + 8 h
            ])
        #expect(manager.activity(id: a)?.endReason == .expired)
        #expect(manager.activity(id: a)?.endedAt == t0 + 8 * 3600)
    }
}
