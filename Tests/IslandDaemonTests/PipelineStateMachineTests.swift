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

    // MARK: Commits nobody waits for linger

    @Test func aCommitNobodyWaitsForLingersAndItsTimerTakesItWithThoseThatCameAfter() {
        var machine = Machine()
        _ = machine.decide()
        #expect(machine.queue("a", rows: 1, awaited: false, now: 0) == .none)
        let first = machine.endTurn(now: 0.0002)
        #expect(first.commits == [], "nobody waits for it: it lingers")
        #expect(first.lingerTimer == .schedule(nanoseconds: 800_000), "for what is left of the millisecond")

        _ = machine.decide()
        #expect(machine.queue("b", rows: 1, awaited: false, now: 0.0005) == .none)
        let second = machine.endTurn(now: 0.0005)
        #expect(second.commits == [])
        #expect(second.lingerTimer == .keep, "set once, from the oldest")

        #expect(machine.lingerTimerFired() == ["a", "b"], "together, in the order of decision")
        #expect(machine.lingerTimerFired() == [], "nothing twice")
        let idle = machine.endTurn(now: 0.002)
        #expect(idle.commits == [])
        #expect(idle.lingerTimer == .keep, "the timer fired: nothing to cancel")
    }

    @Test func aCallThatWaitsTakesTheLingeringCommitsWithItInOrderAndTheTimerIsCancelled() {
        var machine = Machine()
        let oneway = machine.decide().decision
        _ = machine.queue("oneway", rows: 1, awaited: false, now: 0)
        #expect(machine.endTurn(now: 0).lingerTimer == .schedule(nanoseconds: 1_000_000))

        let call = machine.decide().decision
        #expect(machine.queue("call", rows: 1, awaited: true, now: 0.0001) == .none)
        let end = machine.endTurn(now: 0.0001)
        #expect(end.commits == ["oneway", "call"], "at the end of the call's turn, after what it depends on")
        #expect(end.lingerTimer == .cancel)

        // The store completes them together; they finish in the order they were decided.
        machine.committed(call, events: [.removed(id: "call")])
        #expect(machine.nextToFinish() == nil, "the call waits for the change decided before it")
        machine.committed(oneway, events: [.removed(id: "oneway")])
        #expect(machine.nextToFinish() == [.removed(id: "oneway")])
        #expect(machine.nextToFinish() == [.removed(id: "call")])

        // A later commit nobody waits for lingers afresh.
        _ = machine.decide()
        _ = machine.queue("later", rows: 1, awaited: false, now: 0.0003)
        #expect(machine.endTurn(now: 0.0003).outcome == TurnOutcome(commits: [], lingerTimer: .schedule(nanoseconds: 1_000_000)))
    }

    @Test func lingeringCommitsGoOnceTheyReachTheRowBound() {
        var machine = Machine()
        let rows = Machine.Linger.standard.rows
        _ = machine.queue("a", rows: rows / 2, awaited: false, now: 0)
        _ = machine.queue("b", rows: rows / 2 - 1, awaited: false, now: 0)
        #expect(machine.endTurn(now: 0).outcome == TurnOutcome(commits: [], lingerTimer: .schedule(nanoseconds: 1_000_000)), "one row short")
        _ = machine.queue("c", rows: 1, awaited: false, now: 0.0001)
        #expect(machine.endTurn(now: 0.0001).outcome == TurnOutcome(commits: ["a", "b", "c"], lingerTimer: .cancel), "the bound reached")
    }

    /// The loop may be too busy to run the timer at its time: the end of a turn sends what
    /// has lingered long enough itself.
    @Test func lingeringCommitsGoAtTheEndOfATurnOnceTheirTimeIsUp() {
        var machine = Machine()
        _ = machine.queue("a", rows: 1, awaited: false, now: 0)
        #expect(machine.endTurn(now: 0).outcome == TurnOutcome(commits: [], lingerTimer: .schedule(nanoseconds: 1_000_000)))
        _ = machine.queue("b", rows: 1, awaited: false, now: 0.001)
        #expect(machine.endTurn(now: 0.001).outcome == TurnOutcome(commits: ["a", "b"], lingerTimer: .cancel))
    }

    /// The presenters' writes of a turn go before its commit: a timer that fires between a
    /// decision and the end of its turn leaves the commits to that end.
    @Test func aLingerTimerThatFiresBeforeAQueuedEndOfTurnLeavesTheCommitsToIt() {
        var machine = Machine()
        _ = machine.queue("a", rows: 1, awaited: false, now: 0)
        _ = machine.endTurn(now: 0)
        #expect(machine.queue("b", rows: 1, awaited: false, now: 0.0009) == .queueEndOfTurn)
        #expect(machine.lingerTimerFired() == [])
        #expect(
            machine.endTurn(now: 0.0009).outcome == TurnOutcome(commits: ["a", "b"], lingerTimer: .keep),
            "due though the clock says otherwise: the timer is the bound")
    }

    @Test func theLingerNeverOutlastsItsBoundWhenTheClockGoesBack() {
        var machine = Machine()
        _ = machine.queue("a", rows: 1, awaited: false, now: 10)
        #expect(machine.endTurn(now: 5).lingerTimer == .schedule(nanoseconds: 1_000_000))
    }

    @Test func stoppingTakesWhatLingersAndNothingLingersAfterwards() {
        var machine = Machine()
        _ = machine.queue("a", rows: 1, awaited: false, now: 0)
        _ = machine.endTurn(now: 0)
        #expect(machine.stopLingering() == ["a"])
        #expect(machine.linger == .never)
        _ = machine.queue("b", rows: 1, awaited: false, now: 0)
        #expect(machine.endTurn(now: 0).outcome == TurnOutcome(commits: ["b"], lingerTimer: .cancel), "the timer set before is cancelled")
        _ = machine.queue("c", rows: 1, awaited: false, now: 0)
        #expect(machine.endTurn(now: 0).outcome == TurnOutcome(commits: ["c"], lingerTimer: .keep))
    }

    @Test func aLayoutsCommitTakesWhatLingersFirst() {
        var machine = Machine()
        _ = machine.queue("a", rows: 1, awaited: false, now: 0)
        _ = machine.endTurn(now: 0)
        #expect(machine.takeCommits() == ["a"])
        #expect(machine.lingerTimerFired() == [], "the timer, still set, finds nothing")
    }

    @Test func theClockIsReadOnlyForACommitThatMayLinger() {
        var machine = Machine()
        var reads = 0
        func now() -> Double {
            reads += 1
            return 0
        }
        _ = machine.queue("call", rows: 1, awaited: true, now: now())
        _ = machine.endTurn(now: now())
        #expect(reads == 1, "once, as it is queued: a commit waited for goes at the end of the turn")
        _ = machine.queue("oneway", rows: 1, awaited: false, now: now())
        _ = machine.endTurn(now: now())
        #expect(reads == 3)
    }
}

/// What an end of turn says about commits and the linger's timer, to compare at once.
private struct TurnOutcome: Equatable {
    var commits: [String]
    var lingerTimer: PipelineStateMachine<String>.LingerTimerStep
}

extension PipelineStateMachine<String>.EndOfTurn {
    fileprivate var outcome: TurnOutcome { TurnOutcome(commits: commits, lingerTimer: lingerTimer) }
}

extension PipelineStateMachine<String> {
    /// A commit somebody waits for, of one row: as every commit was before commits lingered.
    mutating func queue(_ commit: String) -> TurnStep { queue(commit, rows: 1, awaited: true, now: 0) }
    mutating func endTurn() -> EndOfTurn { endTurn(now: 0) }
}
