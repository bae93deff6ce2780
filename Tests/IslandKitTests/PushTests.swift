import Foundation
import OrderedJSON
import IslandKit
import MQTT
import OrderedCollections
import ProcessTesting
import Testing

struct OrderAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable { var stage: String }
    static var activityType: String { "Order" }
    var order: Int
}

/// IslandKit's push tokens against the real islandd connected to a real mosquitto, with an
/// MQTT client in the test as the app's server.
@Suite(.enabled(if: MosquittoBroker.isAvailable, "mosquitto is not installed (scripts/install-deps.sh installs it)"))
struct PushTests {
    static let acl = """
        pattern read island/%u/+/+
        pattern write island/%u/+/+/feedback
        user backend
        topic write island/+/\(TestDaemon.app)/+
        topic read island/+/\(TestDaemon.app)/+/feedback
        """

    func withPushDaemon(_ body: (TestDaemon, IslandConnection, MQTTClient) async throws -> Void) async throws {
        let broker = try await MosquittoBroker(users: ["kit-device": "device-secret", "backend": "backend-secret"], acl: Self.acl)
        let passwordFile = broker.directory + "/device-password"
        let configuration = """
            [Push]
            Broker=mqtts://localhost:\(broker.tlsPort)
            ClientID=kit-device
            CAFile=\(broker.caFile)
            Username=kit-device
            PasswordFile=\(passwordFile)
            """
        let backend = try MQTTClient(
            MQTTConfiguration(
                broker: MQTTBrokerAddress(host: "127.0.0.1", port: broker.port, secure: false),
                clientID: "backend", username: "backend", password: "backend-secret",
                persistentSession: false), onMessage: { _ in })
        do {
            try "device-secret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            backend.start()
            try await withDaemon(configuration: configuration) { daemon in
                // Both connect on their own; the bound only keeps a broken daemon from hanging.
                let deadline = ContinuousClock.now + .seconds(30)
                while !(daemon.log.contains("connected to the push broker") && backend.isConnected) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(daemon.log.contains("connected to the push broker"))
                #expect(backend.isConnected)
                try await daemon.withConnection { connection in try await body(daemon, connection, backend) }
            }
            await backend.shutdown()
            await broker.remove()
        } catch {
            await backend.shutdown()
            await broker.remove()
            throw error
        }
    }

    /// The server publishing one push every 100 ms until cancelled: a push made before the
    /// device subscribed to its token is lost (the broker has no one to give it to), and the
    /// same push again is applied once (an equal timestamp is a redelivery).
    static func publishing(_ topic: String, _ payload: [UInt8], _ backend: MQTTClient) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? backend.publish(topic, payload: payload)
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    static func aps(_ event: String, _ timestamp: Double, _ fields: JSONObject) -> [UInt8] {
        var aps = fields
        aps["event"] = .string(event)
        aps["timestamp"] = .double(timestamp)
        return JSON.object(["aps": .object(aps)]).serialized()
    }

    @Test func anActivityWithAPushTokenIsUpdatedByItsServer() async throws {
        try await withPushDaemon { _, connection, backend in
            let activity = try await Activity<OrderAttributes>.request(
                attributes: OrderAttributes(order: 7), content: ActivityContent(state: .init(stage: "ordered"), staleDate: nil),
                pushType: .token, connection: connection)
            let token = try #require(activity.pushToken)
            let topic = String(decoding: token, as: UTF8.self)
            #expect(topic.hasPrefix("island/kit-device/\(TestDaemon.app)/"))
            let tokens = Collected(activity.pushTokenUpdates)
            #expect(await tokens.first { $0 == token } != nil, "the current token first")
            let contents = Collected(activity.contentUpdates)

            // A token's subscription is made as it is handed out, on its app's session, which the
            // app's first token opens: the server publishes until the device has it (the same
            // push again, refused as a redelivery once applied).
            let server = Self.publishing(topic, Self.aps("update", 1, ["content-state": ["stage": "baking"]]), backend)
            #expect(await contents.first { $0.state.stage == "baking" } != nil)
            server.cancel()

            let rotated = try await activity.rotatePushToken()
            #expect(rotated != token)
            #expect(await tokens.first { $0 == rotated } != nil)
            #expect(activity.pushToken == rotated)
        }
    }

    @Test func aServerStartsAnActivityWithThePushToStartToken() async throws {
        try await withPushDaemon { _, connection, backend in
            let startTokens = Collected(Activity<OrderAttributes>.pushToStartTokenUpdates(connection: connection))
            let token = try #require(await startTokens.first { _ in true })
            #expect(try await Activity<OrderAttributes>.pushToStartToken(rotate: false, connection: connection) == token)
            // The app learns of what its server started as ActivityKit's apps do: activityUpdates.
            let updates = Collected(Activity<OrderAttributes>.activityUpdates(connection: connection))
            let server = Self.publishing(
                String(decoding: token, as: UTF8.self),
                Self.aps(
                    "start", 1,
                    [
                        "content-state": ["stage": "ordered"], "attributes-type": "Order", "attributes": ["order": 9],
                    ]), backend)
            let pushed = await updates.first { _ in true }
            server.cancel()
            #expect(pushed?.attributes.order == 9)
            #expect(pushed?.content.state.stage == "ordered")
            let started = try await Activity<OrderAttributes>.activities(connection: connection)
            #expect(started.map(\.id) == [pushed?.id])

            let rotated = try await Activity<OrderAttributes>.pushToStartToken(rotate: true, connection: connection)
            #expect(rotated != token)
            #expect(await startTokens.first { $0 == rotated } != nil, "a new token is streamed")
        }
    }

    @Test func withoutABrokerAskingForATokenIsRefusedByName() async throws {
        try await withDaemonConnection { _, connection in
            do {
                _ = try await Activity<OrderAttributes>.request(
                    attributes: OrderAttributes(order: 1), content: ActivityContent(state: .init(stage: "x"), staleDate: nil),
                    pushType: .token, connection: connection)
                Issue.record("a token was given without a broker")
            } catch let error as ActivityAuthorizationError {
                #expect(error.name == "org.island.PushUnavailable")
            }
            let startTokens = Collected(Activity<OrderAttributes>.pushToStartTokenUpdates(connection: connection))
            let deadline = ContinuousClock.now + .seconds(30)
            while !startTokens.isFinished && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(startTokens.isFinished && startTokens.elements.isEmpty, "push off: the sequence ends, empty")
        }
    }
}
