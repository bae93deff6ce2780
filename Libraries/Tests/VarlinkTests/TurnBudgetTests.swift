import NIOCore
import Testing
@testable import VarlinkNIO

@Suite struct TurnBudgetTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func sixtyFourCallsSpendATurnAndItComesBackAfterAPauseAsLongAsTheyTook() {
        var budget = TurnBudget()
        for i in 0..<63 {
            #expect(budget.spend(now: start + .microseconds(Int64(i))) == nil)
        }
        #expect(budget.hasCalls)
        #expect(budget.spend(now: start + .microseconds(300)) == .microseconds(300))
        #expect(!budget.hasCalls)
        budget.refill()
        #expect(budget.hasCalls)
    }

    @Test func thePauseIsNeverShorterThanATenthOfAMillisecond() {
        var budget = TurnBudget()
        var pause: TimeAmount?
        for _ in 0..<TurnBudget.callsPerTurn { pause = budget.spend(now: start) }
        #expect(pause == .microseconds(100))
    }

    @Test func aReadStartsANewTurn() {
        var budget = TurnBudget()
        let refilledUnspent = budget.readCompleted()
        #expect(!refilledUnspent, "nothing spent, nothing to refill")
        for _ in 0..<TurnBudget.callsPerTurn { _ = budget.spend(now: start) }
        let refilled = budget.readCompleted()
        #expect(refilled)
        #expect(budget.hasCalls)
    }

    /// Calls that each take long end the turn after 5 ms, whatever their count, and the budget
    /// then comes back only after its pause: a read does not refill it.
    @Test func fiveMillisecondsEndTheTurnAndOnlyThePauseEndsThat() {
        var budget = TurnBudget()
        #expect(budget.spend(now: start) == nil)
        #expect(budget.spend(now: start + .milliseconds(2)) == nil)
        #expect(budget.spend(now: start + .milliseconds(6)) == .milliseconds(6))
        #expect(!budget.hasCalls)
        let refilled = budget.readCompleted()
        #expect(!refilled)
        #expect(!budget.hasCalls)
        budget.refill()
        #expect(budget.spend(now: start + .milliseconds(20)) == nil, "a refilled budget times a new turn")
    }
}

@Suite struct FlushCoalescerTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aLoneReplyAfterAQuietSpellGoesAtOnceAndOneRightAfterWaitsForTheTick() {
        var flushes = FlushCoalescer()
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: false, now: start) == .now)
        #expect(!flushes.hasUnflushed)
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: false, now: start + .microseconds(50)) == .atEndOfTick)
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: false, now: start + .microseconds(60)) == .none, "one flush is coming already")
        flushes.endOfTick()
        let flushed = flushes.flush(at: start + .microseconds(70))
        #expect(flushed)
        let flushedAgain = flushes.flush(at: start + .microseconds(80))
        #expect(!flushedAgain, "nothing left to flush")
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: false, now: start + .microseconds(270)) == .now)
    }

    @Test func aReplyWithMoreCallsBehindItWaitsToShareTheirWrite() {
        var flushes = FlushCoalescer()
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: true, now: start) == .atEndOfTick)
    }

    @Test func aReadFlushesWhenItCompletes() {
        var flushes = FlushCoalescer()
        flushes.readStarted()
        flushes.wrote()
        #expect(flushes.repliesMade(callsFollow: false, now: start) == .none)
        flushes.readCompleted()
        let flushed = flushes.flush(at: start)
        #expect(flushed)
    }

    @Test func nothingWrittenNothingFlushed() {
        var flushes = FlushCoalescer()
        #expect(flushes.repliesMade(callsFollow: false, now: start) == .none)
        let flushed = flushes.flush(at: start)
        #expect(!flushed)
    }
}
