import Foundation
import IslandCore
import IslandJSON
import IslandStore
import Logging
import NIOPosix
import Testing
import Varlink
@testable import IslandDaemon

/// In the system scope a user's presenters see their own activities and those of system
/// services, never another user's — and that survives a restart.
@Suite struct SystemScopeVisibilityTests {
    static let app = "org.example.Coffee"

    func makeEngine(directory: String, scope: DaemonScope) async throws -> (IslandEngine, StoreWriter) {
        let store = try IslandStore.open(directory: directory)
        let stored = try store.load()
        let writer = StoreWriter(store: store)
        let logger = Logger(label: "test")
        let registry = AppRegistry(manifests: [
            AppManifest(id: Self.app, name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false,
                        executable: nil, path: "/dev/null"),
        ])
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let engine = IslandEngine(
            manager: StateRestorer.manager(from: stored, limits: LimitsPolicy(), now: clock(), logger: logger),
            registry: registry, layouts: [:], owners: StateRestorer.owners(from: stored), scope: scope,
            store: writer, loop: MultiThreadedEventLoopGroup.singleton.next(), clock: clock, logger: logger)
        await engine.start(installedLayouts: [:])
        return (engine, writer)
    }

    func start(_ engine: IslandEngine, owner: UInt32) async throws -> String {
        let (activity, _) = try await engine.request(
            app: Self.app, type: "T", attributes: ["owner": .int(Int(owner))], content: ActivityContent(state: [:]),
            key: nil, ownerGone: .keep, ownerUID: owner)
        return activity.id
    }

    func visibleIDs(_ engine: IslandEngine, to uid: UInt32) async -> Set<String> {
        let update = await engine.snapshotUpdate(uid: uid, resync: false)
        return Set(update["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
    }

    @Test func usersSeeTheirOwnAndSystemServicesActivities() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        let alice = try await start(engine, owner: 1000)
        let bob = try await start(engine, owner: 1001)
        let service = try await start(engine, owner: 105)

        #expect(await visibleIDs(engine, to: 1000) == [alice, service])
        #expect(await visibleIDs(engine, to: 1001) == [bob, service])
        #expect(await visibleIDs(engine, to: 0) == [alice, bob, service], "root sees every activity")
        let aliceIsland = await engine.snapshotUpdate(uid: 1000, resync: false)["island"]
        #expect(aliceIsland?["lockScreen"] == [.string(alice), .string(service)], "by start time at equal relevance")
        let refusal = await #expect(throws: VarlinkError.self) {
            try await engine.interact(uid: 1000, action: "tap", id: bob, button: nil)
        }
        #expect(refusal?.name == "org.island.NoSuchActivity", "another user's activity does not exist for this presenter")

        // The owners are stored with the activities: a restarted daemon filters the same way.
        writer.close()
        (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        #expect(await visibleIDs(engine, to: 1000) == [alice, service])
        writer.close()
    }

    /// Presenters are shown a change when it is decided, before its commit: when the commit
    /// fails, the state is reread from disk and what presenters see goes back to it.
    @Test func aFailedCommitTakesPresentersBackToTheDisk() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, writer) = try await makeEngine(directory: directory, scope: .user)
        let kept = try await start(engine, owner: 1000)
        writer.close()  // every later commit fails, as on a full disk
        let failure = await #expect(throws: VarlinkError.self) { _ = try await start(engine, owner: 1000) }
        #expect(failure?.name == "org.island.PersistenceFailure")
        #expect(await visibleIDs(engine, to: 1000) == [kept], "the refused activity is no longer shown")
        #expect(await engine.list(app: Self.app, type: nil, states: nil).map(\.id) == [kept])
    }

    @Test func theUserScopeShowsEverything() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, writer) = try await makeEngine(directory: directory, scope: .user)
        let a = try await start(engine, owner: 1000)
        let b = try await start(engine, owner: 1001)
        #expect(await visibleIDs(engine, to: 1000) == [a, b])
        writer.close()
    }
}

