import Foundation
import IslandKit
import IslandKitTesting
import OrderedCollections
import OrderedJSON
import Testing

/// iOS 26's scheduled start as an app writes it: `request(…, alertConfiguration:, start:)`.
@Suite(.timeLimit(.minutes(1)))
struct ScheduledActivityTests {
    @Test func aStartLaterIsPendingAndListedToItsApp() async throws {
        try await TestIsland.withIsland { island in
            let connection = island.connection()
            let start = Date().addingTimeInterval(3600)
            let activity = try await Activity.request(
                attributes: PlayerAttributes(album: "Night"),
                content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil),
                alertConfiguration: AlertConfiguration(title: "Tonight", body: "Night starts", sound: .default),
                start: start, connection: connection)
            #expect(activity.activityState == .pending)
            let listed = try await Activity<PlayerAttributes>.activities(connection: connection)
            #expect(listed.map(\.id) == [activity.id])
            #expect(listed.first?.activityState == .pending)
        }
    }

    @Test func aStartLaterWithoutAnAlertIsRefusedByName() async throws {
        _ = try await TestIsland.withIsland { island in
            await #expect(
                throws: ActivityAuthorizationError.other(
                    name: "org.island.StartAlertRequired",
                    parameters: ["start": 4_102_444_800.0])
            ) {
                _ = try await Activity.request(
                    attributes: PlayerAttributes(album: "Night"),
                    content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil),
                    start: Date(timeIntervalSince1970: 4_102_444_800), connection: island.connection())
            }
        }
    }
}
