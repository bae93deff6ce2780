import DequeModule
import OrderedJSON
import Synchronization
import VarlinkCore

/// The replies of one streaming call, written by their own task so that a client that reads
/// slowly only ever delays itself.
///
/// Producers of items call `send`, which never waits. Items wait in a queue bounded in items
/// and in bytes, per stream and, through a `QueueBudget`, across every stream of the daemon:
/// `enqueue` merges an item into the queue (watchers keep only the latest event of each
/// activity), and once a bound is passed `overflow` shrinks the queue (presenters collapse
/// everything into one resync snapshot) or gives up, and the stream ends with
/// `OutputQueueFull`, closing its connection, so the peer starts afresh. Memory per
/// subscriber, and for all of them together, stays bounded whatever the peers do.
final class OutboundStream<Item: Sendable>: Sendable {
    private struct State {
        var queue = Deque<Item>()
        /// Bytes of the queued items, as `size` counts them (and as `budget` holds them).
        var bytes = 0
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
        /// Replies are being handed to the connection (by `run`, or by `send` directly); the
        /// other must wait, or the two could overtake each other.
        var writing = false
    }

    /// How a stream's queue is kept within its bounds.
    struct Policy: Sendable {
        /// Items that may wait.
        var capacity: Int
        /// Bytes that may wait.
        var byteLimit: Int
        /// What an item weighs while queued.
        var size: @Sendable (Item) -> Int
        /// Adds an item to the queue, merging it with what it supersedes.
        var enqueue: @Sendable (inout Deque<Item>, Item) -> Void = { $0.append($1) }
        /// Shrinks a queue over a bound; false if it cannot, and the stream must end.
        var overflow: @Sendable (inout Deque<Item>) -> Bool
    }

    private let state = Mutex(State())
    private let policy: Policy
    private let budget: QueueBudget?
    let responder: VarlinkResponder

    init(responder: VarlinkResponder, policy: Policy, budget: QueueBudget? = nil) {
        self.responder = responder
        self.policy = policy
        self.budget = budget
        responder.onCancel { [weak self] in self?.close() }
    }

    /// Queues an item for the peer. Never blocks.
    ///
    /// With `encoded`, the item's reply parameters as they stand now: when nothing is queued
    /// or being written and the peer is reading, they go to the connection at once instead of
    /// waking the stream's task — on the usual path, where the peer keeps up, one thread hop
    /// per item and peer less.
    func send(_ item: Item, encoded: VarlinkEncodedParameters? = nil) {
        if let encoded, responder.isWritable {
            let direct = state.withLock { state in
                guard !state.closed, state.queue.isEmpty, !state.writing else { return false }
                state.writing = true
                return true
            }
            if direct {
                responder.reply(continuing: encoded)
                finishWriting()
                return
            }
        }
        var overflowLimit: Int?
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.closed else { return nil }
            policy.enqueue(&state.queue, item)
            if let limit = fitBounds(&state) {
                overflowLimit = limit
                closeLocked(&state)
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
        if let overflowLimit {
            responder.fail(.outputQueueFull(limit: overflowLimit), closingConnection: true)
        }
    }

    /// Brings the queue within its bounds; the bound it cannot be brought within, if any.
    private func fitBounds(_ state: inout State) -> Int? {
        var shrunk = false
        while true {
            let bytes = state.queue.reduce(0) { $0 + policy.size($1) }
            let fitsBudget = budget?.resize(from: state.bytes, to: bytes) ?? true
            state.bytes = fitsBudget ? bytes : state.bytes
            let fitsStream = state.queue.count <= policy.capacity && bytes <= policy.byteLimit
            if fitsBudget, fitsStream { return nil }
            // One shrink must do: what it leaves over a bound is as small as the queue gets.
            guard !shrunk, policy.overflow(&state.queue) else {
                return fitsStream ? budget?.limit ?? policy.byteLimit : policy.byteLimit
            }
            shrunk = true
        }
    }

    private func finishWriting() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.writing = false
            guard !state.queue.isEmpty || state.closed else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    func close() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            closeLocked(&state)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func closeLocked(_ state: inout State) {
        state.closed = true
        state.queue.removeAll()
        budget?.release(state.bytes)
        state.bytes = 0
    }

    /// Bytes of queued items handed to the connection at once: once the peer reads, what the
    /// connection holds for it stays near its high-water mark, not the whole queue.
    static var handOverBytes: Int { 64 * 1024 }

    /// Writes items as the peer takes them, until the stream closes: what is queued by the time
    /// the peer can take more goes out in hand-overs of up to `handOverBytes`. `encode` turns
    /// an item into reply parameters, or nil to skip it; it may await (a resync builds a fresh
    /// snapshot).
    func run(encode: @Sendable (Item) async -> VarlinkEncodedParameters?) async {
        while await waitForItems() {
            // Hold the items back while the peer is not reading: meanwhile newer items pile
            // up in the bounded queue and merge or overflow.
            while !responder.isWritable, !isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
            let taken: (items: [Item], more: Bool)? = state.withLock { state in
                // A direct write may have started meanwhile; wait for it to finish.
                guard !state.writing else { return nil }
                state.writing = true
                var items: [Item] = []
                var bytes = 0
                while let first = state.queue.first, items.isEmpty || bytes + policy.size(first) <= Self.handOverBytes {
                    bytes += policy.size(first)
                    items.append(state.queue.removeFirst())
                }
                budget?.release(bytes)
                state.bytes -= bytes
                return state.closed ? ([], false) : (items, !state.queue.isEmpty)
            }
            guard let taken else { continue }
            var batch: [VarlinkEncodedParameters] = []
            batch.reserveCapacity(taken.items.count)
            for item in taken.items {
                if let encoded = await encode(item) { batch.append(encoded) }
            }
            guard !isClosed else {
                finishWriting()
                return
            }
            responder.reply(continuing: batch)
            finishWriting()
            // The connection counts the hand-over against its high-water mark once its loop
            // has taken it: give it that moment before asking whether the peer takes more.
            if taken.more { try? await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// Waits until an item is queued (true) or the stream closes (false).
    private func waitForItems() async -> Bool {
        while true {
            let ready: Bool? = state.withLock { state in
                if state.closed { return false }
                return state.queue.isEmpty || state.writing ? nil : true
            }
            if let ready { return ready }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.closed || (!state.queue.isEmpty && !state.writing) { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

/// Bytes queued for slow peers across every stream of a kind: however many streams a client
/// opens, together they hold at most `limit`.
final class QueueBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Changes a stream's share from `old` to `new` bytes if the total stays within the limit.
    func resize(from old: Int, to new: Int) -> Bool {
        let delta = new - old
        guard delta > 0 else {
            if delta < 0 { used.subtract(-delta, ordering: .relaxed) }
            return true
        }
        var current = used.load(ordering: .relaxed)
        while current + delta <= limit {
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + delta, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release(_ bytes: Int) {
        if bytes > 0 { used.subtract(bytes, ordering: .relaxed) }
    }

    var inUse: Int { used.load(ordering: .relaxed) }
}
