import Foundation
import IslandCore
import OrderedJSON
import IslandStore
import Logging
import NIOPosix
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore
@testable import IslandDaemon

/// In the system scope a user's presenters see their own activities and those of system
/// services, never another user's — and that survives a restart.
@Suite struct SystemScopeVisibilityTests {
    static let app = "org.example.Coffee"

    /// The engines' time: each reading a millisecond after the one before, however slow the
    /// machine. On the wall clock a test held up for a minute would find its first starts
    /// gone from the start budget's window (60 s), and its counts changed.
    final class TickingClock: Sendable {
        private let time = Mutex<Double>(1_700_000_000)
        var now: Double {
            time.withLock { time in
                time += 0.001
                return time
            }
        }
    }

    /// One per test (each test has an instance of the suite), across its restarts.
    let time = TickingClock()

    func makeEngine(directory: String, scope: DaemonScope) async throws -> (IslandEngine, StoreWriter) {
        let store = try IslandStore.open(directory: directory)
        let stored = try store.load()
        let writer = StoreWriter(store: store)
        let logger = Logger(label: "test")
        let registry = AppRegistry(manifests: [
            AppManifest(
                id: Self.app, name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false,
                executable: nil, path: "/dev/null")
        ])
        let clock: @Sendable () -> Double = { [time] in time.now }
        let engine = IslandEngine(
            manager: StateRestorer.manager(from: stored, limits: LimitsPolicy(), now: clock(), logger: logger),
            registry: registry, layouts: StateRestorer.layouts(from: stored, logger: logger), scope: scope,
            store: writer, loop: MultiThreadedEventLoopGroup.singleton.next(), clock: clock, logger: logger)
        await engine.start(installedLayouts: [:])
        return (engine, writer)
    }

    /// What a daemon's exit does to its store before the next one opens it (the database is
    /// held locked while open).
    func restart(_ writer: StoreWriter) throws {
        writer.close()
        try writer.store.close()
    }

    func start(_ engine: IslandEngine, owner: UInt32) async throws -> String {
        let (activity, _) = try await engine.request(
            app: Self.app, type: "T", attributes: ["owner": .int(Int(owner))], content: ActivityContent(state: [:]),
            key: nil, ownerGone: .keep, uid: owner)
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
        let refusal = await #expect(throws: EngineError.self) {
            try await engine.interact(uid: 1000, action: .tap, id: bob, button: nil)
        }
        #expect(refusal.map(VarlinkError.init)?.name == "org.island.NoSuchActivity", "another user's activity does not exist for this presenter")

