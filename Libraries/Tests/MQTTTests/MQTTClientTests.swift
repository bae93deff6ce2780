import Foundation
import Glibc
import MQTT
import ProcessTesting
import Synchronization
import Testing

/// The client against a real mosquitto broker (TLS, passwords, an ACL, persistence), started
/// per test on ports of its own.
@Suite(.enabled(if: MosquittoBroker.isAvailable, "mosquitto is not installed (scripts/install-deps.sh installs it)"))
struct MQTTClientTests {
    static let users = ["alice": "alice-secret", "bob": "bob-secret", "mallory": "mallory-secret"]
    static let acl = """
        user alice
        topic readwrite test/#

        user bob
        topic write test/#

        user mallory
        topic write other/#
        """

    /// A broker for the test, removed afterwards whatever happens.
    func withBroker(certificates: [String] = [], _ body: (MosquittoBroker) async throws -> Void) async throws {
        let broker = try await MosquittoBroker(users: Self.users, acl: Self.acl, certificates: certificates)
        do {
            try await body(broker)
            await broker.remove()
        } catch {
            Issue.record("broker log: \((try? String(contentsOfFile: broker.log, encoding: .utf8)) ?? "")")
            await broker.remove()
            throw error
        }
    }

    static func configuration(
        _ broker: MosquittoBroker, user: String, id: String? = nil, tls: Bool = false,
        persistent: Bool = true
    ) -> MQTTConfiguration {
        MQTTConfiguration(
            broker: MQTTBrokerAddress(host: "127.0.0.1", port: tls ? broker.tlsPort : broker.port, secure: tls),
            clientID: id ?? user, username: user, password: users[user], tls: .init(caFile: broker.caFile),
            persistentSession: persistent, backoff: ReconnectBackoff(first: 0.05, maximum: 0.4))
    }

    @Test func messagesArriveInOrderOverTLS() async throws {
        try await withBroker { broker in
            let alice = Recorder()
            try await alice.connect(Self.configuration(broker, user: "alice", tls: true), subscribing: ["test/a"])
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            for n in 0..<50 { try bob.client.publish("test/a", payload: Array("\(n)".utf8)) }
            let received = try await alice.messages(50)
            #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<50).map(String.init))
            #expect(received.allSatisfy { $0.topic == "test/a" && $0.qos == 1 })
            await alice.client.shutdown()
            await bob.client.shutdown()
        }
    }

    @Test func aPersistentSessionKeepsWhatArrivedWhileAway() async throws {
        try await withBroker { broker in
            let first = Recorder()
            try await first.connect(Self.configuration(broker, user: "alice"), subscribing: ["test/a"])
            await first.client.shutdown()

            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            for n in 1...3 { try bob.client.publish("test/a", payload: Array("missed \(n)".utf8)) }
            try await bob.waitUntilAcknowledged()

            // The same client id again, subscribing to nothing: the session has the topic.
            let again = Recorder()
            let configuration = Self.configuration(broker, user: "alice")
            try await again.connect(configuration)
            #expect(again.events.first == .connected(broker: configuration.broker, sessionPresent: true))
            let received = try await again.messages(3)
            #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == ["missed 1", "missed 2", "missed 3"])
            await again.client.shutdown()
            await bob.client.shutdown()
        }
    }

    @Test func itReconnectsAndResubscribesWhenTheBrokerReturns() async throws {
        try await withBroker { broker in
            let alice = Recorder()
            try await alice.connect(Self.configuration(broker, user: "alice", tls: true), subscribing: ["test/a", "test/b"])
            await broker.stop()
            try await alice.wait { $0.contains { if case .disconnected = $0 { true } else { false } } }
            #expect(alice.client.isConnected == false)
            #expect(throws: MQTTError.notConnected) { try alice.client.publish("test/a", payload: [1]) }
            // Dropped while the broker is away: unsubscribed from the kept session on return.
            try alice.client.unsubscribe("test/a")

            try await broker.start()
            try await alice.wait { $0.last == .connected(broker: alice.client.broker, sessionPresent: true) }
            // The unsubscription went out on connecting: the broker has it once it answers
            // anything sent after.
            try await alice.roundTrip()
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            try bob.client.publish("test/a", payload: Array("a".utf8))
            try bob.client.publish("test/b", payload: Array("b".utf8))
            try bob.client.publish("test/b", payload: Array("after".utf8))
            // The broker delivers one publisher's messages in order: had test/a been delivered,
            // it would have come before both of test/b's.
            let received = try await alice.messages(2)
            #expect(received.map(\.topic) == ["test/b", "test/b"])
            #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == ["b", "after"])
            await alice.client.shutdown()
            await bob.client.shutdown()
        }
    }

