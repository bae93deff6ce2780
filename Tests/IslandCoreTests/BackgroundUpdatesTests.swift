import IslandCore
import Testing

/// Priority 1 on broadcast channels: held, the latest per activity, while the island is busy
/// (an alert presented, an activity the user expanded), and handed back once it is not.
@Suite("Background updates")
struct BackgroundUpdatesTests {
    @Test func anUpdateWhileTheIslandRestsIsAppliedAtOnce() {
        var updates = BackgroundUpdates<String>()
        let decided1 = updates.offer("a", activity: "x", timestamp: 1, busyUntil: nil, now: 100)
        #expect(decided1 == .applyNow)
        // An expansion that timed out by now is no longer busy.
        let decided2 = updates.offer("b", activity: "x", timestamp: 2, busyUntil: 100, now: 100)
        #expect(decided2 == .applyNow)
        #expect(updates.held.isEmpty)
    }

    @Test func whileBusyTheLatestOfEachActivityIsHeldAndHandedBackInTheOrderFirstHeld() {
        var updates = BackgroundUpdates<String>()
        let decided3 = updates.offer("x1", activity: "x", timestamp: 1, busyUntil: 105, now: 100)
        #expect(decided3 == .held(until: 105))
        let decided4 = updates.offer("y1", activity: "y", timestamp: 1, busyUntil: 105, now: 101)
        #expect(decided4 == .held(until: 105))
        let decided5 = updates.offer("x2", activity: "x", timestamp: 2, busyUntil: 105, now: 102)
        #expect(decided5 == .held(until: 105))
        // Reordered on the channel: an older one does not replace the later held.
        let decided6 = updates.offer("x0", activity: "x", timestamp: 0.5, busyUntil: 105, now: 103)
        #expect(decided6 == .held(until: 105))
        #expect(updates.held.count == 2, "one per activity")
        // Still busy: nothing back.
        let stillBusy = updates.release(busyUntil: 105, now: 104)
        #expect(stillBusy.isEmpty)
        let released = updates.release(busyUntil: 105, now: 105)
        #expect(released.map(\.update) == ["x2", "y1"])
        #expect(updates.held.isEmpty)
    }

    @Test func aCollapseEndsTheWaitBeforeTheExpansionWouldHaveTimedOut() {
        var updates = BackgroundUpdates<String>()
        _ = updates.offer("x1", activity: "x", timestamp: 1, busyUntil: 108, now: 100)
        let afterCollapse = updates.release(busyUntil: nil, now: 101)
        #expect(afterCollapse.map(\.update) == ["x1"])
    }

    /// `isEmpty` is kept as updates are held and handed back or forgotten, not worked out: it
    /// says what `held` says after every step.
    @Test func isEmptyFollowsWhatIsHeld() {
        var updates = BackgroundUpdates<String>()
        #expect(updates.isEmpty)
        _ = updates.offer("x1", activity: "x", timestamp: 1, busyUntil: nil, now: 100)
        #expect(updates.isEmpty, "applied at once, not held")
        _ = updates.offer("x1", activity: "x", timestamp: 1, busyUntil: 108, now: 100)
        _ = updates.offer("y1", activity: "y", timestamp: 1, busyUntil: 108, now: 100)
        #expect(!updates.isEmpty)
        updates.forget(activity: "x")
        #expect(!updates.isEmpty && updates.held.count == 1)
        updates.forget(activity: "y")
        #expect(updates.isEmpty && updates.held.isEmpty)
        updates.hold("z1", activity: "z", timestamp: 1)
        #expect(!updates.isEmpty)
        _ = updates.release(busyUntil: 108, now: 101)
        #expect(!updates.isEmpty, "still busy: nothing handed back")
        _ = updates.release(busyUntil: nil, now: 109)
        #expect(updates.isEmpty && updates.held.isEmpty)
    }

    @Test func anActivityGoneTakesWhatWasHeldForIt() {
        var updates = BackgroundUpdates<String>()
        _ = updates.offer("x1", activity: "x", timestamp: 1, busyUntil: 108, now: 100)
        _ = updates.offer("y1", activity: "y", timestamp: 1, busyUntil: 108, now: 100)
        updates.forget(activity: "x")
        let left = updates.release(busyUntil: nil, now: 109)
        #expect(left.map(\.update) == ["y1"])
    }

    @Test func anUpdateReadBackAfterARestartIsHeldWhateverTheIslandDoesAndTheLatestStillWins() {
        var updates = BackgroundUpdates<String>()
        updates.hold("x2", activity: "x", timestamp: 2)
        updates.hold("x1", activity: "x", timestamp: 1)
        #expect(updates.holds(activity: "x", timestamp: 2))
        #expect(!updates.holds(activity: "x", timestamp: 1))
        // Held until the island rests, as one offered while it was busy.
        let whileBusy = updates.release(busyUntil: 105, now: 100)
        #expect(whileBusy.isEmpty)
        let forgotten = updates.forget(activity: "x")
        let again = updates.forget(activity: "x")
        #expect(forgotten && !again, "held once, then nothing")
    }

    @Test func theIslandIsBusyWhileAnAlertOrAUsersExpansionShows() {
        var interactions = IslandInteractions(expandTimeout: 8, alertExpansion: 5)
        #expect(interactions.busyUntil(at: 100) == nil)
        interactions.alert(id: "x", now: 100)
        #expect(interactions.busyUntil(at: 100) == 105)
        // The user expands another while the alert shows: busy until the later of the two.
        interactions.expand(id: "y", now: 101)
        #expect(interactions.busyUntil(at: 101) == 109)
        // The alert timed out; the user's expansion still shows.
        #expect(interactions.busyUntil(at: 106) == 109)
        #expect(interactions.busyUntil(at: 109) == nil)
        interactions.expand(id: "y", now: 120)
        interactions.collapse(now: 121)
        #expect(interactions.busyUntil(at: 121) == nil)
    }
}
