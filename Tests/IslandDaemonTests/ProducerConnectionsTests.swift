import IslandCore
import Testing
@testable import IslandDaemon

/// The producer-death policies' count of connections, per owner.
@Suite struct ProducerConnectionsTests {
    @Test func theFirstConnectionBringsAnOwnerBackAndTheLastOneGoneAppliesThePolicies() {
        var producers = ProducerConnections()
        let alice = ActivityOwner(app: "org.example.Coffee", uid: 1000)
        let bob = ActivityOwner(app: "org.example.Coffee", uid: 1001)
        let connected = [producers.connected(alice), producers.connected(alice), producers.connected(bob)]
        #expect(connected == [true, false, true], "a second connection of the same owner is not her first; another user's is his")
        #expect(producers.total == 3)
        let gone = [producers.disconnected(alice), producers.disconnected(alice)]
        #expect(gone == [false, true], "her last")
        #expect(producers.total == 1, "bob's keeps")
        let last = producers.disconnected(bob)
        #expect(last)
        #expect(producers.total == 0)
    }
}
