import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import IslandStore
import Logging
import NIOPosix
import Testing
import VarlinkCore
@testable import IslandDaemon

/// Do Not Disturb through the engine: what presenters and watchers are told, what the
/// producer hears, and what the store keeps.
extension IslandEngineTests {
    func update(_ engine: IslandEngine, _ id: String, n: Int, alert: Alert) async throws -> UpdateOutcome {
        try await withCheckedThrowingContinuation { continuation in
            engine.perform { engine in
                engine.update(
                    app: Self.app, uid: nil, id: id, content: ActivityContent(state: ["n": .int(n)]), alert: alert,
                    timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
    }

    func updates(_ presenter: RecordingSink) -> [JSONObject] {
        presenter.replies.compactMap { $0["update"]?.objectValue }
    }

    func events(_ watcher: RecordingSink) -> [JSONObject] {
        watcher.replies.compactMap { $0["event"]?.objectValue }
    }

    @Test func focusReachesPresentersAndWatchersAndSilencesAlerts() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await start(engine)
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        let (watchSide, watcher) = watchResponder()
        await engine.watch(app: Self.app, uid: nil, ids: nil, responder: watchSide)
        #expect(await eventually { presenter.replies.count == 1 })
        #expect(updates(presenter).first?["focus"] == ["on": false], "a snapshot always says")

        fixture.clock.advance(by: 1)
        let since = fixture.clock.now
        #expect(try await engine.setFocus(true) == since)
        #expect(await engine.focusSince == since)
        #expect(await eventually { updates(presenter).count == 2 && events(watcher).count == 2 })
        let focusDelta = try #require(updates(presenter).last)
        #expect(focusDelta["kind"] == "delta")
        #expect(focusDelta["focus"] == ["on": true, "since": .double(since)])
        #expect(focusDelta["items"] == [])
        #expect(events(watcher).map { $0["kind"] } == ["watching", "focus"])
        #expect(events(watcher).last?["focus"] == ["on": true, "since": .double(since)])

        // A watch that begins now is told at once.
        let (lateSide, late) = watchResponder()
        await engine.watch(app: Self.app, uid: nil, ids: nil, responder: lateSide)
        #expect(await eventually { !events(late).isEmpty })
        #expect(events(late).first == ["kind": "watching", "focus": ["on": true, "since": .double(since)]])

        fixture.clock.advance(by: 1)
        let quiet = try await update(engine, activity.id, n: 1, alert: Alert(title: "Ready", body: "Counter 2"))
        #expect(quiet.alertSuppression == .focus)
        #expect(!quiet.alerted)
        #expect(await eventually { updates(presenter).count == 3 })
        let applied = try #require(updates(presenter).last)
        #expect(!applied.keys.contains("alert"), "no alert reaches presenters")
        #expect(!applied.keys.contains("island"), "the island does not expand")
        #expect(!applied.keys.contains("focus"), "a delta carries focus only when it changed")
        #expect(applied["items"]?.arrayValue?.first?["content"]?["state"] == ["n": 1], "the content applies")
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["island"]?["mode"] == "compact")
        #expect(await engine.authorization(app: Self.app, uid: nil).remainingAlerts == 6, "nothing of the budget is spent")

        fixture.clock.advance(by: 1)
        #expect(try await engine.setFocus(false) == nil)
        #expect(await eventually { events(watcher).last?["kind"] == "focus" && events(watcher).last?["focus"] == ["on": false] })
        #expect(await eventually { updates(presenter).last?["focus"] == ["on": false] })

        fixture.clock.advance(by: 1)
        let loud = try await update(engine, activity.id, n: 2, alert: Alert(title: "Ready", body: "Counter 2"))
        #expect(loud.alerted)
        #expect(await eventually { updates(presenter).last?["alert"]?["id"] == .string(activity.id) })
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["island"]?["mode"] == "expanded")
    }

    @Test func focusIsCommittedWithTheSettingsAndComesBackFromTheStore() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let since = fixture.clock.now
        _ = try await fixture.engine.setFocus(true)

        // What a daemon starting on this database reads (the setter answered once committed).
        // (The database is open exclusively, as the daemon keeps it: read through its own store.)
        let stored = try fixture.writer.store.load()
        let manager = StateRestorer.manager(from: stored, limits: LimitsPolicy(), now: since + 60, logger: Logger(label: "test"))
        #expect(manager.focusSince == since)
    }
}
