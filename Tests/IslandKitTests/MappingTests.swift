import Foundation
import OrderedJSON
import IslandKit
import IslandPaths
import OrderedCollections
import Testing
import VarlinkCore

/// IslandKit's pure parts: error mapping, type names, socket defaults.
@Suite struct MappingTests {
    @Test func daemonErrorsMapWithTheirParameters() {
        let cases: [(VarlinkError, ActivityAuthorizationError)] = [
            (VarlinkError("org.island.AttributesTooLarge", ["limit": 4096, "size": 5000]), .attributesTooLarge(limit: 4096, size: 5000, part: nil)),
            (
                VarlinkError("org.island.AttributesTooLarge", ["limit": 4096, "size": 5000, "part": "state"]),
                .attributesTooLarge(limit: 4096, size: 5000, part: "state")
            ),
            (VarlinkError("org.island.Denied", ["app": "a"]), .denied(app: "a")),
            (VarlinkError("org.island.Unentitled", ["app": "a", "reason": "r"]), .unentitled(app: "a", reason: "r")),
            (VarlinkError("org.island.GlobalMaximumExceeded", ["limit": 32]), .globalMaximumExceeded(limit: 32)),
            (VarlinkError("org.island.TargetMaximumExceeded", ["app": "a", "limit": 5]), .targetMaximumExceeded(app: "a", limit: 5)),
            (VarlinkError("org.island.StaleTimestamp", ["id": "i", "last": 2.5, "given": 1]), .staleTimestamp(id: "i", last: 2.5, given: 1)),
            (
                VarlinkError("org.island.StartBudgetExceeded", ["app": "a", "limit": 10, "window": 60.0, "retryAfter": 12.5]),
                .startBudgetExceeded(app: "a", limit: 10, window: 60, retryAfter: 12.5)
            ),
            (VarlinkError("org.island.NoSuchActivity", ["id": "i"]), .noSuchActivity(id: "i")),
            (VarlinkError("org.island.ActivityEnded", ["id": "i", "state": "ended"]), .activityEnded(id: "i", state: "ended")),
            (VarlinkError("org.island.PersistenceFailure", ["reason": "disk"]), .persistenceFailure(reason: "disk")),
            (VarlinkError("org.example.Odd", ["x": 1]), .other(name: "org.example.Odd", parameters: ["x": 1])),
        ]
        for (wire, expected) in cases {
            let mapped = ActivityAuthorizationError(wire)
            #expect(mapped == expected)
            #expect(mapped.name == wire.name)
            #expect(JSON.object(mapped.parameters).numericallyEquals(.object(wire.parameters)))
            #expect(!mapped.recoverySuggestion.isEmpty)
        }
    }

    /// An app whose daemon is not running is told how to start one that exists, as `island` is:
    /// from a source checkout `systemctl --user start islandd.socket` only fails. An app has no
    /// `--socket` option: it is told where IslandKit takes the socket from.
    @Test func noDaemonSuggestsWhatStartsOneHere() {
        let suggestion = ActivityAuthorizationError.daemonUnavailable(socketPath: "/run/user/7/island/islandd.sock", reason: "refused")
            .recoverySuggestion
        #expect(suggestion.hasPrefix(DaemonStartHint.current() + ", "))
        #expect(suggestion.contains("$ISLAND_SOCKET") && suggestion.contains("socketPath") && !suggestion.contains("--socket"))
    }

    @Test func activityTypeDefaultsToTheSwiftTypeNameAndCanBeSet() {
        #expect(DeliveryAttributes.activityType == "DeliveryAttributes")
        #expect(BlobAttributes.activityType == "Blob")
        // A `static let` satisfies the requirement, as the documentation shows it.
        struct Renamed: ActivityAttributes {
            struct ContentState: Codable, Hashable, Sendable {}
            static let activityType = "Blob"
        }
        #expect(Renamed.activityType == BlobAttributes.activityType)
    }

    @Test func aLayoutIsAJSONObject() throws {
        let layout = try ActivityLayout(json: Data(#"{"chip": "Pizza", "minimal": {"type": "symbol", "name": "🍕"}}"#.utf8))
        #expect(layout.json.keys.elements == ["chip", "minimal"])
        #expect(throws: ActivityCodingError.self) { try ActivityLayout(json: Data("[1]".utf8)) }
        #expect(throws: (any Error).self) { try ActivityLayout(json: Data("{".utf8)) }
    }

    @Test func socketPathDefaults() {
        #expect(IslandKit.defaultSocketPath(environment: ["ISLAND_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/run/user/7"]) == "/x.sock")
        #expect(IslandKit.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == "/run/user/7/island/islandd.sock")
        #expect(IslandKit.defaultSocketPath(environment: [:]).hasSuffix("/island/islandd.sock"))
    }
}
