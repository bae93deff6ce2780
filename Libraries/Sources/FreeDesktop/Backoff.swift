/// How long to wait before retry number `attempt`: doubling from `first` up to `maximum`,
/// optionally jittered so that many clients that lost the same server do not return to it in
/// one burst. Pure: the caller counts attempts, draws the random number and sleeps.
public struct Backoff: Sendable, Hashable {
    public enum Jitter: Sendable, Hashable {
        /// Exactly the step.
        case none
        /// Between half and all of the step ("equal jitter").
        case equal
    }

    /// The wait before the first retry (before jitter).
    public var first: Duration
    /// The longest wait.
    public var maximum: Duration
    public var jitter: Jitter

    public init(first: Duration, maximum: Duration, jitter: Jitter = .none) {
        precondition(first > .zero && maximum >= first, "a backoff needs 0 < first <= maximum")
        self.first = first
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The wait before retry `attempt` (0 for the first retry after a failure), given a
    /// `random` number in 0...1 (clamped; unused without jitter).
    public func delay(attempt: Int, random: Double = 1) -> Duration {
        // The exponent is capped long before a Duration would overflow.
        let step = min(maximum, first * (1 << min(max(attempt, 0), 30)))
        switch jitter {
        case .none: return step
        case .equal: return step / 2 + (step / 2) * min(max(random, 0), 1)
        }
    }

    /// `delay(attempt:random:)` in seconds, for callers whose clocks count seconds in a `Double`.
    public func seconds(attempt: Int, random: Double = 1) -> Double {
        let (seconds, attoseconds) = delay(attempt: attempt, random: random).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The wait before retry `attempt`, drawing the jitter from `generator`: one draw, its top
    /// 53 bits as a fraction (not `Double.random(in:using:)`, whose rejection sampling can ask a
    /// fixed test generator for ever).
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        guard jitter != .none else { return delay(attempt: attempt) }
        return delay(attempt: attempt, random: Double(generator.next() >> 11) * 0x1p-53)
    }
}
