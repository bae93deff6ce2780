import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// islandd.conf's `AlertSec=` and `ExpandedSec=` reach every island the engine arbitrates:
/// an alert holds for the configured time, on the engine's clock, and no longer.
extension IslandEngineTests {
    @Test func anAlertHoldsForAlertSecAndNoLonger() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        var daemon = DaemonSettings()
        daemon.alertFor = 60
        await engine.timeExpansions(daemon)
        let activity = try await start(engine)
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        #expect(await eventually { presenter.replies.count == 1 })

        let loud = try await update(engine, activity.id, n: 1, alert: Alert(title: "Ready", body: "Counter 2"))
        #expect(loud.alerted)
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["island"]?["mode"] == "expanded")
        // Past the built-in 5 s, within the configured 60: what the engine's timer does when it
        // fires (arbitrating every island at the clock's time) leaves the alert holding it open.
        fixture.clock.advance(by: 59)
        await engine.advanceAndWait()
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["island"]?["mode"] == "expanded")
        fixture.clock.advance(by: 2)
        await engine.advanceAndWait()
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["island"]?["mode"] == "compact")
    }
}
