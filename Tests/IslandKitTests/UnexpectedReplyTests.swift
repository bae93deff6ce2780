import Foundation
import IslandKit
import OrderedCollections
import OrderedJSON
import Synchronization
import Testing
import VarlinkCore
import VarlinkNIO

/// A daemon whose replies are not what this IslandKit's interface says (another release's):
/// the call is refused as `org.island.InvalidReply`, naming the member, rather than read with
/// made-up defaults (a budget of 0 starts left, where the daemon said something else).
@Suite(.timeLimit(.minutes(1))) struct UnexpectedReplyTests {
    /// org.island.Producer as a daemon of another release might serve it: the calls IslandKit
    /// makes to connect, with replies of no fixed shape.
    static let otherRelease = """
        interface org.island.Producer
        method Authorization(app: ?string) -> (authorization: object)
        method List(app: ?string) -> (activities: []object)
        method Watch(app: ?string, ids: ?[]string) -> (event: object)
        """

    static let limits: JSON = [
        "maxPayloadBytes": 4096, "maxActivitiesPerApp": 5, "maxActivities": 50, "startBudget": 10, "startBudgetWindow": 3600.0,
        "updatesPerSecond": 1.0, "alertBudget": 10, "alertBudgetWindow": 3600.0, "maxActiveDuration": 28800.0, "maxDismissalDelay": 14400.0,
    ]

    /// The authorization with `remainingStarts`: an int as the interface says, or another value.
    static func authorization(remainingStarts: JSON) -> JSONObject {
        [
            "authorization": [
                "app": "org.example.KitTest", "enabled": true, "frequentUpdates": false, "limits": limits,
                "remainingStarts": remainingStarts, "remainingAlerts": 10, "activities": 0, "globalActivities": 0,
            ]
        ]
    }

    /// Answers the connection's own Authorization as the interface says, every later one with
    /// `remainingStarts` a string.
    static var service: VarlinkService {
        let calls = Calls()
        return VarlinkService(
            info: VarlinkServiceInfo(vendor: "t", product: "t", version: "0", url: "u"),
            implementations: [
                VarlinkImplementation(
                    interface: try! VarlinkInterface(parsing: otherRelease),
                    handlers: [
                        "Authorization": .async { _ throws(VarlinkError) in
                            let call = calls.count.withLock { count in
                                count += 1
                                return count
                            }
                            return authorization(remainingStarts: call == 1 ? 10 : "ten")
                        },
                        "List": .async { _ throws(VarlinkError) in ["activities": []] },
                        // The stream stays open with nothing to say.
                        "Watch": .streaming { _, _ in },
                    ])
            ], connectionErrors: .silent)
    }

    @Test func aReplyOfAnotherTypeIsAnInvalidReplyNamingTheMember() async throws {
        let directory = NSTemporaryDirectory() + "kit-reply-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = VarlinkServer(service: Self.service)
        try await server.bind(unixPath: directory + "/s.sock")
        let connection = IslandConnection(configuration: .init(appID: "org.example.KitTest", socketPath: directory + "/s.sock"))
        do {
            let error = await #expect(throws: ActivityAuthorizationError.self) { try await connection.authorizationInfo() }
            guard case .other(let name, let parameters)? = error else {
                Issue.record("not an InvalidReply: \(String(describing: error))")
                throw CancellationError()
            }
            #expect(name == "org.island.InvalidReply")
            #expect(
                parameters["reason"]?.stringValue
                    == "in the reply to org.island.Producer.Authorization, authorization.remainingStarts is a string, not int: islandd's interface differs from this client's"
            )
        } catch {
            await connection.close()
            await server.shutdown()
            throw error
        }
        await connection.close()
        await server.shutdown()
    }
}

/// How many times a method was called, from any thread.
final class Calls: Sendable {
    let count = Mutex(0)
}
