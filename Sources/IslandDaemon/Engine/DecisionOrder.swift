import DequeModule
import IslandCore

/// Numbers the engine's decisions as they are made and hands their events back in that
/// order once committed. Commits complete in order, but the calls waiting for them may resume
/// in any order: finishing strictly in the order of decision is what keeps watchers from
/// hearing an older state after a newer one.
struct DecisionOrder {
    /// The number of the latest decision.
    private(set) var lastDecided: UInt64 = 0
    /// The number of the latest decision handed back by `nextToFinish`.
    private(set) var lastFinished: UInt64 = 0
    /// The events of each decision after `lastFinished`, in order: nil until it is committed.
    /// A queue rather than a table by number: every update adds one and takes one.
    private var waiting = Deque<[ActivityEvent]?>()

    /// The number of a new decision.
    mutating func decide() -> UInt64 {
        lastDecided += 1
        waiting.append(nil)
        return lastDecided
    }

    /// Decision `number` is committed with `events`: none if its commit failed, so that it
    /// still takes its turn.
    mutating func commit(_ number: UInt64, events: [ActivityEvent]) {
        waiting[Int(number - lastFinished - 1)] = events
    }

    /// The events of the next decision in order, once it is committed; nil until then.
    mutating func nextToFinish() -> [ActivityEvent]? {
        guard let next = waiting.first, let events = next else { return nil }
        waiting.removeFirst()
        lastFinished += 1
        return events
    }
}
