import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// A push the broker dropped must be visible to the server that sent it. A server may number its
/// pushes to a token (`aps.sequence`, 1, 2, 3…); each answer repeats the number and says how many
/// before it never arrived.
@Suite struct PushSequenceTests {
    let owner = ActivityOwner(app: "org.example.A", uid: 1000)

    func token(_ n: UInt8) throws -> PushToken {
        try PushToken.make(root: "island", device: "d", app: "org.example.A", randomBytes: [UInt8](repeating: n, count: PushToken.secretBytes))
    }

    @Test func aGapInTheNumbersIsCountedOnceByTheNextPushThatArrives() throws {
        var registry = PushRegistry()
        let topic = try token(1).topic
        registry.setToken(try token(1), activity: "A1", owner: owner)
        #expect(registry.receive(sequence: 1, topic: topic) == 0)
        #expect(registry.receive(sequence: 2, topic: topic) == 0)
        #expect(registry.receive(sequence: 6, topic: topic) == 3, "3, 4 and 5 never arrived")
        #expect(registry.receive(sequence: 6, topic: topic) == 0, "a redelivery")
        #expect(registry.receive(sequence: 4, topic: topic) == 0, "late, not missing again")
        #expect(registry.receive(sequence: 7, topic: topic) == 0)
    }

    @Test func aNewTokenCountsFromOneAndARestoredOneFromItsFirstNumberedPush() throws {
        var fresh = PushRegistry()
        fresh.setToken(try token(1), activity: "A1", owner: owner)
        #expect(fresh.receive(sequence: 4, topic: try token(1).topic) == 3, "1 to 3 never arrived")
        // Restored from the store: the count did not survive the restart.
        var restored = PushRegistry([PushRegistry.Entry(token: try token(2), grant: .activity(id: "A2", owner: owner))])
        #expect(restored.receive(sequence: 40, topic: try token(2).topic) == 0)
        #expect(restored.receive(sequence: 42, topic: try token(2).topic) == 1)
    }

    @Test func aRotatedTokenCountsAgainAndAnUnknownTopicCountsNothing() throws {
        var registry = PushRegistry()
        registry.setToken(try token(1), activity: "A1", owner: owner)
        _ = registry.receive(sequence: 9, topic: try token(1).topic)
        registry.setToken(try token(2), activity: "A1", owner: owner)
        #expect(registry.receive(sequence: 1, topic: try token(2).topic) == 0)
        #expect(registry.receive(sequence: 5, topic: try token(1).topic) == 0, "revoked")
    }

    @Test func thePayloadsSequenceIsAWholeNumberFromOne() throws {
        let request = try PushPayload.decode(Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{},"sequence":12}}"#.utf8))
        #expect(request.sequence == 12)
        #expect(try PushPayload.decode(Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{}}}"#.utf8)).sequence == nil)
        for bad in ["0", "-1", "1.5", "\"3\"", "1e300"] {
            #expect(throws: PushRefusal.self) {
                try PushPayload.decode(Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{},"sequence":\#(bad)}}"#.utf8))
            }
        }
    }

    @Test func theAnswerRepeatsTheNumberAndSaysWhatWasMissed() throws {
        var feedback = PushFeedback(timestamp: 5, event: .update, outcome: .applied(activity: "A1"), receivedAt: 6)
        #expect(!String(decoding: feedback.payload, as: UTF8.self).contains("sequence"))
        feedback.sequence = 6
        feedback.missed = 3
        let object = try #require(try JSONParser.parse(feedback.payload).objectValue)
        #expect(object["sequence"] == .int(6))
        #expect(object["missed"] == .int(3))
        feedback.missed = 0
        #expect(try JSONParser.parse(feedback.payload).objectValue?["missed"] == nil)
    }
}
