import Foundation
import IslandKit
import IslandKitTesting
import OrderedCollections
import OrderedJSON
import Testing

struct FlightAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable {
        var gate: String
        var boarding: Date
    }

    static let activityType = "Flight"
    var departure: Date
}

/// How a content state's dates are written: Unix seconds by default, what layouts read; or, for
/// an app whose server also updates iOS devices, seconds since 2001 as ActivityKit has them.
@Suite(.timeLimit(.minutes(1)))
struct DateEncodingTests {
    let boarding = Date(timeIntervalSince1970: 1_900_000_000)
    let departure = Date(timeIntervalSince1970: 1_900_001_800)

    func start(on connection: IslandConnection) async throws -> Activity<FlightAttributes> {
        try await Activity.request(
            attributes: FlightAttributes(departure: departure),
            content: ActivityContent(state: .init(gate: "B12", boarding: boarding), staleDate: boarding),
            connection: connection)
    }

    @Test func byDefaultDatesAreUnixSeconds() async throws {
        try await TestIsland.withIsland { island in
            let connection = island.connection()
            let activity = try await start(on: connection)
            let raw = try #require(try await connection.list().first)
            #expect(raw.content.state["boarding"]?.doubleValue == 1_900_000_000)
            #expect(raw.attributes["departure"]?.doubleValue == 1_900_001_800)
            #expect(activity.content.state.boarding == boarding)
        }
    }

    @Test func activityKitsEncodingIsSecondsSince2001BothWays() async throws {
        try await TestIsland.withIsland { island in
            let connection = island.connection(dateEncoding: .activityKit)
            let activity = try await start(on: connection)
            let raw = try #require(try await connection.list().first)
            // As Foundation's JSONEncoder writes a Date by default, and ActivityKit decodes it.
            let foundation = try JSONSerialization.jsonObject(with: JSONEncoder().encode(FlightAttributes.ContentState(gate: "B12", boarding: boarding)))
            #expect(raw.content.state["boarding"]?.doubleValue == (foundation as? [String: Any])?["boarding"] as? Double)
            #expect(raw.content.state["boarding"]?.doubleValue == boarding.timeIntervalSinceReferenceDate)
            #expect(raw.attributes["departure"]?.doubleValue == departure.timeIntervalSinceReferenceDate)
            // The protocol's own dates stay Unix seconds.
            #expect(raw.content.staleDate == 1_900_000_000)
            #expect(activity.content.state.boarding == boarding)
            #expect(activity.attributes.departure == departure)

            // A server's update in ActivityKit's encoding (as a push's content-state would be)
            // reads back as the same date.
            let later = boarding.addingTimeInterval(600)
            let contents = activity.contentUpdates
            _ = try await connection.update(
                id: activity.id,
                content: RawActivityContent(state: [
                    "gate": "B14", "boarding": .double(later.timeIntervalSinceReferenceDate),
                ]))
            for await content in contents where content.state.gate == "B14" {
                #expect(content.state.boarding == later)
                break
            }
        }
    }
}
