import Foundation
import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon
@testable import IslandStore

/// A broadcast channel's message that asks no answers is committed without waiting for the
/// disk (`synchronous = NORMAL`: kept through `kill -9`, docs/design.md §8); an answered one,
/// a token's push and a producer's call still wait for it (`FULL`).
@Suite struct ChannelCommitTests {
    static let app = IslandEngineTests.app
    static let channel = "c0ffee00c0ffee00c0ffee"
    let gateway = PushGatewayTests()

    /// Whether the last commit waited for the disk: the store's `synchronous` as the writer left it.
    private func lastCommitSynced(_ fixture: PushGatewayTests.Fixture) throws -> Bool {
        switch try fixture.writer.store.pragma("synchronous") {
        case "2": return true
        case "1": return false
        case let other: throw StoreError(.writeFailed, path: "", message: "synchronous is \(other ?? "nil")")
        }
    }

    /// Publishes `state` on the channel, and returns once every listening activity's decision
    /// is committed, with the answers.
    private func publish(_ fixture: PushGatewayTests.Fixture, _ state: JSONObject, feedback: Bool) async -> [PushFeedback] {
        let topic = "island/channels/\(Self.app)/\(Self.channel)"
        var payload: JSONObject = [
            "aps": ["timestamp": .double(fixture.clock.now), "event": "update", "content-state": .object(state)]
        ]
        if feedback { payload["feedback"] = true }
        let bytes = JSON.object(payload).serialized()
        return await withCheckedContinuation { continuation in
            fixture.push.perform { push in
                push.receiveChannel(topic: topic, payload: bytes) { answers in continuation.resume(returning: answers.map(\.feedback)) }
            }
        }
    }

    @Test func onlyAChannelMessageNobodyIsToldOfSkipsTheDiskSync() async throws {
        let fixture = try await gateway.makeGateway(broker: RecordingBroker())
        defer { fixture.close() }
        let listening: Result<(Activity, Bool, String?), EngineError> = await withCheckedContinuation { continuation in
            fixture.push.perform { push in
                push.request(
                    channel: Self.channel, alsoToken: false, app: Self.app, type: "Delivery", attributes: [:],
                    content: ActivityContent(state: ["n": 0]), key: nil, ownerGone: .keep, sourceApp: nil, uid: nil, decided: {},
                    prepare: { $0 }
                ) { continuation.resume(returning: $0) }
            }
        }
        let activity = try listening.get().0
        #expect(try lastCommitSynced(fixture), "a producer's Request")

        fixture.clock.advance(by: 1)
        #expect(await publish(fixture, ["n": 1], feedback: false).isEmpty)
        #expect(try !lastCommitSynced(fixture), "no answer: nobody waits for the disk")
        fixture.clock.advance(by: 1)
        let answers = await publish(fixture, ["n": 2], feedback: true)
        #expect(answers.map(\.outcome) == [.applied(activity: activity.id)])
        #expect(try lastCommitSynced(fixture), "answered: on disk before the answer")
        fixture.clock.advance(by: 1)
        #expect(await publish(fixture, ["n": 3], feedback: false).isEmpty)
        #expect(try !lastCommitSynced(fixture))

        // A token's push is always answered: synced.
        let (_, token) = try await gateway.requestWithToken(fixture.push)
        fixture.clock.advance(by: 1)
        #expect(await publish(fixture, ["n": 4], feedback: false).isEmpty)
        #expect(try !lastCommitSynced(fixture))
        let applied = await gateway.push(
            fixture.push, token, ["timestamp": .double(fixture.clock.now), "event": "update", "content-state": ["n": 1]])
        #expect(applied["outcome"] == "applied")
        #expect(try lastCommitSynced(fixture), "a token's push")

        // Each is on disk all the same, synced or not.
        let stored = try fixture.writer.store.load().activities.first { $0.id == activity.id }
        #expect(stored?.body["content"]?.objectValue?["state"] == ["n": 4])
    }
}
