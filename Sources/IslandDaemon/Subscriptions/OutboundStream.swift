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
    func send(_ item: Item) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.closed else { return nil }
            state.queue.append(item)
            if state.queue.count > capacity { overflow(&state.queue) }
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

    /// Writes items as the peer takes them, until the stream closes. `encode` turns an item
    /// into reply parameters; it may await (a resync builds a fresh snapshot).
    func run(encode: @Sendable (Item) async -> JSONObject?) async {
        while let item = await next() {
            // Hold the item back while the peer is not reading: meanwhile newer items pile up
            // in the bounded queue and overflow coalesces them.
            while !responder.isWritable, !isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
            guard !isClosed else { return }
            if let parameters = await encode(item) {
                responder.reply(parameters, continues: true)
            }
        }
    }

    private func next() async -> Item? {
        while true {
            let item: Item?? = state.withLock { state in
                if let item = state.queue.popFirst() { return .some(item) }
                return state.closed ? .some(nil) : nil
            }
            if let item { return item }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.closed || !state.queue.isEmpty { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
