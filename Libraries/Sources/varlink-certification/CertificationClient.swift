import OrderedJSON
import OrderedCollections
import VarlinkCore

/// Walks a certification server through Start … End, feeding each reply into the next
/// call, and checks every reply against what the reference server sends.
struct CertificationClient {
    let client: VarlinkClient
    let log: (String) -> Void

    struct Mismatch: Error, CustomStringConvertible {
        var step: String
        var wants: JSON
        var got: JSON
        var description: String { "\(step): wanted \(wants), got \(got)" }
    }

    private let prefix = "org.varlink.certification."

    func run() async throws {
        let start = try await client.call(prefix + "Start")
        guard case .string(let id)? = start["client_id"] else {
            throw Mismatch(step: "Start", wants: ["client_id": "<string>"], got: .object(start))
        }
        log("client_id: \(id)")
        var previous = try await step("Test01", id, [:], expect: ["bool": true])
        previous = try await step("Test02", id, ["bool": previous["bool"]!], expect: ["int": 1])
        previous = try await step("Test03", id, ["int": previous["int"]!], expect: ["float": 1.0])
        previous = try await step("Test04", id, ["float": previous["float"]!], expect: ["string": "ping"])
        previous = try await step(
            "Test05", id, ["string": previous["string"]!],
            expect: ["bool": false, "int": 2, "float": CertificationService.pi, "string": "a lot of string"])
        previous = try await step("Test06", id, previous, expect: ["struct": CertificationService.struct6])
        previous = try await step("Test07", id, ["struct": previous["struct"]!], expect: ["map": CertificationService.map])
        previous = try await step("Test08", id, ["map": previous["map"]!], expect: ["set": CertificationService.set])
        previous = try await step("Test09", id, ["set": previous["set"]!], expect: ["mytype": CertificationService.myType])

        var replies: [JSON] = []
        for try await reply in client.stream(prefix + "Test10", ["client_id": .string(id), "mytype": previous["mytype"]!]) {
            log("Test10: \(JSON.object(reply))")
            replies.append(reply["string"] ?? .null)
        }
        let expected = JSON.array(CertificationService.replies10.map { .string($0) })
        guard JSON.array(replies) == expected else { throw Mismatch(step: "Test10", wants: expected, got: .array(replies)) }

        try await client.oneway(prefix + "Test11", ["client_id": .string(id), "last_more_replies": .array(replies)])
        log("Test11: sent oneway")
        let end = try await client.call(prefix + "End", ["client_id": .string(id)])
        log("End: \(JSON.object(end))")
        guard end["all_ok"] == true else { throw Mismatch(step: "End", wants: ["all_ok": true], got: .object(end)) }
    }

    /// One call; the reply must contain `expect` (a server may add members, as the
    /// reference one adds `client_id` to Test09's).
    private func step(_ method: String, _ id: String, _ parameters: JSONObject, expect: JSONObject) async throws -> JSONObject {
        var parameters = parameters
        parameters.updateValue(.string(id), forKey: "client_id", insertingAt: 0)
        let reply = try await client.call(prefix + method, parameters)
        log("\(method): \(JSON.object(reply))")
        var relevant = reply
        for key in reply.keys where expect[key] == nil { relevant[key] = nil }
        guard JSON.object(relevant).numericallyEquals(.object(expect)) else {
            throw Mismatch(step: method, wants: .object(expect), got: .object(reply))
        }
        return relevant
    }
}
