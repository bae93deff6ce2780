import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("IslandError names and parameters")
struct ActivityErrorTests: ActivityTesting {
    struct Expectation: Sendable, CustomTestStringConvertible {
        var error: IslandError
        var name: String
        var parameters: JSONObject
        var testDescription: String { name }
    }

    static let expectations: [Expectation] = [
        Expectation(
            error: .attributesTooLarge(limit: 4096, size: 5000, part: .state), name: "AttributesTooLarge",
            parameters: ["limit": 4096, "size": 5000, "part": "state"]),
        Expectation(error: .denied(app: "a"), name: "Denied", parameters: ["app": "a"]),
        Expectation(
            error: .unentitled(app: "a"), name: "Unentitled",
            parameters: ["app": "a", "reason": "its desktop entry does not declare X-Island-LiveActivities=true"]),
        Expectation(error: .globalMaximumExceeded(limit: 32), name: "GlobalMaximumExceeded", parameters: ["limit": 32]),
        Expectation(error: .targetMaximumExceeded(app: "a", limit: 5), name: "TargetMaximumExceeded", parameters: ["app": "a", "limit": 5]),
        Expectation(error: .noSuchActivity(id: "x"), name: "NoSuchActivity", parameters: ["id": "x"]),
        Expectation(error: .activityEnded(id: "x", state: .ended), name: "ActivityEnded", parameters: ["id": "x", "state": "ended"]),
        Expectation(error: .staleTimestamp(id: "x", last: 2.5, given: 1), name: "StaleTimestamp", parameters: ["id": "x", "last": 2.5, "given": 1.0]),
        Expectation(
            error: .implausibleStaleDate(given: 1.8e12, latest: 1e11), name: "ImplausibleStaleDate",
            parameters: ["given": 1.8e12, "latest": 1e11]),
        Expectation(
            error: .startBudgetExceeded(app: "a", limit: 10, window: 60, retryAfter: 12.5), name: "StartBudgetExceeded",
            parameters: ["app": "a", "limit": 10, "window": 60.0, "retryAfter": 12.5]
        ),
    ]

    @Test(arguments: expectations)
    func namesAndParameters(_ expected: Expectation) {
        #expect(expected.error.name == "org.island.\(expected.name)")
        #expect(expected.error.parameters == expected.parameters)
    }
}