    /// The SUBACK was once not reported, so whoever handed a topic out could not know when a
    /// message published there would arrive: a message published the moment the grant is told
    /// arrives, every time.
    @Test func aMessagePublishedOnceTheGrantIsToldArrives() async throws {
        try await withBroker { broker in
            let alice = Recorder()
            try await alice.connect(Self.configuration(broker, user: "alice"))
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            for n in 0..<20 {
                try alice.client.subscribe("test/\(n)")
                try await alice.waitForAnswers { $0.contains(.granted(topic: "test/\(n)")) }
                try bob.client.publish("test/\(n)", payload: [UInt8(n)])
            }
            #expect(try await alice.messages(20).map(\.topic) == (0..<20).map { "test/\($0)" })
            await alice.client.shutdown()
            await bob.client.shutdown()
        }
    }

    /// A cluster's nodes, in order: when its node dies the client connects to the next, and
    /// subscribes there (a node without its session has none of its subscriptions).
    @Test func whenItsBrokerDiesItMovesToTheNextOfTheList() async throws {
        try await withBroker { first in
            try await withBroker { second in
                var configuration = Self.configuration(first, user: "alice")
                configuration.otherBrokers = [MQTTBrokerAddress(host: "127.0.0.1", port: second.port, secure: false)]
                let alice = Recorder()
                try await alice.connect(configuration, subscribing: ["test/a"])
                #expect(alice.client.broker.port == first.port)
                await first.stop()
                try await alice.wait { $0.filter { if case .connected = $0 { true } else { false } }.count == 2 }
                #expect(alice.client.broker.port == second.port)
                // Each connection names its node, so that a daemon's log shows the failover.
                let nodes = alice.events.compactMap { if case .connected(let node, _) = $0 { node.port } else { nil } }
                #expect(nodes == [first.port, second.port])
                try await alice.roundTrip()
                let bob = Recorder()
                try await bob.connect(Self.configuration(second, user: "bob", persistent: false))
                try bob.client.publish("test/a", payload: Array("on the second".utf8))
                let received = try await alice.messages(1)
                #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == ["on the second"])
                await alice.client.shutdown()
                await bob.client.shutdown()
            }
        }
    }

    /// Two clients with one id (two devices with the same `ClientID=`) once took the session from
    /// each other about once a second for ever, each a line of log; the backoff went back to its
    /// first step at every CONNACK.
    @Test func aSessionTakenOverAgainAndAgainIsRetriedEverMoreSlowly() async throws {
        try await withBroker { broker in
            var configuration = Self.configuration(broker, user: "alice", persistent: false)
            configuration.backoff = ReconnectBackoff(first: 0.1, maximum: 10, stableAfter: 30)
            let first = Recorder()
            try await first.connect(configuration)
            let second = Recorder()
            try await second.connect(configuration)
            // mosquitto 2.0 closes the older connection without the DISCONNECT that says why
            // (brokers that send it make these `takenOver`): the daemon's log tells it from the
            // pattern (SessionWatch).
            func wait(_ event: MQTTConnectionEvent) -> Double? {
                switch event {
                case .disconnected(_, let wait), .takenOver(let wait), .packetTooLarge(let wait, _): wait
                case .connected: nil
                }
            }
            let events = try await first.wait { $0.compactMap(wait).count >= 3 }
            let waits = events.compactMap(wait)
            // Steps of 0.1, 0.2 and 0.4 s, each drawn between half and all of it: had the backoff
            // started again at each reconnection, every wait was at most 0.1 s.
            #expect(waits[1] >= 0.1 && waits[2] >= 0.2, "\(waits)")
            await first.client.shutdown()
            await second.client.shutdown()
        }
    }

