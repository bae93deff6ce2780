import Synchronization
import Testing

import SelfWake

#if canImport(Glibc)
import Glibc
#endif

@Suite("A signal watch catches a signal from the moment it is made", .serialized)
struct SignalWatchTests {
    /// Waits for `condition` (a liveness bound, not a measurement: it returns once it holds).
    private func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    @Test("a signal sent the moment the watch is made reaches it, every time")
    func aSignalSentAtOnceIsCaught() async throws {
        // SIGUSR1's default action ends the process: a signal the watch missed would end the
        // test run, or (ignored meanwhile, as a Dispatch source needs) never arrive.
        for round in 1...200 {
            let received = Mutex(0)
            let watch = SignalWatch([SIGUSR1]) { _ in received.withLock { $0 += 1 } }
            kill(getpid(), SIGUSR1)
            #expect(try await eventually { received.withLock { $0 } == 1 }, "round \(round): the signal was lost")
            _ = watch
        }
    }

    @Test("each watch of a signal gets it, and a watch let go gets no more")
    func watchesShareASignal() async throws {
        let first = Mutex<[Int32]>([]), second = Mutex<[Int32]>([])
        let one = SignalWatch([SIGUSR2]) { number in first.withLock { $0.append(number) } }
        var two: SignalWatch? = SignalWatch([SIGUSR2, SIGUSR1]) { number in second.withLock { $0.append(number) } }
        kill(getpid(), SIGUSR2)
        #expect(try await eventually { first.withLock { $0 } == [SIGUSR2] && second.withLock { $0 } == [SIGUSR2] })
        two = nil
        kill(getpid(), SIGUSR2)
        #expect(try await eventually { first.withLock { $0 }.count == 2 })
        // The marker: the first watch saw the second signal, so the relay has read it.
        #expect(second.withLock { $0 } == [SIGUSR2])
        _ = (one, two)
    }
}
