import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The watcher hub on its own: which watchers are told what.
@Suite struct WatcherHubTests {
    static let coffee = "org.example.Coffee"
    static let tea = "org.example.Tea"
    let t0 = ActivityMaker.t0

    /// `kind:id` of each event a watcher was sent.
    func events(_ sink: RecordingSink) -> [String] {
        sink.replies.compactMap { reply in
            guard let event = reply["event"], let kind = event["kind"]?.stringValue else { return nil }
            return event["activity"]?["id"]?.stringValue.map { "\(kind):\($0)" } ?? kind
        }
    }

    func watcher(_ hub: inout WatcherHub, app: String, uid: UInt32? = nil, ids: Set<String>? = nil) -> RecordingSink {
        let (responder, sink) = watchResponder()
        _ = hub.add(owner: ActivityOwner(app: app, uid: uid), ids: ids, focusSince: nil, responder: responder)
        return sink
    }

    @Test func eachWatcherIsToldOfItsOwnActivitiesOnly() throws {
        var maker = ActivityMaker()
        var hub = WatcherHub(activities: [])
        let (first, firstEvents) = try maker.start(app: Self.coffee)
        let (second, secondEvents) = try maker.start(app: Self.coffee)
        let (tea, teaEvents) = try maker.start(app: Self.tea)

        let everyCoffee = watcher(&hub, app: Self.coffee)
        let firstOnly = watcher(&hub, app: Self.coffee, ids: [first.id])
        let teaWatcher = watcher(&hub, app: Self.tea)
        var newStates: [String] = []
        hub.tell(firstEvents + secondEvents + teaEvents) { newStates.append($0.id) }

        #expect(events(everyCoffee) == ["watching", "state:\(first.id)", "state:\(second.id)"])
        #expect(events(firstOnly) == ["watching", "state:\(first.id)"])
        #expect(events(teaWatcher) == ["watching", "state:\(tea.id)"])
        #expect(newStates == [first.id, second.id, tea.id], "the journal hears of every new state")
    }

    /// Do Not Disturb is the user's: every app's watchers hear of it, those of a few ids too.
    @Test func focusIsToldToEveryWatcher() throws {
        var hub = WatcherHub(activities: [])
        let coffee = watcher(&hub, app: Self.coffee)
        let oneActivity = watcher(&hub, app: Self.coffee, ids: ["x"])
        let tea = watcher(&hub, app: Self.tea, uid: 1001)
        var maker = ActivityManager(makeID: { "a" })
        let events = maker.setFocus(true, now: t0)
        hub.tell(events) { _ in Issue.record("no activity changed") }
        for sink in [coffee, oneActivity, tea] {
            #expect(self.events(sink) == ["watching", "focus"])
            #expect(sink.replies.last?["event"]?["focus"] == ["on": true, "since": .double(t0)])
        }

        let (responder, late) = watchResponder()
        _ = hub.add(owner: ActivityOwner(app: Self.tea), ids: nil, focusSince: t0, responder: responder)
        #expect(late.replies.first?["event"] == ["kind": "watching", "focus": ["on": true, "since": .double(t0)]])
    }

