import Foundation
import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import island

/// `island progress` shows a time left from the rate (pure, on readings with their
/// times), says only what it can know of how the run ended, and `island run`'s card says how
/// its command ended.
@Suite struct ProgressEstimateTests {
    /// Readings of `percent` at `times`, out of 100.
    static func estimate(_ readings: [(percent: Double, time: Double)]) -> ProgressEstimate {
        var estimate = ProgressEstimate()
        for reading in readings { estimate.record(value: reading.percent, total: 100, at: reading.time) }
        return estimate
    }

    @Test func noTimeLeftUntilEnoughSpansHaveBeenSeen() {
        // 1 % a second: three spans of a second are needed.
        #expect(Self.estimate([(10, 0)]).secondsLeft == nil)
        #expect(Self.estimate([(10, 0), (11, 1), (12, 2)]).secondsLeft == nil)
        let enough = Self.estimate([(10, 0), (11, 1), (12, 2), (13, 3)])
        #expect(abs(enough.secondsLeft! - 87) < 1e-6)
    }

    @Test func aBurstOfReadingsAtOneInstantIsNoRate() {
        // A command that printed everything at once (buffered output): no span, no estimate.
        let burst = Self.estimate((0...99).map { (Double($0), 5.0) })
        #expect(burst.secondsLeft == nil)
        // Readings closer than the shortest span add up into one: 10 % a second, read every 0.1 s.
        let close = Self.estimate(stride(from: 0.0, through: 2.0, by: 0.1).map { (percent: $0 * 10, time: $0) })
        #expect(abs(close.secondsLeft! - 8) < 1e-6)
    }

