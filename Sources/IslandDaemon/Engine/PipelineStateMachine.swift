import IslandCore

/// The pipeline's bookkeeping as a value: the order decisions finish in, the commits and the
/// timer's work batched per turn of the loop, and the timer's deadline. The engine tells it
/// what happened (a decision made, a turn ended, a commit over, the timer fired) and carries
/// out the steps it gets back (IslandEngine+Pipeline.swift, IslandEngine+Timer.swift). No
/// I/O and no clock — the time is an argument — so every sequence is tested without a loop or
/// a store, as `ServerConnectionStateMachine` is for a connection.
///
/// `Commit` is what one decision hands the store (its rows, and what to do once they are
/// committed): the machine only keeps it in order.
struct PipelineStateMachine<Commit> {
    /// What the engine does next, after a decision.
    enum TurnStep: Equatable {
        /// Queue `endTurn` on the loop, to run once the reads of this turn are handled.
        case queueEndOfTurn
        /// Nothing: `endTurn` is queued already.
        case none
    }

    /// What the engine does once per turn of the loop.
    struct EndOfTurn {
        /// The turn's commits in the order of decision, for the store together: one hand-off
        /// each way per turn, not per change, for a producer that pipelines its calls.
        var commits: [Commit]
        /// Changes were shown that may move the timer's deadline: work it out again. Once
        /// per turn, however many changes it decided: the timers are seconds apart, and their
        /// earliest deadline is not worth working out again for every pipelined update.
        var rescheduleTimer: Bool
    }

    /// What the engine does with its one timer.
    enum TimerStep: Equatable {
        /// The timer is set for that deadline already (or none is wanted, and none is set).
        case keep
        /// Cancel the timer; none is wanted.
        case cancel
        /// Cancel the timer, if one is set, and set it to fire after `milliseconds`.
        case schedule(milliseconds: Int64)
    }

    /// Decisions in the order they were made, until they finish in that order.
    private var decisions = DecisionOrder()
    /// The commits of the decisions made in this turn of the loop, in order.
    private var turnCommits: [Commit] = []
    /// `endTurn` is queued on the loop.
    private var endOfTurnQueued = false
    /// Changes were shown that may move the timer's deadline.
    private var timerStale = false
    /// When the timer is set to fire; nil while it is not.
    private(set) var timerDeadline: Double?

    // MARK: Decisions

    /// A decision is made and shown to presenters: its number, by which it finishes in order.
    mutating func decide() -> (decision: UInt64, step: TurnStep) {
        timerStale = true
        return (decisions.decide(), endOfTurn())
    }

    /// Queues the rows of a decision for the end of the turn.
    mutating func queue(_ commit: Commit) -> TurnStep {
        turnCommits.append(commit)
        return endOfTurn()
    }

    private mutating func endOfTurn() -> TurnStep {
        guard !endOfTurnQueued else { return .none }
        endOfTurnQueued = true
        return .queueEndOfTurn
    }

    /// The queued `endTurn` runs: what to do for the changes decided in the turn.
    mutating func endTurn() -> EndOfTurn {
        endOfTurnQueued = false
        defer { timerStale = false }
        return EndOfTurn(commits: takeCommits(), rescheduleTimer: timerStale)
    }

    /// The commits queued so far, now: for a commit that must come after them (a layout's).
    mutating func takeCommits() -> [Commit] {
        guard !turnCommits.isEmpty else { return [] }
        // The next turn's start at the size this one reached: one allocation per turn rather
        // than one at each doubling, for a producer that pipelines 64 updates.
        defer { turnCommits.removeAll(keepingCapacity: true) }
        return turnCommits
    }

    /// Decision `decision`'s commit is over: committed with `events`, or with none if it
    /// failed, so that it still takes its turn.
    mutating func committed(_ decision: UInt64, events: [ActivityEvent]) {
        decisions.commit(decision, events: events)
    }

    /// The events of the next decision to finish, in the order of decision, once it is
    /// committed; nil while the next one waits for its commit.
    mutating func nextToFinish() -> [ActivityEvent]? {
        decisions.nextToFinish()
    }

    // MARK: The timer

    /// The earliest deadline of the core's and the islands' is `deadline` (nil: none) at
    /// `now`: what to do with the timer. A delay rounds up, so the timer never fires before
    /// its deadline and finds nothing due.
    mutating func timerWanted(at deadline: Double?, now: @autoclosure () -> Double) -> TimerStep {
        guard deadline != timerDeadline else { return .keep }
        timerDeadline = deadline
        guard let deadline else { return .cancel }
        return .schedule(milliseconds: Int64(max(0, deadline - now()) * 1000) + 1)
    }

    /// The timer fired: none is set until the engine asks again.
    mutating func timerFired() {
        timerDeadline = nil
    }
}
