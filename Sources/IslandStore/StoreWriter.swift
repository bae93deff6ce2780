import Synchronization

/// Writes mutations with group commit: each `commit` returns only once a transaction
/// containing its mutations has committed (and, with `synchronous = FULL`, reached the disk),
/// while callers arriving during one transaction's fsync share the next one.
///
/// A caller may say its mutations need not wait for the disk (`syncing: false`): a group made
/// only of such commits is committed with `synchronous = NORMAL`, written to the log without
/// its `fdatasync` — kept through the process's death, lost only with the machine's power
/// before a later commit that syncs (which holds every commit before it). One caller that
/// needs the disk makes its whole group sync. Who may say so is docs/design.md §8's rule.
///
/// Transactions run on the database's own serial queue (`DatabaseQueue.async`), on a
/// Dispatch thread, never on the Swift concurrency pool, so blocking SQLite calls and fsyncs
/// take no cooperative thread away from the daemon. Commits queue here meanwhile, and one
/// asynchronous write takes whatever has queued by the time it runs: a group.
package final class StoreWriter: Sendable {
    package let store: IslandStore

    private struct Waiter {
        enum Completion {
            case continuation(CheckedContinuation<Result<Void, StoreError>, Never>)
            case callback(@Sendable (Result<Void, StoreError>) -> Void)
        }

        var mutations: [StoreMutation]
        /// The commit waits for the disk.
        var syncing: Bool
        var completion: Completion

        func complete(_ result: Result<Void, StoreError>) {
            switch completion {
            case .continuation(let continuation): continuation.resume(returning: result)
            case .callback(let callback): callback(result)
            }
        }
    }

    private struct Queue {
        var pending: [Waiter] = []
        /// An asynchronous write is on the database's queue and will take `pending`.
        var scheduled = false
        var closing = false
        /// Test hook: hold commits back, so a test knows exactly which callers share a group.
        var paused = false
        var transactions = 0
    }

    private let queue = Mutex(Queue())

    package init(store: IslandStore) {
        self.store = store
    }

    /// Returns once `mutations` are committed durably, together with whatever other callers
    /// queued meanwhile. Within one caller, batches are applied in call order.
    ///
    /// Not cancellable: once queued, the mutations are committed whatever happens to the
    /// caller, and the caller learns the outcome.
    ///
    /// - Throws: `StoreError` `.writeFailed` when the group's transaction failed (none of its
    ///   mutations were applied), `.closed` after `close()`.
    package func commit(_ mutations: [StoreMutation]) async throws(StoreError) {
        let result = await withCheckedContinuation { continuation in
            enqueue(Waiter(mutations: mutations, syncing: true, completion: .continuation(continuation)))
        }
        try result.get()
    }

    /// The same as `commit(_:)` without a task per call, for callers on an event loop:
    /// `completion` runs exactly once, on the database's queue (so it should only hand the
    /// result on, e.g. to the connection's event loop), after the group's transaction.
    /// `syncing: false`: the commit need not wait for the disk (see the type's description);
    /// it still waits for the log's write, so it survives the process's death.
    package func commit(
        _ mutations: [StoreMutation], syncing: Bool = true, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        enqueue(Waiter(mutations: mutations, syncing: syncing, completion: .callback(completion)))
    }

    private func enqueue(_ waiter: Waiter) {
        let schedule: Bool? = queue.withLock { queue in
            guard !queue.closing else { return nil }
            queue.pending.append(waiter)
            guard !queue.scheduled, !queue.paused else { return false }
            queue.scheduled = true
            return true
        }
        switch schedule {
        case nil: waiter.complete(.failure(closedError))
        case true?: store.database.async { [self] db in commitPending(db) }
        case false?: break
        }
    }

    /// Commits everything queued so far in one transaction, and tells each caller.
    private func commitPending(_ db: SQLiteConnection) {
        let group = queue.withLock { queue in
            // Commits from now on wait for the next write.
            queue.scheduled = false
            defer { queue.pending = [] }
            return queue.pending
        }
        guard !group.isEmpty else { return }
        let result: Result<Void, StoreError>
        do throws(StoreError) {
            let syncing = group.contains { $0.syncing }
            if try store.write(group.lazy.map(\.mutations), in: db, syncing: syncing) { queue.withLock { $0.transactions += 1 } }
            result = .success(())
        } catch {
            // One transaction, one outcome: every caller in the group shares it.
            result = .failure(error)
        }
        for waiter in group {
            waiter.complete(result)
        }
    }

    /// Commits `mutations` in a transaction of their own on the calling thread, blocking it;
    /// for start-up and tests, where there is nothing to group with. Not ordered with commits
    /// still queued: do not mix the two for the same row.
    package func commitNow(_ mutations: [StoreMutation]) throws(StoreError) {
        guard !isClosing else { throw closedError }
        if try store.write(CollectionOfOne(mutations)) { queue.withLock { $0.transactions += 1 } }
    }

    /// Refuses further commits, waits until everything already queued is committed. Blocks the
    /// calling thread while draining. Does not close the store.
    package func close() {
        queue.withLock { queue in
            queue.closing = true
            queue.paused = false
        }
        // The database's queue is serial: this runs after every write queued before it, and
        // commits what a pause held back.
        store.database.sync { db in commitPending(db) }
    }

    /// Transactions committed so far; with group commit, usually far fewer than `commit` calls.
    package var transactionCount: Int { queue.withLock { $0.transactions } }

    private var isClosing: Bool { queue.withLock { $0.closing } }

    private var closedError: StoreError {
        StoreError(.closed, path: store.path, message: "the store writer is closed")
    }

    // MARK: Test hooks: hold commits so a test knows exactly which callers share a group.

    var pendingCount: Int { queue.withLock { $0.pending.count } }

    func setPaused(_ paused: Bool) {
        let resume = queue.withLock { queue in
            queue.paused = paused
            guard !paused, !queue.pending.isEmpty, !queue.scheduled else { return false }
            queue.scheduled = true
            return true
        }
        if resume { store.database.async { [self] db in commitPending(db) } }
    }
}