    @Test func contentIsToldWhenDeliveredAndDifferent() throws {
        var maker = ActivityMaker()
        let (activity, _) = try maker.start()
        var hub = WatcherHub(activities: [activity])
        let sink = watcher(&hub, app: Self.coffee)

        let (_, update) = try maker.update(activity, state: ["n": 1], at: t0 + 2)
        hub.tell(update) { _ in Issue.record("no state changed") }
        hub.tell(update) { _ in }
        let (_, end) = try maker.end(activity, at: t0 + 3)
        hub.tell(end) { _ in }
        #expect(
            events(sink) == ["watching", "content:\(activity.id)", "state:\(activity.id)"],
            "content once, however often it is delivered; then the end")
    }

    /// An immediate dismissal is heard as `ended`, then `dismissed`, as in ActivityKit.
    @Test func anImmediateDismissalIsHeardAsEndedThenDismissed() throws {
        var maker = ActivityMaker()
        let (activity, _) = try maker.start()
        var hub = WatcherHub(activities: [activity])
        let sink = watcher(&hub, app: Self.coffee)
        let (_, end) = try maker.end(activity, dismissal: .immediate, at: t0 + 3)
        hub.tell(end) { _ in }
        let states = sink.replies.compactMap { $0["event"]?["activity"]?["state"]?.stringValue }
        #expect(states == ["ended", "dismissed"])
        #expect(sink.replies.last?["event"]?["activity"]?["endReason"] == "app")
    }

    @Test func inTheSystemScopeAWatcherSeesOnlyItsUsersActivities() throws {
        var maker = ActivityMaker()
        var hub = WatcherHub(activities: [])
        let alice = watcher(&hub, app: Self.coffee, uid: 1000)
        let bob = watcher(&hub, app: Self.coffee, uid: 1001)
        let (mine, events) = try maker.start(uid: 1000)
        hub.tell(events) { _ in }
        #expect(self.events(alice) == ["watching", "state:\(mine.id)"])
        #expect(self.events(bob) == ["watching"])
    }

    @Test func tapsAndPressesGoToTheActivitysWatchers() throws {
        var maker = ActivityMaker()
        let (activity, _) = try maker.start()
        var hub = WatcherHub(activities: [activity])
        let coffee = watcher(&hub, app: Self.coffee)
        let tea = watcher(&hub, app: Self.tea)
        hub.tell(about: activity) { .tap(activity, url: "https://example.org") }
        hub.tell(about: activity) { .button(activity, action: "pause") }
        #expect(events(coffee) == ["watching", "tap:\(activity.id)", "button:\(activity.id)"])
        #expect(coffee.replies[1]["event"]?["url"] == "https://example.org")
        #expect(coffee.replies[2]["event"]?["action"] == "pause")
        #expect(events(tea) == ["watching"])
    }

    @Test func authorizationEventsGoToTheAppsWatchersOrToAll() throws {
        var hub = WatcherHub(activities: [])
        let alice = watcher(&hub, app: Self.coffee, uid: 1000)
        let bob = watcher(&hub, app: Self.coffee, uid: 1001)
        let tea = watcher(&hub, app: Self.tea)
        var asked: [ActivityOwner] = []
        func info(_ owner: ActivityOwner) -> AuthorizationInfo {
            asked.append(owner)
            return ActivityManager(makeID: { "" }).authorization(
                app: owner.app, uid: owner.uid,
                entitlement: AppAuthorization(entitled: owner.uid != 1001), now: t0)
        }
        hub.tellAuthorization(of: Self.coffee, info)
        #expect(Set(asked) == [ActivityOwner(app: Self.coffee, uid: 1000), ActivityOwner(app: Self.coffee, uid: 1001)])
        #expect(events(alice) == ["watching", "authorization"])
        #expect(alice.replies[1]["event"]?["authorization"]?["enabled"] == true)
        #expect(bob.replies[1]["event"]?["authorization"]?["enabled"] == false, "each owner's own")
        #expect(events(tea) == ["watching"])
        hub.tellAuthorization(of: nil, info)
        #expect(events(tea) == ["watching", "authorization"])
    }

    /// The hub finds the activity it last told of by one reference, where it was in its
    /// table: once an activity is removed from the table, that place is looked up afresh.
    @Test func updatesAfterAnActivityWentAreToldAsEver() throws {
        var maker = ActivityMaker()
        let (first, _) = try maker.start()
        let (second, _) = try maker.start()
        var hub = WatcherHub(activities: [first, second])
        let sink = watcher(&hub, app: Self.coffee)

        let (_, firstUpdate) = try maker.update(first, state: ["n": 1], at: t0 + 1)
        hub.tell(firstUpdate) { _ in Issue.record("no state changed") }
        hub.tell([.removed(id: first.id)]) { _ in }
        let (_, secondUpdate) = try maker.update(second, state: ["n": 1], at: t0 + 2)
        hub.tell(secondUpdate) { _ in Issue.record("no state changed") }
        let (third, thirdEvents) = try maker.start()
        hub.tell(thirdEvents) { _ in }
        let (_, thirdUpdate) = try maker.update(third, state: ["n": 1], at: t0 + 3)
        hub.tell(thirdUpdate) { _ in Issue.record("no state changed") }
        let (_, secondAgain) = try maker.update(second, state: ["n": 2], at: t0 + 4)
        hub.tell(secondAgain) { _ in Issue.record("no state changed") }
        hub.tell(secondAgain) { _ in Issue.record("no state changed") }
        #expect(
            events(sink) == [
                "watching", "content:\(first.id)", "content:\(second.id)", "state:\(third.id)", "content:\(third.id)",
                "content:\(second.id)",
            ])
    }

    @Test func aRemovedWatcherIsToldNothingMore() throws {
        var maker = ActivityMaker()
        var hub = WatcherHub(activities: [])
        let (responder, sink) = watchResponder()
        let id = hub.add(owner: ActivityOwner(app: Self.coffee), ids: nil, focusSince: nil, responder: responder)
        hub.remove(id)
        let (_, events) = try maker.start()
        hub.tell(events) { _ in }
        #expect(self.events(sink) == ["watching"])
    }
}
