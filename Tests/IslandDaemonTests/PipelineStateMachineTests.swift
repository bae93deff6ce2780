import IslandCore
import Testing
@testable import IslandDaemon

/// The pipeline's bookkeeping, step by step, with no loop, store or clock: commits are
/// strings, and the time is an argument.
@Suite struct PipelineStateMachineTests {
    typealias Machine = PipelineStateMachine<String>

    @Test func theFirstChangeOfATurnQueuesItsEndAndTheTurnsCommitsGoTogetherInOrder() {
        var machine = Machine()
        let first = machine.decide()
        #expect(first.step == .queueEndOfTurn)
        #expect(machine.queue("a") == .none, "the end of the turn is queued already")
        let second = machine.decide()
        #expect(second.step == .none)
        #expect(machine.queue("b") == .none)
        #expect(second.decision == first.decision + 1)

        let end = machine.endTurn()
        #expect(end.commits == ["a", "b"], "one hand-off to the store for the turn, in the order of decision")
        #expect(end.rescheduleTimer, "once for the turn, however many changes it decided")

        let third = machine.decide()
        #expect(third.step == .queueEndOfTurn, "a new turn")
        #expect(machine.queue("c") == .none)
        #expect(machine.endTurn().commits == ["c"])
    }

    @Test func aTurnWithNothingShownLeavesTheTimerAlone() {
        var machine = Machine()
        #expect(machine.queue("rows") == .queueEndOfTurn, "rows alone still end the turn")
        let end = machine.endTurn()
        #expect(end.commits == ["rows"])
        #expect(!end.rescheduleTimer)

        _ = machine.decide()
        let decidedOnly = machine.endTurn()
        #expect(decidedOnly.commits.isEmpty, "a change with no rows (an alert) commits nothing")
        #expect(decidedOnly.rescheduleTimer)
        #expect(!machine.endTurn().rescheduleTimer, "told once")
    }

    @Test func commitsThatMustComeAfterTheTurnsTakeThemFirst() {
        var machine = Machine()
        _ = machine.decide()
        _ = machine.queue("activity")
        #expect(machine.takeCommits() == ["activity"], "a layout's commit goes after the changes decided before it")
        #expect(machine.takeCommits() == [])
        let end = machine.endTurn()
        #expect(end.commits == [], "taken already")
        #expect(end.rescheduleTimer)
    }

    /// Commits complete in order, but whoever waits for them may resume in any order.
    @Test func decisionsFinishInTheOrderTheyWereMadeAndAFailedOneStillTakesItsTurn() {
        var machine = Machine()
        let first = machine.decide().decision
        let second = machine.decide().decision
        let third = machine.decide().decision
        machine.committed(second, events: [.removed(id: "b")])
        #expect(machine.nextToFinish() == nil, "the second waits for the first")
        machine.committed(first, events: [.removed(id: "a")])
        #expect(machine.nextToFinish() == [.removed(id: "a")])
        #expect(machine.nextToFinish() == [.removed(id: "b")])
        #expect(machine.nextToFinish() == nil, "the third is not committed yet")
        machine.committed(third, events: [])
        #expect(machine.nextToFinish() == [], "a failed commit finishes with no events")
        #expect(machine.nextToFinish() == nil)
    }

    @Test func theTimerIsSetOncePerDeadlineAndNeverEarly() {
        var machine = Machine()
        let now = 1_700_000_000.0
        #expect(machine.timerWanted(at: nil, now: now) == .keep, "none wanted, none set")
        #expect(machine.timerWanted(at: now + 2.5, now: now) == .schedule(milliseconds: 2501), "rounded up")
        #expect(machine.timerDeadline == now + 2.5)
        #expect(machine.timerWanted(at: now + 2.5, now: now + 1) == .keep, "set for that deadline already")
        #expect(machine.timerWanted(at: now + 1, now: now + 0.5) == .schedule(milliseconds: 501), "an earlier deadline replaces it")
        #expect(machine.timerWanted(at: nil, now: now) == .cancel)
        #expect(machine.timerDeadline == nil)
        #expect(machine.timerWanted(at: now - 3, now: now) == .schedule(milliseconds: 1), "a deadline passed fires at once")
    }

    @Test func aFiredTimerIsSetAgainForTheSameDeadline() {
        var machine = Machine()
        #expect(machine.timerWanted(at: 10, now: 9) == .schedule(milliseconds: 1001))
        machine.timerFired()
        #expect(machine.timerDeadline == nil)
        #expect(
            machine.timerWanted(at: 10, now: 10) == .schedule(milliseconds: 1),
            "what was due is still due (a commit failed): the timer fires again")
    }

    @Test func theTimeIsReadOnlyWhenATimerIsSet() {
        var machine = Machine()
        var reads = 0
        func now() -> Double {
            reads += 1
            return 0
        }
        _ = machine.timerWanted(at: nil, now: now())
        _ = machine.timerWanted(at: 5, now: now())
        _ = machine.timerWanted(at: 5, now: now())
        _ = machine.timerWanted(at: nil, now: now())
        #expect(reads == 1, "the clock is read for a delay only")
    }
}
