import Foundation

/// Writes mutations with group commit: each `commit` returns only once a transaction
/// containing its mutations has committed (and, with `synchronous = FULL`, reached the disk),
/// while callers arriving during one transaction's fsync share the next one.
///
/// Transactions run on one dedicated thread, not the Swift concurrency pool, so blocking
/// SQLite calls and fsyncs never take a cooperative thread away from the daemon.
public final class StoreWriter: Sendable {
    public let store: IslandStore
    let queue = CommitQueue()

    /// Starts the writer thread for `store`.
    public init(store: IslandStore) {
        self.store = store
        let thread = Thread { [queue, store] in
            while let group = queue.nextGroup() {
                let result: Result<Void, StoreError>
                do throws(StoreError) {
                    if try store.write(group.lazy.map(\.mutations)) { queue.countTransaction() }
                    result = .success(())
                } catch {
                    // One transaction, one outcome: every caller in the group shares it.
                    result = .failure(error)
                }
                for waiter in group {
                    waiter.complete(result)
                }
            }
        }
        thread.name = "islandd-store"
        thread.start()
    }

    deinit {
        // Lets the thread finish what is queued and end, instead of waiting forever.
        queue.close(wait: false)
    }

    /// Returns once `mutations` are committed durably, together with whatever other callers
    /// queued meanwhile. Within one caller, batches are applied in call order.
    ///
    /// Not cancellable: once queued, the mutations are committed whatever happens to the
    /// caller, and the caller learns the outcome.
    ///
    /// - Throws: `StoreError` `.writeFailed` when the group's transaction failed (none of its
    ///   mutations were applied), `.closed` after `close()`.
    public func commit(_ mutations: [StoreMutation]) async throws(StoreError) {
        let result = await withCheckedContinuation { continuation in
            enqueue(CommitQueue.Waiter(mutations: mutations, completion: .continuation(continuation)))
        }
        try result.get()
    }

    /// The same as `commit(_:)` without a task per call, for callers on an event loop:
    /// `completion` runs exactly once, on the writer thread (so it should only hand the
    /// result on, e.g. to the connection's event loop), after the group's transaction.
    public func commit(_ mutations: [StoreMutation], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        enqueue(CommitQueue.Waiter(mutations: mutations, completion: .callback(completion)))
    }

    private func enqueue(_ waiter: CommitQueue.Waiter) {
        if !queue.enqueue(waiter) {
            waiter.complete(.failure(closedError))
        }
    }

    /// Commits `mutations` in a transaction of their own on the calling thread, blocking it;
    /// for start-up and tests, where there is nothing to group with. Not ordered with commits
    /// still queued: do not mix the two for the same row.
    public func commitNow(_ mutations: [StoreMutation]) throws(StoreError) {
        guard !queue.isClosing else { throw closedError }
        if try store.write(CollectionOfOne(mutations)) { queue.countTransaction() }
    }

    /// Refuses further commits, waits until everything already queued is committed, and stops
    /// the writer thread. Blocks the calling thread while draining. Does not close the store.
    public func close() {
        queue.close(wait: true)
    }

    /// Transactions committed so far; with group commit, usually far fewer than `commit` calls.
    public var transactionCount: Int { queue.transactionCount }

    private var closedError: StoreError {
        StoreError(.closed, path: store.path, message: "the store writer is closed")
    }
}
