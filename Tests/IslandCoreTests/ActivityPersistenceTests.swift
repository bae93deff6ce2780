import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("Persistence: activity JSON and manager snapshots")
struct ActivityPersistenceTests: ActivityTesting {
    /// Through compact text and back, as the store does.
    static func viaText(_ object: JSONObject) throws -> JSONObject {
        try #require(JSONParser.parse(JSON.object(object).serialized()).objectValue)
    }

    @Test func aNewActivityHasThisStoredForm() throws {
        var manager = makeManager()
        let activity = try manager.start()
        let text = String(decoding: JSON.object(activity.json).serialized(), as: UTF8.self)
        #expect(
            text == """
                {"id":"1","app":"org.example.Pizza","type":"Delivery","attributes":{"order":"42"},\
                "content":{"state":{"step":0},"relevanceScore":0.0},\
                "deliveredContent":{"state":{"step":0},"relevanceScore":0.0},\
                "deliveredAt":1700000000.0,"state":"active","ownerGonePolicy":"keep",\
                "createdAt":1700000000.0,"updatedAt":1700000000.0}
                """)
        #expect(try Activity(json: activity.json) == activity)
    }

    @Test func everyFieldRoundTripsExactly() throws {
        var manager = makeManager()
        let id = try manager.start(
            key: "order-42", content: content(0, staleDate: t0 + 3600.25, relevance: 0.7), ownerGonePolicy: .stale
        ).id
        _ = try manager.update(id, step: 1, timestamp: 1_700_000_123.456, staleDate: t0 + 7200.125, at: t0 + 10.1)
        _ = try manager.update(id, step: 2, timestamp: 1_700_000_124.5, at: t0 + 10.3)
        _ = manager.ownerGone(app: pizza, now: t0 + 10.4)
        let live = try #require(manager.activity(id: id))
        #expect(live.key == "order-42")
        #expect(live.lastTimestamp == 1_700_000_124.5)
        #expect(live.nextDeliveryAt == t0 + 10.6)
        #expect(live.ownerGraceEndsAt == t0 + 10.4 + 30)
        #expect(live.deliveredContent != live.content)

        let ended = try manager.end(app: pizza, id: id, dismissalPolicy: .after(t0 + 100.75), now: t0 + 11).activity
        #expect(ended.endReason == .app)
        #expect(ended.endedAt == t0 + 11)
        #expect(ended.dismissAt == t0 + 100.75)

        for activity in [live, ended] {
            #expect(try Activity(json: activity.json) == activity)
            #expect(try Activity(json: Self.viaText(activity.json)) == activity)
        }
    }

    @Test func malformedActivitiesSayWhatIsWrong() throws {
        var manager = makeManager()
        let good = try manager.start().json

        var missing = good
        missing["id"] = nil
        #expect(throws: ActivityDecodingError(path: "id", problem: "missing")) { try Activity(json: missing) }

        var wrongType = good
        wrongType["content"] = ["state": "text"]
        #expect(throws: ActivityDecodingError(path: "content.state", problem: "expected object, found string")) {
            try Activity(json: wrongType)
        }

        var unknownState = good
        unknownState["state"] = "paused"
        #expect(throws: ActivityDecodingError(path: "state", problem: "unknown value \"paused\"")) {
            try Activity(json: unknownState)
        }
    }

    /// A manager with one of everything: a throttled active activity, a stale one waiting for its
    /// owner, an ended one, settings changed and budgets spent.
    func busyManager() throws -> ActivityManager {
        var manager = makeManager()
        let a = try manager.start(pizza, key: "a", content: content(0, staleDate: t0 + 900), at: t0)
        _ = try manager.update(a.id, step: 1, alert: Alert(title: "t", body: "b"), timestamp: 5, at: t0 + 1)
        _ = try manager.update(a.id, step: 2, timestamp: 6, at: t0 + 1.2)  // throttled
        let b = try manager.start(weather, ownerGonePolicy: .stale, at: t0 + 2)
        _ = manager.ownerGone(app: weather, now: t0 + 3)
        let c = try manager.start(weather, at: t0 + 4)
        _ = try manager.end(app: weather, id: c.id, content: content(9), now: t0 + 5)
        _ = manager.setFrequentUpdates(app: pizza, false, now: t0)
        _ = manager.setEnabled(app: "org.example.Muted", false, now: t0 + 6)
        expectIDs(manager.list().map(\.id), [a.id, b.id, c.id])
        return manager
    }

    @Test func aSnapshotRestoresEveryActivitySettingAndBudget() throws {
        let original = try busyManager()
        let snapshot = original.snapshot
        let decoded = try ManagerSnapshot(json: Self.viaText(snapshot.json))
        #expect(decoded == snapshot)

        let now = t0 + 7
        var restored = ActivityManager(snapshot: decoded, now: now, makeID: { "restored" })
        #expect(restored.snapshot == snapshot)
        #expect(restored.list() == original.list())
        #expect(restored.settings == original.settings)
        #expect(restored.budgets == original.budgets)
        expectDeadline(restored.nextDeadline, original.nextDeadline)
        for app in [pizza, weather, "org.example.Muted"] {
            #expect(
                restored.authorization(app: app, entitlement: entitledFrequent, now: now)
                    == original.authorization(app: app, entitlement: entitledFrequent, now: now)
            )
        }
        // The restored manager behaves exactly like the original from here on.
        var continued = original
        let later = t0 + 13 * 3600
        #expect(restored.advance(to: later) == continued.advance(to: later))
        #expect(restored.snapshot == continued.snapshot)
        #expect(try restored.start(at: later).id == "restored")
    }

    @Test func settingsAndBudgetsAreStoredApartFromTheActivities() throws {
        let manager = try busyManager()
        let stored = try Self.viaText(manager.settingsAndBudgetsJSON)
        #expect(stored == manager.snapshot.settingsAndBudgetsJSON)
        #expect(Array(stored.keys) == ["budgets", "settings"])
        let rows = try manager.list().map { try Activity(json: Self.viaText($0.json)) }
        #expect(try ManagerSnapshot(activities: rows, settingsAndBudgetsJSON: stored) == manager.snapshot)

        let corrupt: JSONObject = ["budgets": ["alerts": ["org.example.Pizza": ["soon"]]]]
        #expect(throws: ActivityDecodingError(path: "budgets.alerts.org.example.Pizza.0", problem: "expected a number, found string")) {
            try ManagerSnapshot(activities: [], settingsAndBudgetsJSON: corrupt)
        }
    }

    @Test func timersThatFellDueWhileTheDaemonWasDownApplyOnTheFirstAdvance() throws {
        var manager = makeManager()
        let id = try manager.start().id
        _ = try manager.update(id, step: 1, at: t0 + 10)
        _ = try manager.update(id, step: 2, at: t0 + 10.2)  // waiting for its slot at t0 + 10.5
        let snapshot = manager.snapshot

        let now = t0 + 9 * 3600
        var restored = ActivityManager(snapshot: snapshot, now: now, makeID: { "x" })
        expectState(restored.activity(id: id)?.state, .active)  // nothing happens before `advance`
        expectDeadline(restored.nextDeadline, t0 + 10.5)

        let events = restored.advance(to: now)
        expectLabels(events, ["changed:1:active", "delivered:1", "changed:1:ended", "delivered:1"])
        let expired = try #require(restored.activity(id: id))
        #expect(expired.endReason == .expired)
        #expect(expired.endedAt == t0 + 8 * 3600)
        #expect(expired.dismissAt == t0 + 12 * 3600)
        #expect(expired.deliveredContent == content(2))

        // Down for longer than the dismissal delay too: expired and gone in one go.
        var longDown = ActivityManager(snapshot: snapshot, now: t0 + 13 * 3600, makeID: { "x" })
        #expect(
            longDown.advance(to: t0 + 13 * 3600).labels.suffix(4) == [
                "changed:1:ended", "delivered:1", "changed:1:dismissed", "removed:1",
            ])
        #expect(longDown.list().isEmpty)
    }

    @Test func budgetsSurviveARestartWithinTheirWindowAndAreForgottenAfter() throws {
        var manager = makeManager(limits: limits { $0.maximumActivitiesPerApp = 20 })
        for second in 0..<10 { try manager.start(at: t0 + Double(second)) }
        let budgets = try ActivityBudgets(json: Self.viaText(manager.budgets.json))
        #expect(budgets == manager.budgets)
        #expect(budgets.starts.times[ActivityOwner(app: pizza)]?.count == 10)
        let snapshot = ManagerSnapshot(activities: [], budgets: budgets, settings: ActivitySettings())

        var soon = ActivityManager(snapshot: snapshot, limits: manager.limits, now: t0 + 30, makeID: { "x" })
        #expect(throws: IslandError.startBudgetExceeded(app: pizza, limit: 10, window: 60, retryAfter: 30)) {
            try soon.start(at: t0 + 30)
        }

        let late = ActivityManager(snapshot: snapshot, limits: manager.limits, now: t0 + 120, makeID: { "x" })
        #expect(late.budgets.starts.times.isEmpty)
    }
}

/// A content made from the text a producer sent (the daemon's path of an update) is the same
/// content as one made from the tree, whose tree it gives when asked.
@Suite struct ActivityContentTextTests {
    @Test func aContentFromTextIsTheContentOfItsTree() throws {
        let states: [JSONObject] = [[:], ["stage": "brewing", "eta": 1_900_000_000], ["n": ["a": [1, nil, true]], "é": "ü"]]
        for state in states {
            let text = JSON.object(state).serialized()
            let fromText = ActivityContent(canonicalText: text, staleDate: 5, relevanceScore: 2)
            let fromTree = ActivityContent(state: state, staleDate: 5, relevanceScore: 2)
            #expect(fromText.state == state)
            #expect(fromText.stateText == text)
            #expect(fromText == fromTree)
            #expect(fromText.hashValue == fromTree.hashValue)
        }
        #expect(ActivityContent(canonicalText: Array(#"{"a":1}"#.utf8)) != ActivityContent(state: ["a": 2]))
        // Setting the state replaces the text too.
        var content = ActivityContent(canonicalText: Array(#"{"a":1}"#.utf8))
        content.state = ["b": "x"]
        #expect(content.stateText == Array(#"{"b":"x"}"#.utf8) && content.state == ["b": "x"])
    }
}
