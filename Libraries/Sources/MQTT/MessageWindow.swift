import Foundation

/// How sessions share a window of messages handed on and not yet done, so that one session's
/// flood cannot keep another's messages out. Pure: the caller blocks and wakes its threads.
///
/// A session may take a slot when one is free and
/// 1. it holds none: its first message goes in at once — the last `reserve` slots are kept
///    for such sessions, so no flood, nor several, can take them; or else
/// 2. more than `reserve` slots are free, and no other session that waits holds fewer than
///    it does: a freed slot goes to the waiting session that holds the fewest.
///
/// So the window fills beyond `capacity - reserve` only with sessions' first messages. A
/// session's first message goes in at once (while fewer than `reserve` other sessions' first
/// messages are in), a later one once fewer than `capacity - reserve` are in, no session
/// holding more taking a slot while it waits; a message handed on in order is behind at most
/// `capacity - 1` others.
public struct MessageWindow: Sendable, Hashable {
    public let capacity: Int
    public let reserve: Int
    /// Slots held, by session; a session holding none is absent.
    public private(set) var held: [String: Int] = [:]
    /// Threads waiting for a slot, by session; a session with none waiting is absent.
    public private(set) var waiting: [String: Int] = [:]
    public private(set) var total = 0

    /// The daemon's push window: 64 messages at once, 16 of them kept for sessions holding none.
    public static let pushes = MessageWindow(capacity: 64, reserve: 16)

    public init(capacity: Int, reserve: Int) {
        precondition(capacity > 0 && reserve >= 0 && reserve < capacity, "a window keeps fewer slots in reserve than it has")
        self.capacity = capacity
        self.reserve = reserve
    }

    /// Whether `session` may take a slot now.
    public func mayTake(_ session: String) -> Bool {
        admits(session, holding: held[session, default: 0])
    }

    /// Takes a slot for `session`, if it may: whether it did. The session's name is looked up
    /// once (a link process takes a slot for every message).
    public mutating func take(_ session: String) -> Bool {
        let index = held.index(forKey: session)
        guard admits(session, holding: index.map { held.values[$0] } ?? 0) else { return false }
        if let index { held.values[index] += 1 } else { held[session] = 1 }
        total += 1
        return true
    }

    /// The window's rule (its two cases, at the top), for `session` holding `mine` slots.
    private func admits(_ session: String, holding mine: Int) -> Bool {
        let free = capacity - total
        guard free > 0 else { return false }
        if mine == 0 { return true }
        guard free > reserve else { return false }
        return !waiting.contains { other, _ in other != session && held[other, default: 0] < mine }
    }

    /// One of `session`'s messages is done; a release of a session holding none (a message
    /// taken in a window before this one) is ignored.
    public mutating func release(_ session: String) {
        release(session, count: 1)
    }

    /// `count` of `session`'s messages are done, as `release(_:)` each; beyond what it holds,
    /// ignored.
    mutating func release(_ session: String, count: Int) {
        guard let index = held.index(forKey: session) else { return }
        let mine = held.values[index]
        if mine > count {
            held.values[index] = mine - count
            total -= count
        } else {
            held.remove(at: index)
            total -= mine
        }
    }

    /// A thread of `session` starts or stops waiting for a slot.
    public mutating func wait(_ session: String) { waiting[session, default: 0] += 1 }
    public mutating func stopWaiting(_ session: String) {
        guard let count = waiting[session] else { return }
        waiting[session] = count > 1 ? count - 1 : nil
    }
}

/// A `MessageWindow` for threads: each session's own thread (its network thread) waits in
/// `enter` until the window lets it take a slot, and whoever finishes a message `leave`s.
public final class MessageWindowGate: @unchecked Sendable {
    // @unchecked: `window` is only read and changed with `condition` locked.
    private let condition = NSCondition()
    private var window: MessageWindow

    public init(_ window: MessageWindow) {
        self.window = window
    }

    /// Waits until `session` may take a slot, and takes it.
    public func enter(_ session: String) {
        condition.lock()
        defer { condition.unlock() }
        guard !window.take(session) else { return }
        window.wait(session)
        while !window.take(session) { condition.wait() }
        window.stopWaiting(session)
        // Another waiter may take a slot now that this one no longer waits.
        condition.broadcast()
    }

    /// One of `session`'s messages is done: its slot is free.
    public func leave(_ session: String) {
        condition.lock()
        window.release(session)
        condition.broadcast()
        condition.unlock()
    }

    /// The window now, for tests and status.
    public var snapshot: MessageWindow {
        condition.lock()
        defer { condition.unlock() }
        return window
    }
}
