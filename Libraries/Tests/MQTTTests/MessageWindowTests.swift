import Foundation
import MQTT
import Synchronization
import Testing

/// How sessions share the window of messages handed on: a flood holds at most what the
/// reserve leaves, another session's first message goes in at once, and a freed slot goes to
/// the waiting session that holds the fewest.
@Suite struct MessageWindowTests {
    /// `session` takes as many slots as it may, one after another.
    static func flood(_ window: inout MessageWindow, _ session: String) -> Int {
        var taken = 0
        while window.take(session) { taken += 1 }
        return taken
    }

    @Test func oneSessionAloneHoldsAllButTheReserve() {
        var window = MessageWindow.pushes
        let taken = Self.flood(&window, "flood")
        #expect(taken == 64 - 16)
        #expect(window.total == 48)
    }

    @Test func anotherSessionsFirstMessageGoesInAtOnceWhateverFloods() {
        var window = MessageWindow.pushes
        _ = Self.flood(&window, "a")
        _ = Self.flood(&window, "b")
        // Two floods hold what the reserve leaves and the second one's first message: 49 of 64.
        #expect(window.total == 49 && window.held["a"] == 48 && window.held["b"] == 1)
        let took1 = window.take("quiet")
        #expect(took1 == true)
        // Its second waits like any session's that holds some.
        let took2 = window.take("quiet")
        #expect(took2 == false)
    }

    @Test func theReserveServesSixteenSessionsFirstMessagesAndNoMore() {
        var window = MessageWindow.pushes
        _ = Self.flood(&window, "flood")
        for n in 0..<16 {
            let took = window.take("app-\(n)")
            #expect(took)
        }
        let took3 = window.take("app-16")
        #expect(took3 == false, "the window is full")
        window.release("app-0")
        let took4 = window.take("app-16")
        #expect(took4 == true)
    }

    @Test func aFreedSlotGoesToTheWaitingSessionThatHoldsTheFewest() {
        var window = MessageWindow.pushes
        _ = Self.flood(&window, "flood")
        let took5 = window.take("quiet")
        #expect(took5 == true)
        // The flood holds 47 after one of its messages is done; both wait for the slot.
        window.release("flood")
        window.wait("flood")
        window.wait("quiet")
        #expect(window.total == 48)
        window.release("flood")
        #expect(!window.mayTake("flood"), "the flood holds more than the session that waits beside it")
        let took6 = window.take("quiet")
        #expect(took6 == true)
        window.stopWaiting("quiet")
        // Nobody holding fewer waits now: the flood takes the next freed slot.
        window.release("flood")
        let took7 = window.take("flood")
        #expect(took7 == true)
    }

    @Test func sessionsHoldingAsManyTakeInTurnAndNoneStalls() {
        var window = MessageWindow(capacity: 8, reserve: 2)
        for name in ["a", "b", "c"] { window.wait(name) }
        var rounds = 0
        while window.total < 6, rounds < 100 {
            for name in ["a", "b", "c"] where window.mayTake(name) { _ = window.take(name) }
            rounds += 1
        }
        #expect(window.total == 6, "the window fills up to its reserve")
        #expect(window.held.values.sorted() == [2, 2, 2])
    }

    @Test func aReleaseOfASessionHoldingNoneIsIgnored() {
        var window = MessageWindow(capacity: 4, reserve: 1)
        window.release("gone")
        #expect(window.total == 0 && window.held.isEmpty)
        let took8 = window.take("a")
        #expect(took8 == true)
        window.release("a")
        window.release("a")
        #expect(window.total == 0)
    }

    /// The gate blocks a flooding session's thread, not a quiet one's: the quiet session's
    /// message goes in while the flood waits, and the flood's thread goes on as slots free.
    @Test func theGateHoldsTheFloodsThreadAndLetsTheQuietSessionsMessageIn() async throws {
        let gate = MessageWindowGate(MessageWindow(capacity: 4, reserve: 1))
        let order = Mutex<[String]>([])
        let flood = Thread {
            for n in 0..<6 {
                gate.enter("flood")
                order.withLock { $0.append("flood-\(n)") }
            }
        }
        flood.start()
        // The flood holds 3 (4 less the reserve) and its thread waits for the 4th. Polled with
        // pauses, not `Task.yield()`: a yielding loop keeps a thread of the pool the other tests
        // run on busy until the flood's thread has been scheduled.
        while gate.snapshot.waiting["flood"] == nil { try await Task.sleep(for: .milliseconds(1)) }
        #expect(gate.snapshot.held["flood"] == 3)
        gate.enter("quiet")
        order.withLock { $0.append("quiet") }
        #expect(order.withLock { $0 } == ["flood-0", "flood-1", "flood-2", "quiet"])
        for _ in 0..<3 { gate.leave("flood") }
        gate.leave("quiet")
        while order.withLock({ $0.count }) < 7 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(order.withLock { $0 }.last == "flood-5")
    }
}
