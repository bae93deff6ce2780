import Foundation
import IslandCore
import OrderedJSON
import IslandStore
import Logging
import NIOCore
import NIOPosix
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The engine with a clock the test moves and a store in a temporary directory.
@Suite struct IslandEngineTests {
    static let app = "org.example.Coffee"

    /// Time that passes only when the test says so.
    final class ManualClock: Sendable {
        private let time = Mutex<Double>(1_700_000_000)
        var now: Double { time.withLock { $0 } }
        func advance(by seconds: Double) { time.withLock { $0 += seconds } }
    }

    struct Fixture {
        let engine: IslandEngine
        let writer: StoreWriter
        let clock: ManualClock
        let directory: String

        func close() {
            writer.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    func makeEngine(
        limits: ActivityLimits = .defaults, linger: PipelineStateMachine<IslandEngine.TurnCommit>.Linger = .standard,
        parkedFinishDelay: TimeAmount = .seconds(1)
    ) async throws -> Fixture {
        let directory = NSTemporaryDirectory() + "island-engine-\(UUID().uuidString.prefix(8))"
        let store = try IslandStore.open(directory: directory)
        let writer = StoreWriter(store: store)
        let clock = ManualClock()
        let registry = AppRegistry(manifests: [
            AppManifest(
                id: Self.app, name: "Coffee", supportsLiveActivities: true, supportsFrequentUpdates: false,
                executable: nil, path: "/dev/null")
        ])
        let engine = IslandEngine(
            manager: ActivityManager(limits: LimitsPolicy(global: limits), makeID: { UUID().uuidString }),
            registry: registry, layouts: [:], scope: .user, store: writer,
            loop: MultiThreadedEventLoopGroup.singleton.next(), clock: { clock.now }, logger: Logger(label: "test"),
            linger: linger, parkedFinishDelay: parkedFinishDelay)
        await engine.start(installedLayouts: [:])
        return Fixture(engine: engine, writer: writer, clock: clock, directory: directory)
    }

    func start(_ engine: IslandEngine, staleDate: Double? = nil) async throws -> Activity {
        try await engine.request(
            app: Self.app, type: "T", attributes: [:],
            content: ActivityContent(state: ["n": 0], staleDate: staleDate),
            key: nil, ownerGone: .keep, uid: nil
        ).0
    }

    func update(_ engine: IslandEngine, _ id: String, n: Int) async throws {
        let _: UpdateOutcome = try await withCheckedThrowingContinuation { continuation in
            engine.perform { engine in
                engine.update(
                    app: Self.app, uid: nil, id: id, content: ActivityContent(state: ["n": .int(n)]), alert: nil,
                    timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
    }

    /// Waits for `condition`, which is expected to come true: the bound (30 s) only keeps a
    /// broken engine from hanging the test, and costs nothing when it passes.
    func eventually(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    /// The state of activity `id` in each update a presenter was sent, as `kind:state`.
    func states(of id: String, _ presenter: RecordingSink) -> [String] {
        presenter.replies.compactMap { reply in
            guard let update = reply["update"], let kind = update["kind"]?.stringValue else { return nil }
            let item = update["items"]?.arrayValue?.first { $0["id"]?.stringValue == id }
            let removed = update["removed"]?.arrayValue?.contains(.string(id)) == true
            return "\(kind):" + (removed ? "removed" : item?["state"]?.stringValue ?? "-")
        }
    }

    @Test func theTimerOnTheLoopBringsStalenessAndExpiryToPresenters() async throws {
        var limits = ActivityLimits.defaults
        limits.maximumActiveDuration = 0.15
        let fixture = try await makeEngine(limits: limits)
        defer { fixture.close() }
        let engine = fixture.engine
        let (responder, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: responder)
        // The snapshot is built when it is sent: let it go out first, empty.
        #expect(await eventually { presenter.replies.count == 1 })
        let activity = try await start(engine, staleDate: fixture.clock.now + 0.05)

        fixture.clock.advance(by: 0.06)
        #expect(await eventually { states(of: activity.id, presenter).last == "delta:stale" }, "\(states(of: activity.id, presenter))")
        fixture.clock.advance(by: 0.1)
        #expect(await eventually { states(of: activity.id, presenter).last == "delta:ended" }, "\(states(of: activity.id, presenter))")
        #expect(states(of: activity.id, presenter) == ["snapshot:-", "delta:active", "delta:stale", "delta:ended"])
        #expect(await engine.list(app: Self.app, uid: nil, type: nil, states: nil).first?.endReason == .expired)
    }

    /// The engine keeps each app's entitlement from one call to the next; a reload that takes
    /// it away must be seen by the very next request.
    @Test func aReloadThatTakesTheEntitlementAwayRefusesTheNextRequest() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await start(engine)
        try await update(engine, activity.id, n: 1)
        let withdrawn = AppRegistry(manifests: [
            AppManifest(
                id: Self.app, name: "Coffee", supportsLiveActivities: false, supportsFrequentUpdates: false,
                executable: nil, path: "/dev/null")
        ])
        await engine.reload(registry: withdrawn, installedLayouts: [:], limits: nil, hideWhileSharing: nil)
        await #expect {
            _ = try await start(engine)
        } throws: { error in
            guard case .refused(.unentitled(let app, _)) = error as? EngineError else { return false }
            return app == Self.app
        }
    }

    @Test func aDismissalFallsDueOnTheTimerAndIsRemoved() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await start(engine)
        let (responder, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: responder)
        // The snapshot is built when the stream's task sends it, which a busy machine may run
        // only after the removal: it would then hold no activity, and the deltas it covers
        // would never come. Let it go out first, showing the activity.
        #expect(await eventually { states(of: activity.id, presenter) == ["snapshot:active"] })
        let _: Activity = try await withCheckedThrowingContinuation { continuation in
            engine.perform { engine in
                engine.end(
                    app: Self.app, uid: nil, id: activity.id, content: nil, dismissal: .after(fixture.clock.now + 0.05),
                    timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
        fixture.clock.advance(by: 0.06)
        #expect(await eventually { states(of: activity.id, presenter).last == "delta:removed" }, "\(states(of: activity.id, presenter))")
        #expect(await engine.list(app: Self.app, uid: nil, type: nil, states: nil).isEmpty)
    }

    @Test func aPresenterThatFallsBehindGetsOneResync() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await start(engine)
        let (responder, presenter) = presenterResponder()
        presenter.isWritable = false
        await engine.subscribe(uid: 1000, responder: responder)
        let deltas = StreamBounds.presenterMessages + 6
        for n in 1...deltas {
            fixture.clock.advance(by: 1)
            try await update(engine, activity.id, n: n)
        }
        presenter.isWritable = true
        #expect(await eventually { !presenter.replies.isEmpty })
        // One more change after the resync went out: the stream keeps its order, so anything
        // still queued before it would come between the two.
        fixture.clock.advance(by: 1)
        try await update(engine, activity.id, n: deltas + 1)
        func state(_ update: JSON) -> JSON? { update["items"]?.arrayValue?.first?["content"]?["state"] }
        #expect(await eventually { presenter.replies.compactMap { $0["update"] }.contains { state($0) == ["n": .int(deltas + 1)] } })
        let updates = presenter.replies.compactMap { $0["update"] }
        let first = try #require(updates.first)
        #expect(first["kind"] == "snapshot")
        #expect(first["resync"] == true, "what was queued collapsed into one resync")
        #expect(state(first) == ["n": .int(deltas)], "as of now")
        #expect(updates.count == 2, "no delta the snapshot already holds follows it: \(updates)")
        #expect(updates.last?["kind"] == "delta")
    }

    @Test func aCancelledSubscriptionOrWatchIsDropped() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let (presenterResponder, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterResponder)
        #expect(await engine.status().presenters == 1)
        presenter.cancel()
        #expect(await eventually { await engine.status().presenters == 0 })

        let (leavingResponder, watcher) = watchResponder()
        await engine.watch(app: Self.app, uid: nil, ids: nil, responder: leavingResponder)
        watcher.cancel()
        // A watcher that stays, added after: by the time it hears of the start, every watcher
        // the engine still had was told of it too.
        let (stayingResponder, staying) = watchResponder()
        await engine.watch(app: Self.app, uid: nil, ids: nil, responder: stayingResponder)
        _ = try await start(engine)
        #expect(await eventually { staying.replies.compactMap { $0["event"]?["kind"]?.stringValue } == ["watching", "state"] })
        _ = await engine.status()  // and the engine has finished telling them
        #expect(watcher.replies.compactMap { $0["event"]?["kind"]?.stringValue } == ["watching"])
    }

    @Test func watchersHearOfAChangeOnceItIsCommitted() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let (responder, watcher) = watchResponder()
        await engine.watch(app: Self.app, uid: nil, ids: nil, responder: responder)
        let activity = try await start(engine)
        fixture.clock.advance(by: 1)
        try await update(engine, activity.id, n: 1)
        #expect(await eventually { watcher.replies.count == 3 })
        #expect(watcher.replies.compactMap { $0["event"]?["kind"]?.stringValue } == ["watching", "state", "content"])
        #expect(watcher.replies.last?["event"]?["activity"]?["content"]?["state"] == ["n": 1])
    }

    /// Commits complete in order, but whoever waits for them may resume in any order.
    @Test func decisionsFinishInTheOrderTheyWereMade() {
        var order = DecisionOrder()
        let first = order.decide()
        let second = order.decide()
        let third = order.decide()
        order.commit(second, events: [.removed(id: "b")])
        #expect(order.nextToFinish() == nil, "the second waits for the first")
        order.commit(first, events: [.removed(id: "a")])
        #expect(order.nextToFinish() == [.removed(id: "a")])
        #expect(order.nextToFinish() == [.removed(id: "b")])
        #expect(order.nextToFinish() == nil)
        order.commit(third, events: [])
        #expect(order.nextToFinish() == [], "a failed commit still takes its turn")
        #expect(order.lastFinished == order.lastDecided)
    }
}