    @Test func theBrokersACLConfinesAPublisher() async throws {
        try await withBroker { broker in
            let alice = Recorder()
            try await alice.connect(Self.configuration(broker, user: "alice"), subscribing: ["test/#"])
            let mallory = Recorder()
            try await mallory.connect(Self.configuration(broker, user: "mallory", persistent: false))
            try mallory.client.publish("test/a", payload: Array("forged".utf8))
            try await mallory.waitUntilAcknowledged()
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            try bob.client.publish("test/a", payload: Array("genuine".utf8))
            let received = try await alice.messages(1)
            #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == ["genuine"])
            for recorder in [alice, mallory, bob] { await recorder.client.shutdown() }
        }
    }

    @Test func aClientCertificateIdentifiesTheClient() async throws {
        try await withBroker(certificates: ["alice"]) { broker in
            let files = broker.certificate(for: "alice")
            let configuration = MQTTConfiguration(
                broker: MQTTBrokerAddress(host: "localhost", port: broker.certificatePort, secure: true), clientID: "alice-device",
                tls: .init(caFile: broker.caFile, certificateFile: files.certificate, keyFile: files.key),
                backoff: ReconnectBackoff(first: 0.05, maximum: 0.4))
            let alice = Recorder()
            try await alice.connect(configuration, subscribing: ["test/a"])
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            try bob.client.publish("test/a", payload: Array("hello".utf8))
            #expect(try await alice.messages(1).map(\.payload) == [Array("hello".utf8)])
            await alice.client.shutdown()
            await bob.client.shutdown()
        }
    }

    @Test func refusedCredentialsAreRetriedWithBackoffNotGivenUpOn() async throws {
        try await withBroker { broker in
            var configuration = Self.configuration(broker, user: "alice", tls: true)
            configuration.password = "wrong"
            let alice = Recorder()
            alice.client = try MQTTClient(configuration, onMessage: alice.record, onConnection: alice.record)
            alice.client.start()
            let events = try await alice.wait { $0.count >= 3 }
            for event in events.prefix(3) {
                guard case .disconnected(let reason, let retryIn) = event else {
                    Issue.record("expected a refusal, got \(event)")
                    continue
                }
                #expect(reason.contains("refused"), "\(reason)")
                #expect(retryIn > 0 && retryIn <= 0.4)
            }
            await alice.client.shutdown()
        }
    }

    @Test func aBrokerWhoseCertificateIsNotTrustedIsRefusedAndRetried() async throws {
        try await withBroker { broker in
            var configuration = Self.configuration(broker, user: "alice", tls: true)
            // The system's roots do not know the test's CA.
            configuration.tls = .init()
            let alice = Recorder()
            alice.client = try MQTTClient(configuration, onMessage: alice.record, onConnection: alice.record)
            alice.client.start()
            let events = try await alice.wait { $0.count >= 2 }
            #expect(events.allSatisfy { if case .disconnected = $0 { true } else { false } }, "\(events)")
            await alice.client.shutdown()
        }
    }

    /// `select` cannot wait on a descriptor above 1023; a daemon with many clients has them.
    @Test func itServesAConnectionOnADescriptorAbove1023() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_max >= 1200, "the hard descriptor limit is below 1200")
        if limit.rlim_cur < 1200 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        try await withBroker { broker in
            var fillers: [Int32] = []
            while fillers.count < 1100 { fillers.append(open("/dev/null", O_RDONLY | O_CLOEXEC)) }
            defer { fillers.forEach { close($0) } }
            let alice = Recorder()
            try await alice.connect(Self.configuration(broker, user: "alice"), subscribing: ["test/a"])
            let bob = Recorder()
            try await bob.connect(Self.configuration(broker, user: "bob", persistent: false))
            try bob.client.publish("test/a", payload: [42])
            #expect(try await alice.messages(1).map(\.payload) == [[42]])
            await alice.client.shutdown()
            await bob.client.shutdown()
        }
    }

    @Test func invalidTopicsAreRefusedBeforeTheNetwork() throws {
        let client = try MQTTClient(
            MQTTConfiguration(
                broker: MQTTBrokerAddress(host: "127.0.0.1", port: 1, secure: false),
                clientID: "never-started"), onMessage: { _ in })
        #expect(throws: MQTTError.invalidTopic("a/#/b")) { try client.subscribe("a/#/b") }
        #expect(throws: MQTTError.invalidTopic("a/+")) { try client.publish("a/+", payload: []) }
        #expect(throws: MQTTError.notConnected) { try client.publish("a/b", payload: []) }
    }
}

