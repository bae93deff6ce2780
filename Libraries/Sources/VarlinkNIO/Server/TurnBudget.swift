import NIOCore

/// How many calls one connection may start before its event loop attends to the others. A
/// peer that pipelines cheap calls and reads its replies as fast as they come would otherwise
/// keep the loop in its handler (each flush makes it writable again, which starts more calls)
/// while every other connection on the loop waits.
struct TurnBudget {
    static let callsPerTurn = 64
    /// How long one connection's calls may keep the loop before others get a turn: once it has
    /// passed, the call being started is the turn's last.
    static let timePerTurn: TimeAmount = .milliseconds(5)

    private var calls = TurnBudget.callsPerTurn
    /// When the first call of the current turn started.
    private var started: NIODeadline?
    /// The budget ran out of time rather than calls: it comes back after its pause only, not
    /// with the next read, or a peer whose calls are each expensive would keep the loop.
    private var overTime = false

    var hasCalls: Bool { calls > 0 }

    /// Spends one call, started at `now`. When that spends the budget — 64 calls without a
    /// read in between (the peer only takes replies), or 5 ms of the loop whatever the reads —
    /// returns the pause after which to `refill` it: as long as the spending took, and at least
    /// 100 µs, since a task due sooner would run in the same tick, after the flushes that make
    /// the peer writable again, and the loop would never get back to its other connections. So
    /// a connection whose calls keep the loop busy gets at most half of it.
    mutating func spend(now: NIODeadline) -> TimeAmount? {
        let started = self.started ?? now
        self.started = started
        calls -= 1
        if calls > 0, now - started >= Self.timePerTurn {
            calls = 0
            overTime = true
        }
        guard calls == 0 else { return nil }
        return max(.microseconds(100), now - started)
    }

    /// A read completed: an I/O event, so the loop has been through its selector and this is a
    /// new turn — unless the budget ran out of time. Returns whether it was refilled.
    mutating func readCompleted() -> Bool {
        guard calls < Self.callsPerTurn, !overTime else { return false }
        refill()
        return true
    }

    mutating func refill() {
        calls = Self.callsPerTurn
        started = nil
        overTime = false
    }
}
