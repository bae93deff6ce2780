/// The time left of a task, from the rate its progress has moved at: `island progress`'s ETA.
///
/// Pure: the caller gives each reading with its time (seconds on a monotonic clock). The rate
/// is measured over spans of at least `minimumSpan`, so a burst of lines read at one instant
/// says nothing by itself, and smoothed (an exponential moving average) so one slow or quick
/// span does not swing it. There is no estimate before `minimumSpans` such spans, nor at a
/// rate of zero; progress that goes back (a new total, a second phase) starts the measure
/// again.
struct ProgressEstimate: Sendable {
    var minimumSpan: Double = 0.5
    var minimumSpans = 3
    /// The weight of the newest span's rate.
    var smoothing = 0.3

    private var anchor: (fraction: Double, time: Double)?
    private var rate: Double?
    private var spans = 0
    private var latest: Double = 0

    init() {}

    /// A reading: `value` out of `total` at `time`. Readings that are not numbers, or of no
    /// total, are ignored.
    mutating func record(value: Double, total: Double, at time: Double) {
        guard value.isFinite, total.isFinite, total > 0, time.isFinite else { return }
        let fraction = min(1, max(0, value / total))
        guard let anchor, fraction >= anchor.fraction, time >= anchor.time else {
            self.anchor = (fraction, time)
            rate = nil
            spans = 0
            latest = fraction
            return
        }
        latest = fraction
        let span = time - anchor.time
        guard span >= minimumSpan else { return }
        let spanRate = (fraction - anchor.fraction) / span
        rate = rate.map { smoothing * spanRate + (1 - smoothing) * $0 } ?? spanRate
        spans += 1
        self.anchor = (fraction, time)
    }

    /// Seconds left at the latest reading: nil until enough has been seen, while the rate is
    /// zero, and once done. Never negative.
    var secondsLeft: Double? {
        guard spans >= minimumSpans, let rate, rate > 0, latest < 1 else { return nil }
        let seconds = (1 - latest) / rate
        return seconds.isFinite ? max(0, seconds) : nil
    }

    /// The longest time left said as a time; beyond it, "over a day".
    static let longest: Double = 24 * 3600

    /// Time left in words, short and bounded: "40 s left", "12 min left", "2 h 5 min left",
    /// "over a day left"; nil for nil.
    static func text(secondsLeft seconds: Double?) -> String? {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return nil }
        if seconds >= longest { return "over a day left" }
        if seconds < 57.5 {
            // To 5 s: a count that changes every reading is noise.
            return "\(max(5, Int((seconds / 5).rounded()) * 5)) s left"
        }
        let minutes = Int((seconds / 60).rounded())
        if minutes < 60 { return "\(minutes) min left" }
        let (hours, rest) = minutes.quotientAndRemainder(dividingBy: 60)
        return rest == 0 ? "\(hours) h left" : "\(hours) h \(rest) min left"
    }
}
