import Synchronization

/// The end of a thread (a session's, a link process's supervisor), which callers wait for,
/// each for at most a time of its own.
///
/// A continuation cannot be cancelled: waited for in a task group beside a timer, it keeps the
/// group — and so a `shutdown(timeout:)` — waiting until the thread ends, however long after
/// the timeout that is. Here the first of the end and the timeout resumes the waiter.
final class ThreadEnd: Sendable {
    private enum Waiter {
        case waiting(CheckedContinuation<Bool, Never>)
        /// Its time ran out before it was registered.
        case expired
    }

    private let state = Mutex<(ended: Bool, waiters: [UInt64: Waiter], next: UInt64)>((false, [:], 0))

    /// The thread has ended: every waiter is told, and later ones return at once.
    func end() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for case .waiting(let continuation) in waiters.values { continuation.resume(returning: true) }
    }

    /// Waits until the thread has ended or `timeout` has passed: whether it ended.
    func wait(timeout: Duration) async -> Bool {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.ended { return true }
                if case .expired = state.waiters[id] {
                    state.waiters[id] = nil
                    return false
                }
                state.waiters[id] = .waiting(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func expire(_ id: UInt64) {
        let waiting: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard !state.ended else { return nil }
            switch state.waiters[id] {
            case .waiting(let continuation):
                state.waiters[id] = nil
                return continuation
            case .expired:
                return nil
            case nil:
                state.waiters[id] = .expired
                return nil
            }
        }
        waiting?.resume(returning: false)
    }
}
