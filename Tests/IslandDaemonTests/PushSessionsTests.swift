import IslandCore
import Logging
import MQTT
import Synchronization
import Testing

@testable import IslandDaemon

/// One MQTT session per app holding tokens: a broker bounds and drops per session, so each app's
/// pushes must wait in a queue of their own.
@Suite struct PushSessionsTests {
    /// A session that records what it is asked.
    final class FakeSession: MQTTSession {
        let configuration: MQTTConfiguration
        let calls = Mutex<[String]>([])
        init(_ configuration: MQTTConfiguration) { self.configuration = configuration }
        func start() { calls.withLock { $0.append("start") } }
        func shutdown(timeout: Duration) async { calls.withLock { $0.append("shutdown") } }
        func subscribe(_ topic: String) throws(MQTTError) { calls.withLock { $0.append("subscribe \(topic)") } }
        func unsubscribe(_ topic: String) throws(MQTTError) { calls.withLock { $0.append("unsubscribe \(topic)") } }
        func publish(_ topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError) {
            calls.withLock { $0.append("publish \(topic)") }
        }
        var isConnected: Bool { true }
        var clientID: String { configuration.clientID }
        var broker: MQTTBrokerAddress { configuration.broker }
    }

    final class Made: Sendable {
        let sessions = Mutex<[FakeSession]>([])
        func session(_ clientID: String) -> FakeSession? { sessions.withLock { $0.first { $0.clientID == clientID } } }
    }

    func link() throws -> (MQTTPushLink, Made) {
        let made = Made()
        let configuration = MQTTConfiguration(broker: MQTTBrokerAddress(host: "localhost", port: 1883, secure: false), clientID: "kitchen")
        let link = try MQTTPushLink(configuration: configuration, logger: Logger(label: "test")) { configuration throws(MQTTError) in
            let session = FakeSession(configuration)
            made.sessions.withLock { $0.append(session) }
            return session
        }
        return (link, made)
    }

    func token(_ app: String, _ n: UInt8) throws -> PushToken {
        try PushToken.make(root: "island", device: "kitchen", app: app, randomBytes: [UInt8](repeating: n, count: PushToken.secretBytes))
    }

    @Test func eachAppsTokensAndFeedbackGoThroughASessionOfItsOwn() throws {
        let (link, made) = try link()
        let coffee = try token("org.example.Coffee", 1), flights = try token("org.example.Flights", 2), more = try token("org.example.Coffee", 3)
        link.subscribe(coffee.topic)
        link.start()
        link.subscribe(flights.topic)
        link.subscribe(more.topic)
        link.publish(flights.feedbackTopic, payload: [])
        link.unsubscribe(coffee.topic)
        #expect(made.sessions.withLock { $0.map(\.clientID) } == ["kitchen", "kitchen/org.example.Coffee", "kitchen/org.example.Flights"])
        #expect(made.session("kitchen")?.configuration.persistentSession == false, "the device's presence keeps no session")
        #expect(made.session("kitchen")?.calls.withLock { $0 } == ["start"], "it subscribes to nothing")
        #expect(made.session("kitchen/org.example.Coffee")?.configuration.persistentSession == true)
        #expect(
            made.session("kitchen/org.example.Coffee")?.calls.withLock { $0 }
                == ["subscribe \(coffee.topic)", "start", "subscribe \(more.topic)", "unsubscribe \(coffee.topic)"])
        #expect(
            made.session("kitchen/org.example.Flights")?.calls.withLock { $0 }
                == ["start", "subscribe \(flights.topic)", "publish \(flights.feedbackTopic)"])
    }

    @Test func nothingMakesASessionForAnAppWithoutTokens() throws {
        let (link, made) = try link()
        link.start()
        link.unsubscribe(try token("org.example.Timer", 1).topic)
        link.publish(try token("org.example.Timer", 1).feedbackTopic, payload: [])
        link.subscribe("not/a/token")
        #expect(made.sessions.withLock { $0.map(\.clientID) } == ["kitchen"])
    }

    @Test func aChannelGoesThroughItsAppsSessionAndItsFeedbackToo() throws {
        let (link, made) = try link()
        link.start()
        let channel = try PushChannel(root: "island", app: "org.example.Scores", id: "AAAAAAAAAAAAAAAAAAAAAA")
        link.subscribe(channel.topic)
        link.publish(channel.feedbackTopic(device: "kitchen"), payload: [])
        link.unsubscribe(channel.topic)
        #expect(
            made.session("kitchen/org.example.Scores")?.calls.withLock { $0 }
                == [
                    "start", "subscribe \(channel.topic)", "publish \(channel.feedbackTopic(device: "kitchen"))",
                    "unsubscribe \(channel.topic)",
                ])
    }

    /// NATS's MQTT listener refuses a client id with `/` or `.`: under 3.1.1 the app's part is
    /// escaped, and two pairs never share one.
    @Test func underMQTT311AnAppsSessionIdHasNoSlashNorDot() {
        #expect(MQTTPushLink.clientID(device: "kitchen", app: "org.example.Coffee") == "kitchen/org.example.Coffee")
        #expect(MQTTPushLink.clientID(device: "kitchen", app: "org.example.Coffee", protocolVersion: .v311) == "kitchen-org_2Eexample_2ECoffee")
        #expect(
            MQTTPushLink.clientID(device: "a-b", app: "c", protocolVersion: .v311)
                != MQTTPushLink.clientID(device: "a", app: "b-c", protocolVersion: .v311))
        #expect(
            MQTTPushLink.clientID(device: "a", app: "b_2Ec", protocolVersion: .v311)
                != MQTTPushLink.clientID(device: "a", app: "b.c", protocolVersion: .v311))
    }

    /// `Broker=` may name a cluster's nodes: tried in that order, all with one TLS setup.
    @Test func aClusterIsItsNodesInOrderAllOfOneScheme() throws {
        var settings = PushSettings()
        settings.broker = "mqtt://node1:1883 mqtt://node2:1884"
        let configuration = try MQTTConfiguration(settings, device: "kitchen")
        #expect(configuration.brokers.map(\.host) == ["node1", "node2"] && configuration.brokers.map(\.port) == [1883, 1884])
        settings.broker = "mqtt://node1 mqtts://node2"
        #expect(throws: IslandDaemon.StartError.self) { try MQTTConfiguration(settings, device: "kitchen") }
    }

    /// The link process names the node it reached by its place in the list, in a byte: a list
    /// longer than a byte's places, or than any cluster, is refused by name.
    @Test func aClusterHasAtMostSixtyFourNodes() throws {
        var settings = PushSettings()
        settings.broker = (1...64).map { "mqtt://node\($0)" }.joined(separator: " ")
        #expect(try MQTTConfiguration(settings, device: "kitchen").brokers.count == 64)
        settings.broker = (1...65).map { "mqtt://node\($0)" }.joined(separator: " ")
        let refusal = #expect(throws: IslandDaemon.StartError.self) { try MQTTConfiguration(settings, device: "kitchen") }
        #expect(refusal?.description.contains("[Push] Broker=: at most 64 brokers, not 65") == true)
    }
}
