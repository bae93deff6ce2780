import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The presenter hub on its own: what each uid's presenters are shown of decided events.
@Suite struct PresenterHubTests {
    let t0 = ActivityMaker.t0

    func makeHub(_ activities: [Activity] = [], scope: DaemonScope = .user) -> PresenterHub {
        PresenterHub(activities: activities, focusSince: nil, scope: scope, layouts: LayoutCache(registered: [:], apps: AppRegistry(manifests: [])))
    }

    /// The `update` of every reply a presenter was sent.
    func updates(_ sink: RecordingSink) -> [JSONObject] {
        sink.replies.compactMap { $0["update"]?.objectValue }
    }

    func itemIDs(_ update: JSONObject?) -> [String] {
        update?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    func snapshot(_ hub: inout PresenterHub, uid: UInt32, resync: Bool = false) -> JSONObject {
        let (encoded, _) = hub.snapshot(for: uid, resync: resync, now: t0)
        return (try? JSONParser.parse(encoded.bytes))?["update"]?.objectValue ?? [:]
    }

    @Test func inTheSystemScopeAUserSeesTheirOwnAndSystemServicesActivities() throws {
        var maker = ActivityMaker()
        let (alice, _) = try maker.start(uid: 1000)
        let (bob, _) = try maker.start(uid: 1001)
        let (service, _) = try maker.start(uid: 105)
        var hub = makeHub([alice, bob, service], scope: .system)

        #expect(itemIDs(snapshot(&hub, uid: 1000)) == [alice.id, service.id])
        #expect(itemIDs(snapshot(&hub, uid: 1001)) == [bob.id, service.id])
        #expect(itemIDs(snapshot(&hub, uid: 0)) == [alice.id, bob.id, service.id], "root sees every activity")
        #expect(snapshot(&hub, uid: 1000)["island"]?["lockScreen"] == [.string(alice.id), .string(service.id)])

        let (aliceResponder, alicePresenter) = presenterResponder()
        let (bobResponder, bobPresenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: aliceResponder, now: t0)
        _ = hub.subscribe(uid: 1001, responder: bobResponder, now: t0)
        let (_, bobsUpdate) = try maker.update(bob, state: ["n": 1], at: t0 + 2)
        hub.show(bobsUpdate, now: t0 + 2)
        #expect(updates(alicePresenter).isEmpty, "another user's update is not shown")
        #expect(updates(bobPresenter).map(itemIDs) == [[bob.id]])
        let (_, servicesUpdate) = try maker.update(service, state: ["n": 1], at: t0 + 2)
        hub.show(servicesUpdate, now: t0 + 2)
        #expect(updates(alicePresenter).map(itemIDs) == [[service.id]])
        #expect(updates(bobPresenter).map(itemIDs) == [[bob.id], [service.id]])
    }

    @Test func inTheUserScopeEveryPresenterSeesEverything() throws {
        var maker = ActivityMaker()
        let (a, _) = try maker.start(uid: 1000)
        let (b, _) = try maker.start(uid: 1001)
        var hub = makeHub([a, b], scope: .user)
        #expect(itemIDs(snapshot(&hub, uid: 1000)) == [a.id, b.id])
        #expect(hub.isVisible(b.id, to: 1000))
    }

    @Test func aDeltaCarriesAnItemsLayoutOnlyWhenItChanged() throws {
        var maker = ActivityMaker()
        let (activity, _) = try maker.start()
        var hub = makeHub([activity])
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)

        let (_, first) = try maker.update(activity, state: ["n": 1], at: t0 + 2)
        hub.show(first, now: t0 + 2)
        let (_, second) = try maker.update(activity, state: ["n": 2], at: t0 + 4)
        hub.show(second, now: t0 + 4)
        let registered: JSON = ["chip": "Coffee", "compactTrailing": ["type": "text", "template": "{{state.n}}"]]
        hub.layouts.register(registered, type: "T", by: activity.owner)
        hub.redraw([activity.id], now: t0 + 4)
        let (_, third) = try maker.update(activity, state: ["n": 3], at: t0 + 6)
        hub.show(third, now: t0 + 6)

        let items = updates(presenter).map { $0["items"]?.arrayValue?.first }
        try #require(items.count == 4)
        #expect(items[0]?["defaultLayout"] == true, "the first delta of an item brings its layout")
        #expect(items[0]?["layout"] != nil)
        #expect(items[1]?["layout"] == nil && items[1]?["defaultLayout"] == nil, "the same layout is not sent again")
        #expect(items[1]?["content"]?["state"] == ["n": 2])
        #expect(items[2]?["layout"] == registered, "a registered layout replaces the default one")
        #expect(items[2]?["defaultLayout"] == false)
        #expect(items[3]?["layout"] == nil)
        #expect(updates(presenter).map { $0["sequence"]?.intValue } == [1, 2, 3, 4])
    }

    /// The hub finds an updated activity where it found the one before, if a version of it is
    /// still there: once an activity before it is removed, that place is another's, or past
    /// the end.
    @Test func updatesAfterAnEarlierActivityWentAreShown() throws {
        var maker = ActivityMaker()
        let (first, _) = try maker.start()
        let (second, _) = try maker.start()
        let (third, _) = try maker.start()
        var hub = makeHub([first, second, third])
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)

