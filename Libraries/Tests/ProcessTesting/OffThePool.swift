package import Foundation

/// Runs `body` on a thread of its own and waits for it without holding a thread of Swift's
/// cooperative pool. swift-testing runs the tests in parallel on that pool, which has one
/// thread per CPU: a test that blocks one of them (a semaphore, a `waitpid`, a blocking
/// `recv`, a `usleep`) takes it from every other test's tasks and timers for as long as it
/// blocks, and on a loaded machine that turns into timeouts in unrelated tests.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `offThePool` for a body that cannot fail.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

extension DispatchSemaphore {
    /// Waits for the semaphore up to `timeout` on a thread of its own (see `offThePool`):
    /// whether it was signalled in that time.
    package func signalled(within timeout: Duration) async -> Bool {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return await offThePool { self.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success }
    }
}

extension Process {
    /// Waits for the process's exit on a thread of its own (see `offThePool`):
    /// `waitUntilExit` blocks the thread it runs on until Foundation has seen the exit.
    package func exited() async {
        await offThePool { self.waitUntilExit() }
    }
}