/// What a client received and heard about its connection, for a test to wait on.
final class Recorder: Sendable {
    private let state = Mutex<(messages: [MQTTMessage], events: [MQTTConnectionEvent], client: MQTTClient?, answers: [MQTTSubscriptionEvent])>(
        ([], [], nil, []))

    var client: MQTTClient {
        get { state.withLock { $0.client! } }
        set { state.withLock { $0.client = newValue } }
    }
    var received: [MQTTMessage] { state.withLock { $0.messages } }
    var events: [MQTTConnectionEvent] { state.withLock { $0.events } }

    func record(_ message: MQTTMessage) { state.withLock { $0.messages.append(message) } }
    func record(_ event: MQTTConnectionEvent) { state.withLock { $0.events.append(event) } }
    func record(_ answer: MQTTSubscriptionEvent) { state.withLock { $0.answers.append(answer) } }
    /// The broker's answers to the subscriptions, in order.
    var answers: [MQTTSubscriptionEvent] { state.withLock { $0.answers } }

    /// Starts a client and returns once it is connected, with `topics` subscribed: the broker
    /// granted each.
    func connect(_ configuration: MQTTConfiguration, subscribing topics: [String] = []) async throws {
        client = try MQTTClient(configuration, onMessage: record, onConnection: record, onSubscription: record)
        for topic in topics { try client.subscribe(topic) }
        client.start()
        try await wait { $0.contains { if case .connected = $0 { true } else { false } } }
        try await waitForAnswers { answers in topics.allSatisfy { answers.contains(.granted(topic: $0)) } }
    }

    /// Waits until the broker's answers so far satisfy `done`.
    @discardableResult
    func waitForAnswers(
        within timeout: Duration = .seconds(30), until done: ([MQTTSubscriptionEvent]) -> Bool
    ) async throws
        -> [MQTTSubscriptionEvent]
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            let answers = answers
            if done(answers) { return answers }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the broker's answers never came: \(answers)")
        throw CancellationError()
    }

    /// Publishes where no client may (the ACL refuses it, and acknowledges it all the same) and
    /// waits for the acknowledgement: the broker handles a client's packets in order, so what
    /// this client sent before (a subscription, say) has been handled.
    func roundTrip() async throws {
        try client.publish("round-trip/\(client.clientID)", payload: [])
        try await waitUntilAcknowledged()
    }

    // The waits below are for what is expected to come: their bounds only keep a broken client
    // from hanging the test, generous enough that a loaded machine never reaches them, and each
    // looks once more after its deadline (this task may wake long after it under load, while
    // the client's own thread went on receiving).

    func messages(_ count: Int, within timeout: Duration = .seconds(30)) async throws -> [MQTTMessage] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let messages = received
            if messages.count >= count { return messages }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(received.count) of \(count) messages arrived within \(timeout)")
        throw CancellationError()
    }

    @discardableResult
    func wait(within timeout: Duration = .seconds(30), until done: ([MQTTConnectionEvent]) -> Bool) async throws -> [MQTTConnectionEvent] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = events
            if done(events) { return events }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the connection events never came: \(events)")
        throw CancellationError()
    }

    /// Waits until the broker has acknowledged everything this client published.
    func waitUntilAcknowledged() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while client.unacknowledgedPublishes > 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(client.unacknowledgedPublishes) publishes were never acknowledged")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
