import IslandCore
import OrderedJSON
import Testing

@Suite("Producer death: owner-gone policies")
struct ActivityOwnerTests: ActivityTesting {
    @Test func keepLeavesTheActivityAlone() throws {
        var manager = makeManager()
        let id = try manager.start(ownerGonePolicy: .keep).id
        #expect(manager.ownerGone(app: pizza, now: t0 + 1).isEmpty)
        expectState(manager.activity(id: id)?.state, .active)
        #expect(manager.activity(id: id)?.ownerGraceEndsAt == nil)
    }

    @Test func endEndsItAtOnceWithReasonOwnerGone() throws {
        var manager = makeManager()
        let id = try manager.start(ownerGonePolicy: .end).id
        let kept = try manager.start(ownerGonePolicy: .keep).id
        let events = manager.ownerGone(app: pizza, now: t0 + 1)
        expectLabels(events, ["changed:1:ended", "delivered:1"])
        let ended = try #require(manager.activity(id: id))
        #expect(ended.endReason == .ownerGone)
        #expect(ended.endedAt == t0 + 1)
        #expect(ended.dismissAt == t0 + 1 + 4 * 3600)
        expectState(manager.activity(id: kept)?.state, .active)
    }

    @Test func staleTurnsItStaleAfterTheGracePeriod() throws {
        var manager = makeManager()
        let id = try manager.start(ownerGonePolicy: .stale).id
        let other = try manager.start(weather, ownerGonePolicy: .stale).id
        let gone = t0 + 100
        expectLabels(manager.ownerGone(app: pizza, now: gone), ["changed:1:active"])
        #expect(manager.activity(id: id)?.ownerGraceEndsAt == gone + 30)
        // A second disconnect does not move the deadline.
        #expect(manager.ownerGone(app: pizza, now: gone + 10).isEmpty)
        expectDeadline(manager.nextDeadline, gone + 30)
        #expect(manager.advance(to: gone + 29.9).isEmpty)

        expectLabels(manager.advance(to: gone + 30), ["changed:1:stale", "delivered:1"])
        expectState(manager.activity(id: id)?.state, .stale)
        #expect(manager.activity(id: id)?.ownerGraceEndsAt == nil)
        expectState(manager.activity(id: other)?.state, .active)

        // The app comes back and updates: active again.
        expectState(try manager.update(id, step: 1, at: gone + 60).activity.state, .active)
    }

    @Test func theOwnersReturnCancelsTheGracePeriod() throws {
        var manager = makeManager()
        let id = try manager.start(ownerGonePolicy: .stale).id
        _ = manager.ownerGone(app: pizza, now: t0 + 1)
        #expect(manager.nextWakeUp == t0 + 31)
        expectLabels(manager.ownerReturned(app: pizza), ["changed:1:active"])
        #expect(manager.activity(id: id)?.ownerGraceEndsAt == nil)
        // The cancelled timer leaves the cheap wake-up early, never late: waking then finds
        // nothing due and makes it exact.
        expectDeadline(manager.nextDeadline, t0 + 8 * 3600)
        #expect(manager.nextWakeUp == t0 + 31)
        #expect(manager.advance(to: t0 + 100).isEmpty)
        #expect(manager.nextWakeUp == t0 + 8 * 3600)
        expectState(manager.activity(id: id)?.state, .active)
        expectDeadline(manager.nextDeadline, t0 + 8 * 3600)
        #expect(manager.ownerReturned(app: pizza).isEmpty)
    }

    @Test func aConfiguredGracePeriodApplies() throws {
        var manager = makeManager(limits: limits { $0.ownerGoneGracePeriod = 5 })
        let id = try manager.start(ownerGonePolicy: .stale).id
        _ = manager.ownerGone(app: pizza, now: t0 + 1)
        _ = manager.advance(to: t0 + 6)
        expectState(manager.activity(id: id)?.state, .stale)
    }
}