    @Test func theRateIsSmoothedSoOneSlowSpanDoesNotSwingIt() {
        // 1 % a second, then a span ten times slower.
        let steady = Self.estimate([(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)])
        let slowed = Self.estimate([(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (4.1, 5)])
        let steadyLeft = steady.secondsLeft!, slowedLeft = slowed.secondsLeft!
        #expect(abs(steadyLeft - 96) < 1e-6)
        // Unsmoothed, the last span alone says 959 s.
        #expect(slowedLeft > steadyLeft && slowedLeft < 200)
    }

    @Test func neverNegativeAndNoneOnceDoneOrStandingStill() {
        // Past its total (a count that overshoots): done, nothing left to estimate.
        #expect(Self.estimate([(10, 0), (40, 1), (70, 2), (100, 3), (130, 4)]).secondsLeft == nil)
        // Standing still: a zero rate, no estimate rather than an infinite one.
        #expect(Self.estimate([(50, 0), (50, 1), (50, 2), (50, 3)]).secondsLeft == nil)
        // Not numbers, no total, time going back: ignored or a new start, never a crash.
        var odd = ProgressEstimate()
        for (value, total, time) in [(Double.nan, 100.0, 0.0), (1, 0, 1), (1, .infinity, 2), (5, 100, .nan), (5, 100, 3), (6, 100, 2)] {
            odd.record(value: value, total: total, at: time)
            if let left = odd.secondsLeft { #expect(left >= 0 && left.isFinite) }
        }
        #expect(odd.secondsLeft == nil)
    }

    @Test func progressGoingBackStartsTheMeasureAgain() {
        // A second phase from 0 %: the first phase's rate says nothing of it.
        let again = Self.estimate([(0, 0), (25, 1), (50, 2), (75, 3), (5, 4), (6, 5)])
        #expect(again.secondsLeft == nil)
        let measured = Self.estimate([(0, 0), (25, 1), (50, 2), (75, 3), (5, 4), (6, 5), (7, 6), (8, 7)])
        #expect(abs(measured.secondsLeft! - 92) < 1e-6)
    }

    @Test func theTextIsShortAndBounded() {
        #expect(ProgressEstimate.text(secondsLeft: nil) == nil)
        #expect(ProgressEstimate.text(secondsLeft: -1) == nil)
        #expect(ProgressEstimate.text(secondsLeft: .nan) == nil)
        #expect(ProgressEstimate.text(secondsLeft: .infinity) == nil)
        #expect(ProgressEstimate.text(secondsLeft: 0) == "5 s left")
        #expect(ProgressEstimate.text(secondsLeft: 42) == "40 s left")
        #expect(ProgressEstimate.text(secondsLeft: 59) == "1 min left")
        #expect(ProgressEstimate.text(secondsLeft: 12 * 60 + 10) == "12 min left")
        #expect(ProgressEstimate.text(secondsLeft: 3599) == "1 h left")
        #expect(ProgressEstimate.text(secondsLeft: 2 * 3600 + 5 * 60) == "2 h 5 min left")
        #expect(ProgressEstimate.text(secondsLeft: 24 * 3600) == "over a day left")
        #expect(ProgressEstimate.text(secondsLeft: 1e300) == "over a day left")
        // Every text a reading could give is short.
        for seconds in stride(from: 0.0, through: 200_000, by: 7.3) {
            #expect(ProgressEstimate.text(secondsLeft: seconds)!.count <= "23 h 59 min left".count)
        }
    }
}

@Suite struct CommandEndingTests {
    @Test func waitStatusesReadAsAShellReadsThem() {
        #expect(Termination(waitStatus: 0) == .exited(0))
        #expect(Termination(waitStatus: 3 << 8) == .exited(3))
        #expect(Termination(waitStatus: SIGTERM) == .killed(signal: SIGTERM))
        // A core dump sets 0x80 besides the signal.
        #expect(Termination(waitStatus: SIGSEGV | 0x80) == .killed(signal: SIGSEGV))
        #expect(Termination.exited(3).shellStatus == 3)
        #expect(Termination.killed(signal: SIGTERM).shellStatus == 143)
        #expect(Termination.killed(signal: SIGKILL).description == "killed by SIGKILL")
        #expect(Termination.name(ofSignal: 40) == "signal 40")
    }

    @Test func theEndedStateSaysHowTheCommandEnded() {
        #expect(Termination.exited(0).stateMembers == ["status": "succeeded", "exitStatus": 0])
        #expect(Termination.exited(3).stateMembers == ["status": "failed", "exitStatus": 3, "outcome": "Exit status 3"])
        #expect(Termination.killed(signal: SIGTERM).stateMembers == ["status": "failed", "exitStatus": 143, "outcome": "Killed by SIGTERM"])
    }

    /// Reading stdin, island cannot know how the writer ended: the end of input is no success
    /// (it once was "succeeded", even after `exit 1`).
    @Test func progressClaimsNoSuccessItCannotKnow() {
        #expect(ProgressCommand.Ending.inputClosed.stateMembers == ["status": "finished"])
        #expect(ProgressCommand.Ending.interrupted(signal: SIGINT).stateMembers["status"] == "failed")
        #expect(ProgressCommand.Ending.command(.exited(0)).stateMembers == ["status": "succeeded"])
        #expect(ProgressCommand.Ending.command(.exited(1)).stateMembers == ["status": "failed", "outcome": "Exit status 1"])
        #expect(ProgressCommand.Ending.command(.killed(signal: SIGKILL)).stateMembers == ["status": "failed", "outcome": "Killed by SIGKILL"])
    }

    /// The card of `island run`'s activity (its default layout, none being registered for
    /// Command) at the end: the exit status is among what it shows, not cut off after three
    /// other values as it once was.
    static func card(_ termination: Termination) -> String {
        let attributes: JSONObject = ["title": "backup", "command": "backup.sh"]
        var state = termination.stateMembers
        state["startedAt"] = .double(1_000_000)
        state["duration"] = 4.2
        let layout = Layout.default(for: "Command", attributes: attributes, state: state)
        let rendered = LayoutRenderer(attributes: attributes, state: state, now: 1_000_010, timeZone: TimeZone(identifier: "UTC")!).render(layout)
        return rendered.lockScreen?.view.plainText ?? ""
    }

    @Test func aProgressCardSaysTheExitStatusOnce() {
        let attributes: JSONObject = ["title": "copy"]
        var state: JSONObject = ["value": 40, "total": 100]
        for (key, value) in ProgressCommand.Ending.command(.exited(1)).stateMembers { state[key] = value }
        let layout = Layout.default(for: "Progress", attributes: attributes, state: state)
        let card = LayoutRenderer(attributes: attributes, state: state, now: 0).render(layout).lockScreen?.view.plainText ?? ""
        #expect(card.contains("Failed · Exit status 1"))
        #expect(card.components(separatedBy: "xit status").count == 2, "\(card)")
    }

    @Test func runsCardShowsTheExitStatus() {
        #expect(Self.card(.exited(3)).contains("Failed · Exit status 3"))
        #expect(Self.card(.killed(signal: SIGTERM)).contains("Failed · Killed by SIGTERM"))
        let success = Self.card(.exited(0))
        #expect(success.contains("Succeeded") && !success.contains("Exit"))
    }
}

@Suite struct LineSplitterTests {
    @Test func carriageReturnsEndLinesAsProgressMetersDrawThem() {
        var lines = LineSplitter()
        #expect(lines.feed(Array("10%\r20%\r\n30".utf8)) == ["10%", "20%"])
        #expect(lines.feed(Array("%\n".utf8)) == ["30%"])
        #expect(lines.feed(Array("tail".utf8)) == [])
        #expect(lines.finish() == "tail")
        #expect(lines.finish() == nil)
    }

    @Test func anOverlongLineIsDroppedWhole() {
        var lines = LineSplitter()
        lines.limit = 8
        #expect(lines.feed(Array("123456789012 50%\nok 1/2\n".utf8)) == ["ok 1/2"])
        #expect(lines.feed(Array("1234567890".utf8)) == [])
        #expect(lines.finish() == nil)
    }
}
