import IslandKit
import OrderedJSON
import Testing
import VarlinkCore

@Suite("The reconnection supervisor's decisions: when IslandConnection connects again, and when it gives up")
struct ReconnectionSupervisorTests {
    @Test("a daemon never reached is said at once; a refusal is final")
    func givesUp() {
        var supervisor = ReconnectionSupervisor()
        let unreached = supervisor.next(after: .unreachable)
        #expect(unreached == .giveUp, "nobody to wait for: the calls fail now")
        supervisor.connected()
        let refused = supervisor.next(after: .refused)
        #expect(refused == .giveUp, "no retry changes the daemon's mind")
    }

    @Test("a daemon reached once is waited for: 50 ms doubling to 2 s, starting over at each connection")
    func retries() {
        var supervisor = ReconnectionSupervisor()
        supervisor.connected()
        #expect(supervisor.everConnected)
        let waits = [ReconnectionSupervisor.Outcome.lost, .unreachable, .unreachable, .unreachable, .unreachable, .unreachable, .unreachable]
            .map { supervisor.next(after: $0) }
        #expect(waits == [50, 100, 200, 400, 800, 1600, 2000].map { .retry(after: .milliseconds($0)) })
        supervisor.connected()
        let lost = supervisor.next(after: .lost)
        #expect(lost == .retry(after: .milliseconds(50)))
    }

    @Test("the daemon's own errors are refusals; the transport's and the connection's are not")
    func outcomes() {
        #expect(ReconnectionSupervisor.Outcome(VarlinkError("org.island.Producer.NotEntitled")) == .refused)
        #expect(ReconnectionSupervisor.Outcome(VarlinkError("org.island.Connection.Closed")) == .unreachable)
        #expect(ReconnectionSupervisor.Outcome(VarlinkError("org.varlink.service.MethodNotFound")) == .unreachable)
        #expect(ReconnectionSupervisor.Outcome(VarlinkClientError.connectionClosed) == .unreachable)
    }
}
