import FreeDesktop

/// How long to wait before the next connection attempt: FreeDesktop's `Backoff` with equal
/// jitter, so a fleet of devices that lost the same broker does not return to it in one burst,
/// and the rule of when it starts again (`stableAfter`), in the seconds MQTT's configuration
/// speaks. Pure: the random draw is an argument.
public struct ReconnectBackoff: Sendable, Hashable, Codable {
    /// Seconds before the first retry (before jitter).
    public var first: Double
    /// The longest wait, in seconds.
    public var maximum: Double
    /// Seconds a connection must have stayed up for the backoff to start again from `first`
    /// when it ends: a broker that accepts and then drops every connection (or another client
    /// taking the session, with the same client id) is retried ever more slowly, not at once.
    public var stableAfter: Double

    public init(first: Double = 1, maximum: Double = 60, stableAfter: Double = 30) {
        precondition(first > 0 && maximum >= first, "a backoff needs 0 < first <= maximum")
        self.first = first
        self.maximum = maximum
        self.stableAfter = stableAfter
    }

    /// The wait before retry number `attempt` (0 for the first retry after a failure), given a
    /// `random` number in 0...1.
    public func delay(attempt: Int, random: Double) -> Double {
        Backoff(first: .seconds(first), maximum: .seconds(maximum), jitter: .equal).seconds(attempt: attempt, random: random)
    }
}

/// When to try again, across connections: the backoff's step grows with every attempt that
/// failed, and every connection that ended before it had stayed up `stableAfter` seconds; only
/// a connection that lasted resets it. Pure: the times (of a monotonic clock) and the random
/// draw are arguments.
public struct ReconnectSchedule: Sendable, Hashable {
    public let backoff: ReconnectBackoff
    /// Attempts since the last connection that lasted: the backoff's step.
    public private(set) var failures = 0
    private var connectedAt: Double?

    public init(backoff: ReconnectBackoff) {
        self.backoff = backoff
    }

    /// The broker accepted a connection at `now`.
    public mutating func connected(at now: Double) {
        connectedAt = now
    }

    /// The attempt, or the connection, ended at `now`: the wait before the next attempt.
    public mutating func ended(at now: Double, random: Double) -> Double {
        if let connectedAt, now - connectedAt >= backoff.stableAfter { failures = 0 }
        connectedAt = nil
        defer { failures += 1 }
        return backoff.delay(attempt: failures, random: random)
    }
}
