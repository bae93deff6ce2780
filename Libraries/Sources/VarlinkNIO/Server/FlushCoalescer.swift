import NIOCore

/// When a connection's replies go to the socket: replies made together — by the calls of one
/// read, by a burst of pipelined calls, or handed over from other threads in one tick of the
/// loop — share one flush, so one write(2); a lone reply after a quiet spell goes at once.
struct FlushCoalescer {
    /// A connection that has flushed nothing for this long flushes a reply at once, unless
    /// the call that made it has more calls right behind it: a lone reply (a presenter's delta
    /// at 2,000 updates/s) would otherwise wait for the rest of the loop's turn, a quarter of
    /// its latency as measured. Replies in a burst still share one write(2).
    let idleBeforeImmediateFlush: TimeAmount

    enum Decision: Equatable {
        /// Nothing to flush, or a flush is already coming.
        case none
        case now
        /// Once the loop has run the tasks queued so far (then `endOfTick`).
        case atEndOfTick
    }

    /// Replies were written and not flushed.
    private(set) var hasUnflushed = false
    /// Inside a read, which flushes when it completes.
    private var reading = false
    /// A flush waits for the end of the loop's tick.
    private var flushQueued = false
    private var lastFlush = NIODeadline.uptimeNanoseconds(0)

    init(idleBeforeImmediateFlush: TimeAmount = .microseconds(200)) {
        self.idleBeforeImmediateFlush = idleBeforeImmediateFlush
    }

    mutating func wrote() {
        hasUnflushed = true
    }

    mutating func readStarted() {
        reading = true
    }

    /// The read is over; `flush(at:)` takes what it wrote.
    mutating func readCompleted() {
        reading = false
    }

    /// Replies were made outside a read. `callsFollow`: the call that made them has more calls
    /// of its connection right behind it, whose replies will want a write too.
    mutating func repliesMade(callsFollow: Bool, now: @autoclosure () -> NIODeadline) -> Decision {
        guard hasUnflushed, !reading, !flushQueued else { return .none }
        let now = now()
        if !callsFollow, now - lastFlush >= idleBeforeImmediateFlush {
            _ = flush(at: now)
            return .now
        }
        flushQueued = true
        return .atEndOfTick
    }

    /// The tick a flush waited for is over; `flush(at:)` takes what was written meanwhile.
    mutating func endOfTick() {
        flushQueued = false
    }

    /// Takes the unflushed replies for a flush at `now`: false when there are none.
    mutating func flush(at now: @autoclosure () -> NIODeadline) -> Bool {
        guard hasUnflushed else { return false }
        hasUnflushed = false
        lastFlush = now()
        return true
    }
}
