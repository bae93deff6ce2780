import IslandCore
import OrderedCollections
import OrderedJSON
@testable import IslandStore
import Testing
@testable import IslandDaemon

/// A long turn of changes somebody waits for, on the real engine and store: the writer gets
/// their commits a part at a time as each fills (`PipelineStateMachine.handOverEvery`), not
/// all at the turn's end, and they still finish in the order they were decided.
@Suite struct TurnPartTests {
    let base = IslandEngineTests()

    @Test func aPipelinedTurnHandsTheStoreEachPartAsItFillsAndTheRestAtItsEnd() async throws {
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let part = PipelineStateMachine<IslandEngine.TurnCommit>.handOverEvery
        let count = 2 * part + 1
        let log = LingeringCommitTests.Log()
        // Held back, the writer's queue counts the commits handed to it.
        fixture.writer.setPaused(true)
        // One closure on the loop is one turn, as one read of pipelined calls is: the writer's
        // queue after each decision, read before the turn ends.
        let handedOver = await withCheckedContinuation { (seen: CheckedContinuation<[Int], Never>) in
            engine.perform { engine in
                var handedOver: [Int] = []
                for n in 1...count {
                    engine.update(
                        app: IslandEngineTests.app, uid: nil, id: activity.id, content: ActivityContent(state: ["n": .int(n)]),
                        alert: nil, timestamp: nil,
                        waiter: ClosureWaiter(decided: {}, prepare: { (_: UpdateOutcome) in }, awaited: true, syncing: true) {
                            _, result in log.note(result.isSuccess ? "reply \(n)" : "failed \(n)")
                        })
                    handedOver.append(fixture.writer.pendingCount)
                }
                seen.resume(returning: handedOver)
            }
        }
        #expect(handedOver[part - 2] == 0, "a part goes once it is full")
        #expect(handedOver[part - 1] == 1, "the first part goes to the store as it fills, before the turn ends")
        #expect(handedOver[2 * part - 2] == 1)
        #expect(handedOver[2 * part - 1] == 2, "and the second")
        #expect(handedOver[count - 1] == 2, "the rest waits for the turn's end")

        // A call on the engine runs after the end of the turn the updates were decided in.
        _ = await engine.list(app: IslandEngineTests.app, uid: nil, type: nil, states: nil)
        #expect(fixture.writer.pendingCount == 3, "the turn's end hands over the rest")
        #expect(log.all == [], "nothing is answered before its commit")

        fixture.writer.setPaused(false)
        try await engine.commitEverythingDecided()
        _ = await engine.list(app: IslandEngineTests.app, uid: nil, type: nil, states: nil)
        #expect(log.all == (1...count).map { "reply \($0)" }, "every caller answered once committed, in the order of decision")
    }
}
