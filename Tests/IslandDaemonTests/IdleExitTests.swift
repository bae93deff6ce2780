import Testing
@testable import IslandDaemon

/// Idle exit sleeps while it is off, and a reload that turns it on wakes it.
@Suite struct IdleExitTests {
    @Test func turningItOnWakesTheWait() async {
        let (off, sawOff) = AsyncStream.makeStream(of: Void.self)
        let idleExit = IdleExit(seconds: nil, whileOff: { sawOff.yield() })
        let waiting = Task { await idleExit.wait(until: { true }) }
        // Asleep, off: only the change can wake it.
        for await _ in off { break }
        idleExit.after = 0.01
        await waiting.value
        #expect(idleExit.after == 0.01)
    }

    @Test func whileOffItWaitsUntilCancelled() async {
        let (off, sawOff) = AsyncStream.makeStream(of: Void.self)
        let idleExit = IdleExit(seconds: 0, whileOff: { sawOff.yield() })
        let waiting = Task { await idleExit.wait(until: { true }) }
        for await _ in off { break }
        waiting.cancel()
        await waiting.value
    }
}
