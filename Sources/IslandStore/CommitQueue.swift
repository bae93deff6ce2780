import Foundation

/// The hand-off between callers of `StoreWriter.commit` and its writer thread.
///
/// `@unchecked Sendable`: every stored property is read and written only while holding
/// `condition`, which also wakes the writer when work arrives.
final class CommitQueue: @unchecked Sendable {
    struct Waiter {
        enum Completion {
            case continuation(CheckedContinuation<Result<Void, StoreError>, Never>)
            case callback(@Sendable (Result<Void, StoreError>) -> Void)
        }

        var mutations: [StoreMutation]
        var completion: Completion

        func complete(_ result: Result<Void, StoreError>) {
            switch completion {
            case .continuation(let continuation): continuation.resume(returning: result)
            case .callback(let callback): callback(result)
            }
        }
    }

    private let condition = NSCondition()
    private var pending: [Waiter] = []
    private var closing = false
    private var drained = false
    private var paused = false
    private var transactions = 0

    /// Queues `waiter`; false once the queue is closing, and the waiter was not queued.
    func enqueue(_ waiter: Waiter) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return false }
        pending.append(waiter)
        // The writer only sleeps on an empty queue, so only the first arrival needs to wake it.
        if pending.count == 1 { condition.signal() }
        return true
    }

    /// Everything queued so far, as one group; blocks while there is nothing (or the queue is
    /// paused). Nil once the queue is closing and empty: the writer thread ends.
    func nextGroup() -> [Waiter]? {
        condition.lock()
        defer { condition.unlock() }
        while (pending.isEmpty || paused) && !closing {
            condition.wait()
        }
        if pending.isEmpty {
            drained = true
            condition.broadcast()
            return nil
        }
        let group = pending
        pending = []
        pending.reserveCapacity(group.count)
        return group
    }

    /// Refuses further work; with `wait`, returns once everything queued has been written.
    func close(wait: Bool) {
        condition.lock()
        defer { condition.unlock() }
        closing = true
        condition.broadcast()
        while wait && !drained {
            condition.wait()
        }
    }

    var isClosing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closing
    }

    func countTransaction() {
        condition.lock()
        transactions += 1
        condition.unlock()
    }

    var transactionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return transactions
    }

    // MARK: Test hooks: hold the writer so a test knows exactly which callers share a group.

    var pendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    func setPaused(_ value: Bool) {
        condition.lock()
        paused = value
        condition.broadcast()
        condition.unlock()
    }
}
