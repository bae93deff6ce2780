import IslandCore
import OrderedJSON
import IslandStore
import Synchronization
import Testing
@testable import IslandDaemon

/// A client of the engine that keeps rows beside the activities, as push does: what it is
/// told, in order, with what the test notes between.
final class RecordingObserver: EngineObserver {
    private let log = Mutex<[String]>([])

    func removing(activity id: String) -> [StoreMutation] {
        note("removing \(id)")
        return [.putSetting(key: "gone:\(id)", value: .bool(true))]
    }

    func committed() { note("committed") }
    func restored(from stored: StoredState) { note("restored \(stored.activities.count)") }
    func islandMayRest() {}

    func note(_ entry: String) { log.withLock { $0.append(entry) } }
    var told: [String] { log.withLock { $0 } }
}

/// How the engine tells a client (push) of its changes, knowing nothing else of it.
@Suite struct EngineObserverTests {
    let base = IslandEngineTests()

    func observe(_ engine: IslandEngine) async -> RecordingObserver {
        let observer = RecordingObserver()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            engine.perform { engine in
                engine.observer = observer
                done.resume()
            }
        }
        return observer
    }

    /// Returns once a turn of the engine's loop queued now has run.
    func turnOfTheLoop(_ engine: IslandEngine) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            engine.performLater { _ in done.resume() }
        }
    }

    @Test func aRemovedActivitysRowsGoInItsCommitAndTheClientHearsOfItAfterTheCaller() async throws {
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let observer = await observe(fixture.engine)
        let activity = try await base.start(fixture.engine)
        let _: Activity = try await withCheckedThrowingContinuation { continuation in
            fixture.engine.perform { engine in
                engine.end(
                    app: IslandEngineTests.app, uid: nil, id: activity.id, content: nil, dismissal: .immediate, timestamp: nil,
                    prepare: { $0 }
                ) { result in
                    observer.note("answered")
                    continuation.resume(with: result)
                }
            }
        }
        // The caller is answered and then the client told, in one turn of the engine's loop,
        // while this task may already run on another thread: a turn queued now runs after both.
        await turnOfTheLoop(fixture.engine)
        #expect(observer.told == ["committed", "removing \(activity.id)", "answered", "committed"])
        let stored = try fixture.writer.store.load()
        #expect(stored.activities.isEmpty)
        #expect(stored.settings["gone:\(activity.id)"] == .bool(true), "in the commit that removed the activity")
    }

    @Test func afterAFailedCommitTheClientIsGivenTheStateOnDisk() async throws {
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        _ = try await base.start(fixture.engine)
        let observer = await observe(fixture.engine)
        fixture.writer.close()
        await #expect(throws: EngineError.self) { try await base.start(fixture.engine) }
        #expect(observer.told == ["restored 1"], "the activity committed before, not the one refused; and no commit to hear of")
    }
}
