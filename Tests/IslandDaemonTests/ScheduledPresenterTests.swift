import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// A scheduled activity is no presenter's business until it starts: not in a snapshot, not in
/// a delta, not in the island — and when it ends before it started, not even its removal.
@Suite struct ScheduledPresenterTests {
    let t0 = ActivityMaker.t0
    let alert = Alert(title: "Doors open", body: "Gate B")

    func makeHub(_ activities: [Activity] = []) -> PresenterHub {
        PresenterHub(activities: activities, focusSince: nil, scope: .user, layouts: LayoutCache(registered: [:], apps: AppRegistry(manifests: [])))
    }

    func schedule(_ maker: inout ActivityMaker, at start: Double) throws -> (Activity, [ActivityEvent]) {
        let outcome = try maker.manager.request(
            app: "org.example.Coffee", type: "T", attributes: [:], content: ActivityContent(state: ["n": 0]),
            start: start, alert: alert, entitlement: AppAuthorization(entitled: true), now: t0)
        return (outcome.activity, outcome.events)
    }

    func updates(_ sink: RecordingSink) -> [JSONObject] {
        sink.replies.compactMap { $0["update"]?.objectValue }
    }

    func mentions(_ update: JSONObject, _ id: String) -> Bool {
        String(decoding: JSON.object(update).serialized(), as: UTF8.self).contains("\"\(id)\"")
    }

    @Test func pendingIsShownToNoPresenterUntilItStartsWithItsAlert() throws {
        var maker = ActivityMaker()
        let (pending, requested) = try schedule(&maker, at: t0 + 60)
        var hub = makeHub([pending])
        let (encoded, _) = hub.snapshot(for: 1000, resync: false, now: t0)
        #expect(!mentions((try JSONParser.parse(encoded.bytes)).objectValue!, pending.id), "a restored pending activity is in no snapshot")
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)
        hub.show(requested, now: t0)
        let (_, updated) = try maker.update(pending, state: ["n": 1], alert: alert, at: t0 + 1)
        hub.show(updated, now: t0 + 1)
        #expect(updates(presenter).filter { mentions($0, pending.id) }.isEmpty)

        hub.show(maker.manager.advance(to: t0 + 60), now: t0 + 60)
        let shown = updates(presenter).filter { mentions($0, pending.id) }
        #expect(shown.count == 1)
        #expect(shown.first?["alert"]?["id"]?.stringValue == pending.id)
        #expect(shown.first?["island"]?["attached"]?.stringValue == pending.id)
    }

    @Test func endedBeforeItStartedItsRemovalIsNotShownEither() throws {
        var maker = ActivityMaker()
        let (pending, requested) = try schedule(&maker, at: t0 + 60)
        var hub = makeHub()
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)
        hub.show(requested, now: t0)
        let (ended, events) = try maker.end(pending, at: t0 + 1)
        #expect(ended.state == .dismissed)
        hub.show(events, now: t0 + 1)
        #expect(updates(presenter).filter { mentions($0, pending.id) }.isEmpty)
        #expect(hub.shown.isEmpty)
    }
}
