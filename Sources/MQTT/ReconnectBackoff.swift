/// How long to wait before the next connection attempt: doubling from `first` up to
/// `maximum`, each delay drawn between half and all of its step ("equal jitter"), so a fleet of
/// devices that lost the same broker does not return to it in one burst. Pure: the random draw
/// is an argument.
public struct ReconnectBackoff: Sendable, Hashable {
    /// Seconds before the first retry (before jitter).
    public var first: Double
    /// The longest wait, in seconds.
    public var maximum: Double

    public init(first: Double = 1, maximum: Double = 60) {
        precondition(first > 0 && maximum >= first, "a backoff needs 0 < first <= maximum")
        self.first = first
        self.maximum = maximum
    }

    /// The wait before retry number `attempt` (0 for the first retry after a failure), given a
    /// `random` number in 0...1.
    public func delay(attempt: Int, random: Double) -> Double {
        // 2^attempt overflows nothing: the exponent is capped long before a Double would.
        let step = min(maximum, first * Double(1 << min(max(attempt, 0), 30)))
        let fraction = min(max(random, 0), 1)
        return step / 2 + step / 2 * fraction
    }
}
