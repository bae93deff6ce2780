import Synchronization

/// The ends of commits nobody is told of — a broadcast channel's message asking no answers
/// (`DecisionWaiter.syncsCommit` false) while no app watches — which the store's writer leaves
/// here for the engine's loop instead of waking it for each (IslandEngine+Pipeline.swift,
/// `commit`): the loop takes them at its next turn that ends with a commit (mostly the next
/// message's, after its presenters were written to), when a commit somebody is told of comes
/// back, or when the timer it set as it handed them over fires, at the latest. The commit
/// itself is not delayed (design.md §8); only what follows it on the loop, which nobody waits
/// for: the link's `done` (the broker had its acknowledgement as the link process read the
/// message), the count of the message's answers (none wanted). A device whose channel messages
/// come within the timer's delay of each other wakes once a message instead of twice; and
/// where many devices share the CPUs (a channel's fan-out on one machine), no loop's second
/// wake-up runs beside the other devices' work before their presenters are shown the message.
///
/// The writer parks an end only while a timer is armed, so every parked end is taken; and at
/// most `limit` of them, so that a flood's ends (each frees a place in push's bound of 64
/// messages, `LinkLoopReader`, where the loop stops reading) never wait for the timer: the
/// one after them wakes the loop, which takes them all.
final class ParkedFinishes<Item: Sendable>: Sendable {
    static var limit: Int { 16 }
    private let state = Mutex<(armed: Bool, parked: [Item])>((false, []))

    /// On the loop, as it hands such commits to the writer: whether a timer must be set (none
    /// is armed).
    func arm() -> Bool {
        state.withLock { state in
            defer { state.armed = true }
            return !state.armed
        }
    }

    /// On the writer, once the commit is over: false when no timer is armed (it fired, or none
    /// was set) or `limit` are parked, and the end must be handed over now.
    func park(_ item: Item) -> Bool {
        state.withLock { state in
            guard state.armed, state.parked.count < Self.limit else { return false }
            state.parked.append(item)
            return true
        }
    }

    /// On the loop: what was parked, in the order the commits ended. `disarming`: the timer
    /// fired (or could not be set), so nothing more may be parked until the next is armed.
    func take(disarming: Bool) -> [Item] {
        state.withLock { state in
            if disarming { state.armed = false }
            guard !state.parked.isEmpty else { return [] }
            defer { state.parked = [] }
            return state.parked
        }
    }
}
