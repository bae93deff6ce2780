import IslandCore

/// The pipeline's bookkeeping as a value: the order decisions finish in, the commits and the
/// timer's work batched per turn of the loop, how long commits nobody waits for linger, and
/// the timer's deadline. The engine tells it what happened (a decision made, a turn ended, a
/// commit over, a timer fired) and carries out the steps it gets back
/// (IslandEngine+Pipeline.swift, IslandEngine+Timer.swift). No I/O and no clock — the time is
/// an argument — so every sequence is tested without a loop or a store, as
/// `ServerConnectionStateMachine` is for a connection.
///
/// `Commit` is what one decision hands the store (its rows, and what to do once they are
/// committed): the machine only keeps it in order.
struct PipelineStateMachine<Commit> {
    /// How long, and up to how many rows, the commits nobody waits for (a `oneway` call's, the
    /// timer's) wait for company before they go to the store; a commit somebody waits for
    /// takes them with it at the end of its turn, in order, however young they are.
    struct Linger: Equatable {
        /// The longest a commit lingers, in seconds.
        var seconds: Double
        /// Once this many rows linger they go at the end of the turn.
        var rows: Int

        /// A millisecond is what a watcher may hear of a change later, and what a crash may
        /// take of the changes nobody was told of: far below anything a person sees (a frame is
        /// 16.7 ms), while at a few thousand updates a second it lets two or more share a
        /// commit, one writer wake-up, one `fdatasync` and one completion. 32 rows is half of a
        /// connection's window of unanswered calls (`maximumQueuedCalls`, 64), and a lingering
        /// `oneway` call stays unanswered until its commit: a producer pipelining as fast as it
        /// can fills a group and sends it on long before its window closes, and never waits for
        /// the millisecond. It bounds what lingers in memory too.
        static var standard: Linger { Linger(seconds: 0.001, rows: 32) }
        /// Every commit goes at the end of its turn: for shutting down, when nothing is left to
        /// wait for.
        static var never: Linger { Linger(seconds: 0, rows: 0) }
    }

    /// What the engine does next, after a decision.
    enum TurnStep: Equatable {
        /// Queue `endTurn` on the loop, to run once the reads of this turn are handled.
        case queueEndOfTurn
        /// Nothing: `endTurn` is queued already.
        case none
    }

    /// What the engine does once per turn of the loop.
    struct EndOfTurn {
        /// The commits due, in the order of decision, for the store together: one hand-off
        /// each way per turn, not per change, for a producer that pipelines its calls. Empty
        /// while the turn's commits are all of changes nobody waits for, lingering.
        var commits: [Commit]
        /// Changes were shown that may move the timer's deadline: work it out again. Once
        /// per turn, however many changes it decided: the timers are seconds apart, and their
        /// earliest deadline is not worth working out again for every pipelined update.
        var rescheduleTimer: Bool
        /// What to do with the linger's timer.
        var lingerTimer: LingerTimerStep
    }

    /// What the engine does with the timer that ends a linger (`lingerTimerFired`).
    enum LingerTimerStep: Equatable {
        /// Leave it as it is (set, or not set and not wanted).
        case keep
        /// Set it to fire after `nanoseconds`.
        case schedule(nanoseconds: Int64)
        /// Cancel it: what lingered went with a commit due.
        case cancel
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

    /// The bounds of lingering; `.never` once `stopLingering` ran.
    private(set) var linger: Linger
    /// Decisions in the order they were made, until they finish in that order.
    private var decisions = DecisionOrder()
    /// The commits not yet handed to the store, in the order of decision: this turn's, and
    /// those lingering from turns before.
    private var pending: [Commit] = []
    /// The rows of `pending`.
    private var pendingRows = 0
    /// Somebody waits for one of `pending`: they all go at the end of the turn.
    private var pendingAwaited = false
    /// When the oldest of `pending` was queued; nil while nothing is pending.
    private var pendingSince: Double?
    /// The linger's timer fired while `endTurn` was queued: that turn's end takes everything.
    private var lingerExpired = false
    /// The linger's timer is set.
    private var lingerTimerSet = false
    /// `endTurn` is queued on the loop.
    private var endOfTurnQueued = false
    /// Changes were shown that may move the timer's deadline.
    private var timerStale = false
    /// When the timer is set to fire; nil while it is not.
    private(set) var timerDeadline: Double?

