import IslandCore
import Testing

@Suite struct ClickGuardTests {
    struct Target: Hashable, Sendable {
        var activity: String
        var action: String
    }

    let aTap = Target(activity: "A", action: "tap")
    let bTap = Target(activity: "B", action: "tap")

    @Test func aTargetNotOnScreenIsNeverActionable() {
        let guardian = ClickGuard<Target, Int>()
        #expect(!guardian.isActionable(aTap, at: 100))
        #expect(guardian.actionableAt(aTap) == nil)
    }

    @Test func aTargetBecomesActionableAfterItSettles() {
        var guardian = ClickGuard<Target, Int>(settleTime: 0.5)
        guardian.shown([aTap: 0], at: 10)
        #expect(!guardian.isActionable(aTap, at: 10.49))
        #expect(guardian.isActionable(aTap, at: 10.5))
        // Showing the same frame again does not restart the wait.
        guardian.shown([aTap: 0], at: 11)
        #expect(guardian.isActionable(aTap, at: 11))
    }

    @Test func anotherAppsTargetAppearingWhereTheUserAimsIsNotActionable() {
        var guardian = ClickGuard<Target, Int>(settleTime: 0.5)
        guardian.shown([aTap: 0], at: 0)
        // B's alert replaces A's pill at the same place 50 ms before the click.
        guardian.shown([bTap: 0], at: 5)
        #expect(!guardian.isActionable(bTap, at: 5.05))
        #expect(!guardian.isActionable(aTap, at: 5.05))
        #expect(guardian.actionableAt(bTap) == 5.5)
    }

    @Test func aTargetThatMovedWaitsAgain() {
        var guardian = ClickGuard<Target, Int>(settleTime: 0.5)
        guardian.shown([aTap: 0, bTap: 1], at: 0)
        guardian.shown([aTap: 1, bTap: 0], at: 3)
        #expect(!guardian.isActionable(aTap, at: 3.1))
        #expect(!guardian.isActionable(bTap, at: 3.1))
        #expect(guardian.isActionable(aTap, at: 3.5))
    }

    @Test func aTargetThatLeftAndCameBackIsNew() {
        var guardian = ClickGuard<Target, Int>(settleTime: 0.5)
        guardian.shown([aTap: 0], at: 0)
        guardian.shown([:], at: 2)
        guardian.shown([aTap: 0], at: 2.1)
        #expect(!guardian.isActionable(aTap, at: 2.2))
        guardian.clear()
        #expect(!guardian.isActionable(aTap, at: 10))
    }

    @Test func itSaysWhatMayBeClickedAndWhenTheNextTargetSettles() {
        var guardian = ClickGuard<Target, Int>(settleTime: 0.5)
        guardian.shown([aTap: 0], at: 0)
        guardian.shown([aTap: 0, bTap: 1], at: 0.3)
        #expect(guardian.actionable(at: 0.6) == [aTap])
        #expect(guardian.nextActionable(after: 0.6) == 0.8)
        #expect(Set(guardian.actionable(at: 0.8)) == [aTap, bTap])
        #expect(guardian.nextActionable(after: 0.8) == nil)
    }
}
