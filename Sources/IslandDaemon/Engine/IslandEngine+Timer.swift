import IslandCore
import Logging
import NIOCore

/// The engine's one timer, on its event loop: it wakes the engine at the earliest deadline
/// of the core's (deliveries, staleness, expiry, dismissal) and of the islands' (an
/// expansion timing out).
extension IslandEngine {
    func scheduleTimer() {
        // Runs after every change: no arrays, just the earliest of the core's and the islands'.
        // Read in place (`inout`): a getter called on the engine's stored value copies the
        // whole manager and presenter hub first, and destroys the copies after — most of what
        // this costs a lone message.
        var deadline = Self.nextWakeUp(of: &manager)
        if let next = Self.nextDeadline(of: &presenters), next < deadline ?? .infinity { deadline = next }
        switch pipeline.timerWanted(at: deadline, now: clock()) {
        case .keep:
            return
        case .cancel:
            timer?.cancel()
            timer = nil
        case .schedule(let milliseconds):
            timer?.cancel()
            timer = loop.scheduleTask(in: .milliseconds(milliseconds)) { [weak self] in
                self?.assumeIsolated { $0.timerFired() }
            }
        }
    }

    private static func nextWakeUp(of manager: inout ActivityManager) -> Double? { manager.nextWakeUp }

    private static func nextDeadline(of presenters: inout PresenterHub) -> Double? { presenters.nextDeadline }

    private func timerFired() {
        timer = nil
        pipeline.timerFired()
        // Nobody waits for the timer's changes: their commit may linger for company.
        advance(awaited: false)
    }

    /// Applies what fell due by now, and rearranges the islands whose expansion timed out.
    /// `done` runs once the changes are committed (or failed to be); `awaited`: whether a
    /// caller waits for that (`DecisionWaiter.isAwaited`).
    func advance(awaited: Bool = true, then done: @escaping @Sendable (isolated IslandEngine) -> Void = { _ in }) {
        let now = clock()
        apply(manager.advance(to: now), prepare: {}, awaited: awaited) { engine, result in
            if case .failure(let error) = result {
                engine.logger.error("could not store timer changes; retrying", metadata: ["error": "\(error)"])
            }
            done(engine)
        }
        presenters.advance(now: now)
        scheduleTimer()
        observer?.islandMayRest()
    }

    func advanceAndWait() async {
        let promise = loop.makePromise(of: Void.self)
        advance { _ in promise.succeed() }
        try? await promise.futureResult.get()
    }
}