    init(linger: Linger = .standard) {
        self.linger = linger
    }

    // MARK: Decisions

    /// A decision is made and shown to presenters: its number, by which it finishes in order.
    mutating func decide() -> (decision: UInt64, step: TurnStep) {
        timerStale = true
        return (decisions.decide(), endOfTurn())
    }

    /// Queues a decision's commit of `rows` rows at `now`. `awaited`: somebody waits to hear
    /// that it is committed (a call's reply), so it goes at the end of this turn, and every
    /// commit lingering before it with it; otherwise it may linger (`Linger`).
    mutating func queue(_ commit: Commit, rows: Int, awaited: Bool, now: @autoclosure () -> Double) -> TurnStep {
        pending.append(commit)
        pendingRows += rows
        if awaited { pendingAwaited = true }
        if pendingSince == nil { pendingSince = now() }
        return endOfTurn()
    }

    private mutating func endOfTurn() -> TurnStep {
        guard !endOfTurnQueued else { return .none }
        endOfTurnQueued = true
        return .queueEndOfTurn
    }

    /// The queued `endTurn` runs at `now`: what to do for the changes decided in the turn.
    mutating func endTurn(now: @autoclosure () -> Double) -> EndOfTurn {
        endOfTurnQueued = false
        defer { timerStale = false }
        guard let since = pendingSince else {
            return EndOfTurn(commits: [], rescheduleTimer: timerStale, lingerTimer: cancelLingerTimer())
        }
        // The clock is read only when nothing else makes the commits due.
        let due = pendingAwaited || lingerExpired || pendingRows >= linger.rows
        let waited = due ? 0 : now() - since
        guard !due, waited < linger.seconds else {
            return EndOfTurn(commits: takeCommits(), rescheduleTimer: timerStale, lingerTimer: cancelLingerTimer())
        }
        guard !lingerTimerSet else { return EndOfTurn(commits: [], rescheduleTimer: timerStale, lingerTimer: .keep) }
        lingerTimerSet = true
        // Set once, from the oldest: what lingers after it goes with it. Never for longer than
        // the bound, should the clock have gone back.
        let left = Int64((min(linger.seconds, linger.seconds - waited) * 1e9).rounded(.up))
        return EndOfTurn(commits: [], rescheduleTimer: timerStale, lingerTimer: .schedule(nanoseconds: max(1, left)))
    }

    private mutating func cancelLingerTimer() -> LingerTimerStep {
        guard lingerTimerSet else { return .keep }
        lingerTimerSet = false
        return .cancel
    }

    /// The linger's timer fired: what lingered, now due — or nothing, when the end of a turn
    /// is queued and takes it then, after the presenters' writes of that turn.
    mutating func lingerTimerFired() -> [Commit] {
        lingerTimerSet = false
        guard !endOfTurnQueued else {
            lingerExpired = true
            return []
        }
        return takeCommits()
    }

    /// Every commit not yet handed to the store, now, lingering or not: for a commit that
    /// must come after them (a layout's), and for shutting down. The linger's timer, if set,
    /// finds nothing when it fires.
    mutating func takeCommits() -> [Commit] {
        pendingRows = 0
        pendingAwaited = false
        pendingSince = nil
        lingerExpired = false
        guard !pending.isEmpty else { return [] }
        // The next turn's start at the size this one reached: one allocation per turn rather
        // than one at each doubling, for a producer that pipelines 64 updates.
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    /// Nothing lingers from now on (the daemon is stopping): every commit not yet handed to
    /// the store, now; later ones go at the end of their turns.
    mutating func stopLingering() -> [Commit] {
        linger = .never
        return takeCommits()
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