        let (_, thirdUpdate) = try maker.update(third, state: ["n": 1], at: t0 + 1)
        hub.show(thirdUpdate, now: t0 + 1)
        // Removed while the hub's last look-up was the third's, at the end.
        hub.show([.removed(id: first.id)], now: t0 + 2)
        let (_, thirdAgain) = try maker.update(third, state: ["n": 2], at: t0 + 3)
        hub.show(thirdAgain, now: t0 + 3)
        let (_, secondUpdate) = try maker.update(second, state: ["n": 3], at: t0 + 4)
        hub.show(secondUpdate, now: t0 + 4)
        let (_, thirdLast) = try maker.update(third, state: ["n": 4], at: t0 + 5)
        hub.show(thirdLast, now: t0 + 5)

        let deltas = updates(presenter).filter { $0["kind"] == "delta" }
        #expect(deltas.map { itemIDs($0) } == [[third.id], [], [third.id], [second.id], [third.id]])
        #expect(
            deltas.map { $0["items"]?.arrayValue?.first?["content"]?["state"]?["n"]?.intValue } == [1, nil, 2, 3, 4])
        #expect(hub.shown.keys.map(\.id) == [second.id, third.id])
        #expect(hub.shown[third.hashedID]?.deliveredContent.state == ["n": 4])
        #expect(hub.shown[second.hashedID]?.deliveredContent.state == ["n": 3])
    }

    @Test func anEndedAndDismissedActivityIsRemoved() throws {
        var maker = ActivityMaker()
        let (kept, _) = try maker.start()
        let (gone, _) = try maker.start()
        var hub = makeHub([kept, gone])
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)

        let (_, events) = try maker.end(gone, dismissal: .immediate, at: t0 + 1)
        hub.show(events, now: t0 + 1)
        let delta = try #require(updates(presenter).last)
        #expect(delta["kind"] == "delta")
        #expect(delta["removed"] == [.string(gone.id)])
        #expect(itemIDs(delta).isEmpty, "a removed activity is not also an item")
        #expect(delta["island"]?["lockScreen"] == [.string(kept.id)], "the island changed with it")
        #expect(itemIDs(snapshot(&hub, uid: 1000)) == [kept.id])
        #expect(hub.shown[gone.hashedID] == nil)
    }

    /// Presenters are told when an activity ended, so that its card stands still there; a
    /// live one carries no end.
    @Test func anEndedItemSaysWhenItEnded() throws {
        var maker = ActivityMaker()
        let (live, _) = try maker.start()
        let (ending, _) = try maker.start()
        var hub = makeHub([live, ending])
        let (responder, presenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)

        let (_, events) = try maker.end(ending, at: t0 + 5)
        hub.show(events, now: t0 + 5)
        let item = try #require(updates(presenter).last?["items"]?.arrayValue?.first)
        #expect(item["id"] == .string(ending.id) && item["state"] == "ended")
        #expect(item["endedAt"]?.doubleValue == t0 + 5)
        let items = snapshot(&hub, uid: 1000)["items"]?.arrayValue ?? []
        #expect(items.first { $0["id"] == .string(live.id) }?["endedAt"] == nil)
        #expect(items.first { $0["id"] == .string(ending.id) }?["endedAt"]?.doubleValue == t0 + 5)
    }

    @Test func anAlertGoesOnlyToPresentersWhoMaySeeItsActivity() throws {
        var maker = ActivityMaker()
        let (alice, _) = try maker.start(uid: 1000)
        var hub = makeHub([alice], scope: .system)
        let (aliceResponder, alicePresenter) = presenterResponder()
        let (bobResponder, bobPresenter) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: aliceResponder, now: t0)
        _ = hub.subscribe(uid: 1001, responder: bobResponder, now: t0)

        let (_, events) = try maker.update(alice, state: ["n": 1], alert: Alert(title: "Ready", body: "Your coffee"), at: t0 + 2)
        hub.show(events, now: t0 + 2)
        let delta = try #require(updates(alicePresenter).last)
        #expect(delta["alert"] == ["id": .string(alice.id), "title": "Ready", "body": "Your coffee"])
        #expect(delta["island"]?["mode"] == "expanded", "an alert expands the activity")
        #expect(updates(bobPresenter).isEmpty)
        #expect(hub.nextDeadline != nil, "the expansion times out")
        hub.advance(now: hub.nextDeadline! + 1)
        #expect(updates(alicePresenter).last?["island"]?["mode"] == "compact")
    }

    @Test func aResyncIsTheWholeStateNumberedAfterWhatCameBefore() throws {
        var maker = ActivityMaker()
        let (a, _) = try maker.start()
        var hub = makeHub([a])
        let (responder, _) = presenterResponder()
        _ = hub.subscribe(uid: 1000, responder: responder, now: t0)
        let (_, events) = try maker.update(a, state: ["n": 1], at: t0 + 2)
        hub.show(events, now: t0 + 2)
        let (b, _) = try maker.start()

        // Back to what the disk holds: b, which presenters were never shown.
        hub.resync(to: [b], focusSince: nil, now: t0 + 3)
        let resync = snapshot(&hub, uid: 1000, resync: true)
        #expect(resync["kind"] == "snapshot")
        #expect(resync["resync"] == true)
        #expect(resync["sequence"] == 2, "one delta, then the resync")
        #expect(itemIDs(resync) == [b.id])
        #expect(resync["items"]?.arrayValue?.first?["layout"] != nil, "a snapshot carries every layout")
        #expect(resync["removed"] == [])
        #expect(resync["island"]?["attached"] == .string(b.id))
    }
}
