/// Which of the targets a presenter shows may be clicked: only one the user could have seen
/// where it is for at least `settleTime` (the rule browsers and Android apply against
/// tap-jacking).
///
/// Without it, one app acts for another: app B sends an alerting update 150 ms before the user
/// clicks app A's pill, and B's pill takes the click while the screen still shows A's; or B
/// lowers its relevance just before a click on its own button and moves A's card, with A's
/// "Confirm", under the pointer. The presenter records each frame it actually puts on screen
/// (`shown`), and asks before acting on a click (`isActionable`): a target that appeared, or
/// moved, less than `settleTime` ago does nothing (a presenter may still, say, expand the
/// island, which acts for no app).
///
/// `Target` says *what* a click would act on (an activity and its action; the same action of
/// another activity is another target) and `Placement` *where* it is drawn (a rectangle, a
/// column range, a row). Pure: the caller passes the time, in seconds of any monotonic clock.
package struct ClickGuard<Target: Hashable & Sendable, Placement: Hashable & Sendable>: Sendable {
    /// How long a target must have stood still in view before it may be clicked. 500 ms is
    /// Chromium's delay for permission prompts and long enough to notice a change; short enough
    /// that a user who aims at what they see never waits for it.
    package static var defaultSettleTime: Double { 0.5 }

    package let settleTime: Double

    private struct Seen: Sendable {
        var placement: Placement
        var since: Double
    }

    private var seen: [Target: Seen] = [:]

    package init(settleTime: Double = Self.defaultSettleTime) {
        self.settleTime = settleTime
    }

    /// The targets on screen from `now` on, each where it is drawn. A target not in the frame
    /// is forgotten (so one that comes back is new again); one whose placement changed starts
    /// its wait again.
    package mutating func shown(_ frame: [Target: Placement], at now: Double) {
        var next: [Target: Seen] = [:]
        next.reserveCapacity(frame.count)
        for (target, placement) in frame {
            if let earlier = seen[target], earlier.placement == placement {
                next[target] = earlier
            } else {
                next[target] = Seen(placement: placement, since: now)
            }
        }
        seen = next
    }

    /// Nothing is on screen (the presenter hid, or lost its daemon): every target is new when
    /// it appears again.
    package mutating func clear() {
        seen.removeAll()
    }

    /// Whether a click at `now` may act on `target`: it is on screen and has stood still there
    /// for `settleTime`.
    package func isActionable(_ target: Target, at now: Double) -> Bool {
        guard let entry = seen[target] else { return false }
        return now - entry.since >= settleTime
    }

    /// When `target` becomes actionable if nothing changes (nil when it is not on screen); a
    /// presenter can say so, or tests can wait for it.
    package func actionableAt(_ target: Target) -> Double? {
        seen[target].map { $0.since + settleTime }
    }

    /// The targets on screen that a click at `now` may act on.
    package func actionable(at now: Double) -> [Target] {
        seen.compactMap { target, entry in now - entry.since >= settleTime ? target : nil }
    }

    /// The earliest time after `now` at which a target on screen becomes actionable if nothing
    /// changes (nil when none is waiting): when a presenter next has something to say.
    package func nextActionable(after now: Double) -> Double? {
        seen.values.lazy.map { $0.since + settleTime }.filter { $0 > now }.min()
    }
}
