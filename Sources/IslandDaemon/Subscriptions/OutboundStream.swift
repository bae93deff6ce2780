import DequeModule
import IslandJSON
import Synchronization
import Varlink

/// The replies of one streaming call, written by their own task so that a client that reads
/// slowly only ever delays itself.
///
/// Producers of items call `send`, which never waits. Items wait in a bounded queue; when the
/// peer stops reading, the queue fills and `overflow` decides what survives — presenters
/// collapse everything into one resync snapshot, watchers keep only the latest event of each
/// activity. Memory per subscriber stays bounded whatever the peer does.
final class OutboundStream<Item: Sendable>: Sendable {
    private struct State {
        var queue = Deque<Item>()
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
        /// Replies are being handed to the connection (by `run`, or by `send` directly); the
        /// other must wait, or the two could overtake each other.
        var writing = false
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let overflow: @Sendable (inout Deque<Item>) -> Void
    let responder: VarlinkResponder

    /// - Parameters:
    ///   - capacity: items that may wait before `overflow` runs.
    ///   - overflow: shrinks a queue that outgrew `capacity`; it must leave it no larger.
    init(responder: VarlinkResponder, capacity: Int, overflow: @escaping @Sendable (inout Deque<Item>) -> Void) {
        self.responder = responder
        self.capacity = capacity
        self.overflow = overflow
        responder.onCancel { [weak self] in self?.close() }
    }

    /// Queues an item for the peer. Never blocks.
    ///
    /// With `encoded`, the item's reply parameters as they stand now: when nothing is queued
    /// or being written and the peer is reading, they go to the connection at once instead of
    /// waking the stream's task — on the usual path, where presenters keep up, one thread hop
    /// per update and presenter less.
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
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.closed else { return nil }
            state.queue.append(item)
            if state.queue.count > capacity { overflow(&state.queue) }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
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
            state.closed = true
            state.queue.removeAll()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Writes items as the peer takes them, until the stream closes: everything queued by the
    /// time the peer can take more goes out in one hand-over. `encode` turns an item into reply
    /// parameters, or nil to skip it; it may await (a resync builds a fresh snapshot).
    func run(encode: @Sendable (Item) async -> VarlinkEncodedParameters?) async {
        while await waitForItems() {
            // Hold the items back while the peer is not reading: meanwhile newer items pile
            // up in the bounded queue and overflow coalesces them.
            while !responder.isWritable, !isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
            let items: [Item]? = state.withLock { state in
                // A direct write may have started meanwhile; wait for it to finish.
                guard !state.writing else { return nil }
                state.writing = true
                defer { state.queue.removeAll(keepingCapacity: true) }
                return state.closed ? [] : Array(state.queue)
            }
            guard let items else { continue }
            defer { finishWriting() }
            var batch: [VarlinkEncodedParameters] = []
            batch.reserveCapacity(items.count)
            for item in items {
                if let encoded = await encode(item) { batch.append(encoded) }
            }
            guard !isClosed else { return }
            responder.reply(continuing: batch)
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
