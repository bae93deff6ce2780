import IslandCore
import IslandStore
import OrderedCollections
import OrderedJSON
import Synchronization
import Testing
@testable import IslandDaemon

/// Commits nobody waits for, on the real engine and store. With a linger of an hour and a
/// thousand rows, a commit goes when the test's next step sends it, never when the clock does.
@Suite struct LingeringCommitTests {
    let base = IslandEngineTests()
    static let anHour = PipelineStateMachine<IslandEngine.TurnCommit>.Linger(seconds: 3600, rows: 1000)

    /// What finished, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        var all: [String] { entries.withLock { $0 } }
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    /// Updates activity `id` as a `oneway` call does, nobody waiting for its commit; returns
    /// once it is decided. `log` is told when it finishes.
    func onewayUpdate(_ engine: IslandEngine, _ id: String, n: Int, log: Log) async {
        await update(engine, id, n: n, log: log, as: "oneway", awaited: false)
    }

    /// Updates activity `id` with a waiter that is `awaited` and `syncing` as given (see
    /// `DecisionWaiter`); returns once it is decided. `log` is told "`label` `n`" when it
    /// finishes, "failed `n`" when it fails.
    func update(
        _ engine: IslandEngine, _ id: String, n: Int, log: Log, as label: String, awaited: Bool = true, syncing: Bool = true
    ) async {
        await withCheckedContinuation { (decided: CheckedContinuation<Void, Never>) in
            engine.perform { engine in
                engine.update(
                    app: IslandEngineTests.app, uid: nil, id: id, content: ActivityContent(state: ["n": .int(n)]), alert: nil,
                    timestamp: nil,
                    waiter: ClosureWaiter(
                        decided: { decided.resume() }, prepare: { (_: UpdateOutcome) in }, awaited: awaited, syncing: syncing
                    ) { _, result in log.note(result.isSuccess ? "\(label) \(n)" : "failed \(n)") })
            }
        }
    }

    /// The `n` of activity `id`'s content on disk.
    func storedN(_ fixture: IslandEngineTests.Fixture, _ id: String) throws -> JSON? {
        let row = try fixture.writer.store.load().activities.first { $0.id == id }
        return row?.body["content"]?.objectValue?["state"]?.objectValue?["n"]
    }

    @Test func aChangeNobodyWaitsForLingersAndStoppingCommitsIt() async throws {
        let fixture = try await base.makeEngine(linger: Self.anHour)
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let committed = fixture.writer.transactionCount
        let log = Log()
        await onewayUpdate(engine, activity.id, n: 1, log: log)
        // A call on the engine runs after the end of the turn the update was decided in.
        _ = await engine.list(app: IslandEngineTests.app, uid: nil, type: nil, states: nil)
        #expect(fixture.writer.transactionCount == committed, "it lingers")
        #expect(try storedN(fixture, activity.id) == 0)
        #expect(log.all == [])

        try await engine.commitEverythingDecided()
        #expect(fixture.writer.transactionCount == committed + 1)
        #expect(try storedN(fixture, activity.id) == 1)
        #expect(log.all == ["oneway 1"])
    }

    @Test func aCallThatWaitsTakesTheLingeringChangesWithItAndTheyFinishFirst() async throws {
        let fixture = try await base.makeEngine(linger: Self.anHour)
        defer { fixture.close() }
        let engine = fixture.engine
        let (first, second) = (try await base.start(engine), try await base.start(engine))
        let committed = fixture.writer.transactionCount
        let log = Log()
        await onewayUpdate(engine, first.id, n: 1, log: log)
        await onewayUpdate(engine, first.id, n: 2, log: log)
        try await base.update(engine, second.id, n: 3)
        log.note("answered")
        #expect(log.all == ["oneway 1", "oneway 2", "answered"], "in the order of decision")
        #expect(fixture.writer.transactionCount == committed + 1, "one commit for the three")
        #expect(try storedN(fixture, first.id) == 2)
        #expect(try storedN(fixture, second.id) == 3)
    }

    @Test func aChangeNobodyWaitsForIsCommittedByTheLingersTimer() async throws {
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let log = Log()
        await onewayUpdate(engine, activity.id, n: 1, log: log)
        #expect(await base.eventually { log.all == ["oneway 1"] }, "\(log.all)")
        #expect(try storedN(fixture, activity.id) == 1)
    }
}

extension Result {
    /// For the engine tests' logs of what finished (`LingeringCommitTests.Log`).
    var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
