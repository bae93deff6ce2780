import Testing
@testable import IslandDaemon

/// Idle exit sleeps while it is off, and a reload that turns it on wakes it.
@Suite struct IdleExitTests {
    @Test func turningItOnWakesTheWait() async {
        let idleExit = IdleExit(seconds: nil)
        let waiting = Task { await idleExit.wait(until: { true }) }
        try? await Task.sleep(for: .milliseconds(50))
        idleExit.after = 0.01
        await waiting.value
        #expect(idleExit.after == 0.01)
    }

    @Test func whileOffItWaitsUntilCancelled() async {
        let idleExit = IdleExit(seconds: 0)
        let waiting = Task { await idleExit.wait(until: { true }) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await waiting.value
    }
}