        // The owners are stored with the activities: a restarted daemon filters the same way.
        try restart(writer)
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
        let failure = await #expect(throws: EngineError.self) { _ = try await start(engine, owner: 1000) }
        #expect(failure.map(VarlinkError.init)?.name == "org.island.PersistenceFailure")
        #expect(await visibleIDs(engine, to: 1000) == [kept], "the refused activity is no longer shown")
        #expect(await engine.list(app: Self.app, uid: 1000, type: nil, states: nil).map(\.id) == [kept])
    }

    func update(_ engine: IslandEngine, id: String, uid: UInt32, step: Int) async throws -> UpdateOutcome {
        try await withCheckedThrowingContinuation { continuation in
            Task {
                await engine.update(
                    app: Self.app, uid: uid, id: id, content: ActivityContent(state: ["step": .int(step)]),
                    alert: nil, timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
    }

    func end(_ engine: IslandEngine, id: String, uid: UInt32) async throws -> Activity {
        try await withCheckedThrowingContinuation { continuation in
            Task {
                await engine.end(
                    app: Self.app, uid: uid, id: id, content: nil, dismissal: .default, timestamp: nil,
                    prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
    }

    func refusal(_ body: () async throws -> some Any) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch let error as EngineError {
            return VarlinkError(error).name
        } catch {
            return "\(error)"
        }
    }

    /// Two users running the same app (docs/design.md §4): neither lists, updates, ends or finds
    /// by key the other's activity, and each has the app's limits to themselves.
    @Test func twoUsersOfOneAppNeverTouchEachOthersActivities() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        defer { writer.close() }
        let (alice, bob): (UInt32, UInt32) = (1000, 1001)
        let (mine, _) = try await engine.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: [:]),
            key: "order-1", ownerGone: .keep, uid: alice)

        #expect(await engine.list(app: Self.app, uid: bob, type: nil, states: nil).isEmpty)
        #expect(await engine.list(app: Self.app, uid: alice, type: nil, states: nil).map(\.id) == [mine.id])
        #expect(await refusal { try await update(engine, id: mine.id, uid: bob, step: 1) } == "org.island.NoSuchActivity")
        #expect(await refusal { try await end(engine, id: mine.id, uid: bob) } == "org.island.NoSuchActivity")
        #expect(await engine.list(app: Self.app, uid: alice, type: nil, states: nil).first?.state == .active)
        let (theirs, created) = try await engine.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: [:]),
            key: "order-1", ownerGone: .keep, uid: bob)
        #expect(created && theirs.id != mine.id, "a key names one user's activity")

        // The per-app maximum (5) and the remaining starts are each user's.
        for _ in 0..<4 { _ = try await start(engine, owner: alice) }
        #expect(await refusal { try await start(engine, owner: alice) } == "org.island.TargetMaximumExceeded")
        _ = try await start(engine, owner: bob)
        #expect(await engine.authorization(app: Self.app, uid: alice).liveActivities == 5)
        #expect(await engine.authorization(app: Self.app, uid: bob).liveActivities == 2)
        #expect(await engine.authorization(app: Self.app, uid: bob).remainingStarts == 8)

        // Its owner still can.
        #expect(try await update(engine, id: mine.id, uid: alice, step: 2).activity.content.state == ["step": 2])
        #expect(try await end(engine, id: mine.id, uid: alice).state == .ended)
    }

    /// A system service's activity is on every user's island and only the service changes it:
    /// a user's presenter may not dismiss it for everyone; root may, and users their own.
    @Test func onlyRootDismissesASystemServicesActivity() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        defer { writer.close() }
        let service = try await start(engine, owner: 105)
        let alice = try await start(engine, owner: 1000)
        #expect(
            await refusal { try await engine.interact(uid: 1000, action: .dismiss, id: service, button: nil) }
                == "org.island.PermissionDenied")
        #expect(await visibleIDs(engine, to: 1001) == [service], "still on the other user's island")
        _ = try await engine.interact(uid: 1000, action: .dismiss, id: alice, button: nil)
        _ = try await engine.interact(uid: 0, action: .dismiss, id: service, button: nil)
        #expect(await visibleIDs(engine, to: 0).isEmpty)
    }

    /// The layout an extension registers draws only its own user's activities of the app, in
    /// the system scope: another user's extension cannot change what they show or what a tap
    /// opens. Kept across a restart.
    @Test func aUsersLayoutDrawsOnlyThatUsersActivities() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        let alice = try await start(engine, owner: 1000)
        let bob = try await start(engine, owner: 1001)
        let layout: JSON = ["chip": "Bob's", "compactTrailing": ["type": "text", "template": "{{state.stage}}"]]
        try await engine.registerLayout(app: Self.app, uid: 1001, type: "T", layout: layout)

        func item(_ id: String, seenBy uid: UInt32) async -> JSON? {
            await engine.snapshotUpdate(uid: uid, resync: false)["items"]?.arrayValue?.first { $0["id"]?.stringValue == id }
        }
        for _ in 0..<2 {
            #expect(await item(bob, seenBy: 1001)?["layout"] == layout)
            #expect(await item(alice, seenBy: 1000)?["defaultLayout"] == true, "drawn with the default layout")
            #expect(await engine.listLayouts(app: Self.app, uid: 1001).map(\.0) == ["T"])
            #expect(await engine.listLayouts(app: Self.app, uid: 1000).isEmpty)
            try restart(writer)
            (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        }
        try await engine.removeLayout(app: Self.app, uid: 1000, type: "T")
        #expect(await item(bob, seenBy: 1001)?["layout"] == layout, "alice removes nothing of bob's")
        writer.close()
    }

    /// A user's producer leaving applies the producer-death policy to that user's activities
    /// only, while the same app of another user stays connected.
    @Test func theProducerDeathPolicyIsPerUser() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, writer) = try await makeEngine(directory: directory, scope: .system)
        defer { writer.close() }
        await engine.producerConnected(app: Self.app, uid: 1000)
        await engine.producerConnected(app: Self.app, uid: 1001)
        let (mine, _) = try await engine.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: [:]),
            key: nil, ownerGone: .end, uid: 1000)
        let (theirs, _) = try await engine.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: [:]),
            key: nil, ownerGone: .end, uid: 1001)
        await engine.producerDisconnected(app: Self.app, uid: 1001)
        #expect(await engine.list(app: Self.app, uid: 1001, type: nil, states: nil).first { $0.id == theirs.id }?.state == .ended)
        #expect(await engine.list(app: Self.app, uid: 1000, type: nil, states: nil).first { $0.id == mine.id }?.state == .active)
    }

    /// A database written before owners were part of the activity kept them in the setting
    /// "owners": it is moved into the activities at start, and the setting dropped.
    @Test func ownersOfTheSettingAreMovedIntoTheActivities() async throws {
        let directory = NSTemporaryDirectory() + "island-visibility-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var ids: [String] = []
        do {
            let (engine, writer) = try await makeEngine(directory: directory, scope: .user)
            for owner: UInt32 in [1000, 1001] { ids.append(try await start(engine, owner: owner)) }
            try writer.commitNow([.putSetting(key: "owners", value: ["\(ids[0])": 1000, "\(ids[1])": 1001])])
            try restart(writer)
        }
        let store = try IslandStore.open(directory: directory)
        let stored = try store.load()
        #expect(stored.activities.allSatisfy { $0.body["uid"] == nil }, "stored as a daemon before owners did")
        let manager = StateRestorer.manager(
            from: stored, limits: LimitsPolicy(), now: time.now,
            logger: Logger(label: "test"))
        #expect(ids.map { manager.activity(id: $0)?.uid } == [1000, 1001])
        let writer = StoreWriter(store: store)
        try writer.commitNow(StateRestorer.ownersMigration(from: stored, manager: manager))
        try restart(writer)

        let migrated = try IslandStore.open(directory: directory).load()
        #expect(migrated.settings["owners"] == nil)
        #expect(migrated.activities.map { $0.body["uid"] } == [1000, 1001])
        #expect(StateRestorer.ownersMigration(from: migrated, manager: manager).isEmpty, "done once")
        let (engine, restarted) = try await makeEngine(directory: directory, scope: .system)
        #expect(await engine.list(app: Self.app, uid: 1001, type: nil, states: nil).map(\.id) == [ids[1]])
        #expect(await visibleIDs(engine, to: 1000) == [ids[0]])
        restarted.close()
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
