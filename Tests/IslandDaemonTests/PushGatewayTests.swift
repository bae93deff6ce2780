import Foundation
import IslandCore
import OrderedJSON
import IslandStore
import OrderedCollections
import Synchronization
import Testing
@testable import IslandDaemon

/// What the engine asked of the broker.
final class RecordingBroker: PushBroker {
    /// How the broker answers a subscription that waits for its grant.
    enum Answer: Sendable {
        /// `refuse`: not authorized; `refuseForNow`: refused without a reason, again and again.
        case grant, refuse, refuseForNow, never
        /// Kept for the test to answer (`answer(_:)`).
        case held
    }

    private let state = Mutex<
        (
            subscribed: Set<String>, published: [(topic: String, payload: JSONObject, retained: Bool)],
            held: [(topic: String, answer: @Sendable (SubscriptionAnswer) -> Void)], notes: [String]
        )
    >(([], [], [], []))
    let mode: Answer

    init(answering mode: Answer = .grant) {
        self.mode = mode
    }

    func subscribe(_ topic: String) { state.withLock { _ = $0.subscribed.insert(topic) } }
    func subscribe(_ topic: String, answered: @escaping @Sendable (SubscriptionAnswer) -> Void) {
        subscribe(topic)
        switch mode {
        case .grant: answered(.granted)
        case .refuse: answered(.denied)
        case .refuseForNow:
            answered(.refused)
            answered(.refused)
        case .never: break
        case .held: state.withLock { $0.held.append((topic, answered)) }
        }
    }
    func unsubscribe(_ topic: String) { state.withLock { _ = $0.subscribed.remove(topic) } }
    func publish(_ topic: String, payload: [UInt8], retain: Bool) {
        let object = (try? JSONParser.parse(payload).objectValue) ?? [:]
        state.withLock { $0.published.append((topic, object, retain)) }
    }

    var subscribed: Set<String> { state.withLock { $0.subscribed } }
    var published: [(topic: String, payload: JSONObject, retained: Bool)] { state.withLock { $0.published } }
    /// What happened, in order, as the test wrote it down (`note`).
    var notes: [String] { state.withLock { $0.notes } }
    func note(_ text: String) { state.withLock { $0.notes.append(text) } }

    /// The first held subscription's topic, once one is held (within a liveness bound).
    func held() async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let topic = state.withLock({ $0.held.first?.topic }) { return topic }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("no subscription waited for the broker's answer")
        throw CancellationError()
    }

    /// Answers the held subscriptions, noting `granted` or `refused` first.
    func answer(_ granted: Bool) {
        let held = state.withLock { state in
            defer { state.held = [] }
            state.notes.append(granted ? "granted" : "refused")
            return state.held
        }
        for (_, answer) in held { answer(granted ? .granted : .denied) }
    }
}

/// Push as a client of the engine: tokens issued, persisted, rotated and revoked, and pushes
/// applied as the owner's own calls, with their feedback.
@Suite struct PushGatewayTests {
    static let app = IslandEngineTests.app
    let base = IslandEngineTests()

    /// The engine, and push as its client.
    struct Fixture {
        let base: IslandEngineTests.Fixture
        let push: PushGateway
        var engine: IslandEngine { base.engine }
        var writer: StoreWriter { base.writer }
        var clock: IslandEngineTests.ManualClock { base.clock }
        func close() { base.close() }
    }

    func makeGateway(broker: RecordingBroker?, stored: [StoredPushToken] = []) async throws -> Fixture {
        let base = try await base.makeEngine()
        let push = PushGateway(engine: base.engine)
        if let broker { await push.enable(root: "island", device: "d1", broker: broker, stored: stored) }
        return Fixture(base: base, push: push)
    }

    func requestWithToken(_ push: PushGateway, state: JSONObject = ["n": 0]) async throws -> (Activity, String) {
        try await Self.requestWithToken(push, state: state)
    }

    static func requestWithToken(_ push: PushGateway, state: JSONObject = ["n": 0]) async throws -> (Activity, String) {
        let (activity, _, token): (Activity, Bool, String?) = try await withCheckedThrowingContinuation { continuation in
            push.perform { push in
                push.request(
                    app: Self.app, type: "Delivery", attributes: [:], content: ActivityContent(state: state),
                    key: nil, ownerGone: .keep, uid: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
        return (activity, try #require(token))
    }

    func push(_ push: PushGateway, _ topic: String, _ aps: JSONObject) async -> JSONObject {
        await self.push(push, topic, bytes: JSON.object(["aps": .object(aps)]).serialized())
    }

    func push(_ push: PushGateway, _ topic: String, bytes: [UInt8]) async -> JSONObject {
        let feedback = await withCheckedContinuation { (continuation: CheckedContinuation<PushFeedback, Never>) in
            push.perform { $0.receive(topic: topic, payload: bytes) { continuation.resume(returning: $0) } }
        }
        return (try? JSONParser.parse(feedback.payload).objectValue) ?? [:]
    }

    @Test func aRequestedTokenIsSubscribedStoredAndServedAgainAfterARestart() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let (activity, token) = try await requestWithToken(fixture.push)
        #expect(try PushToken(token).device == "d1")
        #expect(broker.subscribed == [token])
        let stored = try fixture.writer.store.load()
        #expect(stored.pushTokens == [StoredPushToken(token: token, app: Self.app, activityID: activity.id)])

        // Another engine over the same rows, as after a restart.
        let again = RecordingBroker()
        await fixture.push.enable(root: "island", device: "d1", broker: again, stored: stored.pushTokens)
        #expect(again.subscribed == [token])
        #expect(await fixture.push.tokens(of: [activity]) == [token])
        // Rows made for another device id no longer address this one: dropped.
        let moved = RecordingBroker()
        await fixture.push.enable(root: "island", device: "d2", broker: moved, stored: stored.pushTokens)
        #expect(moved.subscribed == [])
    }

    @Test func aPushUpdatesAsTheOwnerWouldAndTheOrderIsKept() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let (activity, token) = try await requestWithToken(fixture.push)
        fixture.clock.advance(by: 10)
        let applied = await push(fixture.push, token, ["timestamp": 5, "event": "update", "content-state": ["n": 1]])
        #expect(applied["outcome"] == "applied")
        #expect(applied["activity"] == .string(activity.id))
        #expect(await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil).first?.content.state == ["n": 1])

        let throttled = await push(fixture.push, token, ["timestamp": 6, "event": "update", "content-state": ["n": 2]])
        #expect(throttled["outcome"] == "throttled", "within the activity's update rate: coalesced, as a local update")
        #expect(throttled["deliverAt"]?.doubleValue == fixture.clock.now + 0.5)

        let stale = await push(fixture.push, token, ["timestamp": 6, "event": "update", "content-state": ["n": 3]])
        #expect(stale["error"] == "org.island.StaleTimestamp")
        #expect(stale["parameters"] == ["id": .string(activity.id), "last": 6.0, "given": 6.0])
        #expect(await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil).first?.content.state == ["n": 2])
    }

    /// A push's 60 KB alert once reached every presenter.
    @Test func aPushWithAnAlertOverTheBoundIsRefusedByName() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let (activity, token) = try await requestWithToken(fixture.push)
        let big = String(repeating: "x", count: 30_000)
        let refused = await push(
            fixture.push, token,
            [
                "timestamp": 5, "event": "update", "content-state": ["n": 1],
                "alert": ["title": .string(big), "body": .string(big)],
            ])
        #expect(refused["error"] == "org.island.AlertTooLarge")
        #expect(refused["parameters"] == ["limit": 1024, "size": 60_000])
        #expect(await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil).first?.content.state == ["n": 0])
        let small = await push(
            fixture.push, token,
            [
                "timestamp": 6, "event": "update", "content-state": ["n": 2],
                "alert": ["title": "Coffee", "body": "Ready"],
            ])
        #expect(small["outcome"] == "applied")
        #expect(small["activity"] == .string(activity.id))
    }

    /// A backend's `Date.now()` (milliseconds) once pinned the activity's order,
    /// and a push-to-start token's across rotations and restarts: its server could never start
    /// that type again.
    @Test func aTimestampInMillisecondsIsRefusedAndPinsNothing() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let now = fixture.clock.now
        let (activity, token) = try await requestWithToken(fixture.push)
        let refused = await push(fixture.push, token, ["timestamp": .double(now * 1000), "event": "update", "content-state": ["n": 1]])
        #expect(refused["error"] == "org.island.ImplausibleTimestamp")
        #expect(refused["parameters"] == ["id": .string(activity.id), "given": .double(now * 1000), "latest": .double(now + 600)])
        fixture.clock.advance(by: 10)
        let applied = await push(fixture.push, token, ["timestamp": .double(now), "event": "update", "content-state": ["n": 2]])
        #expect(applied["outcome"] == "applied", "\(applied)")

        // A push-to-start token stored with a pin in milliseconds, as an older daemon kept it.
        let startToken = "island/d1/\(Self.app)/0123456789abcdef0123456789abcdef"
        let pinned = StoredPushToken(token: startToken, app: Self.app, type: "Delivery", lastTimestamp: now * 1000)
        await fixture.push.enable(root: "island", device: "d1", broker: broker, stored: [pinned])
        let start: JSONObject = [
            "timestamp": .double(now), "event": "start", "content-state": [:], "attributes-type": "Delivery",
            "attributes": [:],
        ]
        let started = await push(fixture.push, startToken, start)
        #expect(started["outcome"] == "applied", "\(started)")
        var later = start
        later["timestamp"] = .double(now * 1000 + 1)
        let refusedStart = await push(fixture.push, startToken, later)
        #expect(refusedStart["error"] == "org.island.ImplausibleTimestamp")
        #expect(refusedStart["parameters"]?["id"] == "")
    }

    /// A redelivered duplicate, refused at once, was once answered before the first copy, whose
    /// answer waits for its commit.
    @Test func answersGoOutInTheOrderThePushesCame() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let (_, token) = try await requestWithToken(fixture.push)
        fixture.clock.advance(by: 10)
        func bytes(_ timestamp: Int, _ n: Int) -> [UInt8] {
            JSON.object(["aps": ["timestamp": .int(timestamp), "event": "update", "content-state": ["n": .int(n)]]]).serialized()
        }
        let answers = Mutex<[JSONObject]>([])
        let pushes = [bytes(5, 1), bytes(5, 1), bytes(4, 0), bytes(6, 2)]
        // In one turn of the engine, as the broker's messages arrive back to back.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            fixture.push.perform { push in
                for payload in pushes {
                    push.receive(topic: token, payload: payload) { feedback in
                        let object = (try? JSONParser.parse(feedback.payload).objectValue) ?? [:]
                        let count = answers.withLock {
                            $0.append(object); return $0.count
                        }
                        if count == pushes.count { done.resume() }
                    }
                }
            }
        }
        let got = answers.withLock { $0 }
        #expect(got.map { $0["timestamp"] } == [5.0, 5.0, 4.0, 6.0], "\(got)")
        #expect(got.map { $0["error"] ?? $0["outcome"] } == ["applied", "org.island.StaleTimestamp", "org.island.StaleTimestamp", "throttled"])
    }

    @Test func anEndThatDismissesRevokesTheTokenInTheSameCommitAndSaysSoAfterItsFeedback() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let (_, token) = try await requestWithToken(fixture.push)
        let ended = await push(fixture.push, token, ["timestamp": 1, "event": "end", "dismissal-date": 0])
        #expect(ended["outcome"] == "applied")
        #expect(broker.subscribed == [])
        #expect(try fixture.writer.store.load().pushTokens == [])
        #expect(await base.eventually { broker.published.count == 1 })
        #expect(broker.published.first?.topic == (try PushToken(token)).feedbackTopic)
        #expect(broker.published.first?.topic.contains(try PushToken(token).secret) == false)
        #expect(broker.published.first?.payload["outcome"] == "revoked")
        #expect(broker.published.first?.payload["reason"] == "dismissed")
        #expect(broker.published.first?.retained == true, "a server pushing to the token later hears of it at once")
    }

    @Test func aTokenNobodyHoldsIsRefusedAndUnsubscribed() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let topic = "island/d1/\(Self.app)/0123456789abcdef0123456789abcdef"
        broker.subscribe(topic)
        let answer = await push(fixture.push, topic, ["timestamp": 1, "event": "update", "content-state": [:]])
        #expect(answer["error"] == "org.island.NoSuchPushToken")
        #expect(answer["timestamp"] == 1.0, "what could be read of the push is repeated")
        #expect(broker.subscribed == [])
    }

    @Test func aPushToStartTokenStartsOnceAndOnlyItsType() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let token = try await fixture.push.startToken(app: Self.app, uid: nil, type: "Delivery", rotate: false)
        let start: JSONObject = [
            "timestamp": 10, "event": "start", "content-state": ["stage": "ordered"], "attributes-type": "Delivery",
            "attributes": ["order": 1], "input-push-token": 1,
        ]
        let started = await push(fixture.push, token, start)
        #expect(started["outcome"] == "applied")
        let activities = await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil)
        #expect(activities.count == 1)
        #expect(activities.first?.ownerGonePolicy == .keep)
        let activityToken = try #require(started["pushToken"]?.stringValue)
        #expect(await fixture.push.tokens(of: activities) == [activityToken])
        #expect(broker.subscribed == [token, activityToken])

        let again = await push(fixture.push, token, start)
        #expect(again["error"] == "org.island.StaleTimestamp", "a redelivered start starts nothing")
        var other = start
        other["timestamp"] = 11
        other["attributes-type"] = "Flight"
        #expect(await push(fixture.push, token, other)["error"] == "org.island.InvalidPushPayload")
        #expect(
            await push(fixture.push, activityToken, other)["error"] == "org.island.InvalidPushPayload",
            "an activity's token starts nothing")
        #expect(await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil).count == 1)

        // The last start survives a rotation: the old pushes cannot be replayed on the new token.
        let rotated = try await fixture.push.startToken(app: Self.app, uid: nil, type: "Delivery", rotate: true)
        #expect(rotated != token)
        #expect(!broker.subscribed.contains(token))
        #expect(await push(fixture.push, rotated, start)["error"] == "org.island.StaleTimestamp")
        let row = try fixture.writer.store.load().pushTokens.first { $0.token == rotated }
        #expect(row?.lastTimestamp == 10)
    }

    @Test func theUsersSwitchAppliesToPushesToo() async throws {
        let broker = RecordingBroker()
        let fixture = try await makeGateway(broker: broker)
        defer { fixture.close() }
        let token = try await fixture.push.startToken(app: Self.app, uid: nil, type: "Delivery", rotate: false)
        try await fixture.engine.setEnabled(app: Self.app, enabled: false)
        let answer = await push(
            fixture.push, token,
            [
                "timestamp": 1, "event": "start", "content-state": [:],
                "attributes-type": "Delivery", "attributes": [:],
            ])
        #expect(answer["error"] == "org.island.Denied")
    }

    @Test func withPushOffAskingForATokenIsRefusedByName() async throws {
        let fixture = try await makeGateway(broker: nil)
        defer { fixture.close() }
        let activity = try await base.start(fixture.engine)
        await #expect(throws: EngineError.pushUnavailable(reason: PushGateway.pushOff)) {
            try await fixture.push.token(app: Self.app, uid: nil, id: activity.id, rotate: false)
        }
        await #expect(throws: EngineError.pushUnavailable(reason: PushGateway.pushOff)) {
            try await fixture.push.startToken(app: Self.app, uid: nil, type: "T", rotate: false)
        }
    }

    // MARK: The broker's grant

    func makeGateway(answering mode: RecordingBroker.Answer, timeout: Duration = .seconds(30)) async throws -> (Fixture, RecordingBroker) {
        let broker = RecordingBroker(answering: mode)
        let base = try await base.makeEngine()
        let push = PushGateway(engine: base.engine)
        await push.enable(root: "island", device: "d1", broker: broker, stored: [], subscriptionTimeout: timeout)
        return (Fixture(base: base, push: push), broker)
    }

    func activities(_ fixture: Fixture) async -> [Activity] {
        await fixture.engine.list(app: Self.app, uid: nil, type: nil, states: nil)
    }

    /// A token was once handed out as its SUBSCRIBE was queued: a server that pushed the
    /// moment it had it could reach the broker before the subscription, and the push was lost.
    @Test func aTokenIsHandedOutOnlyOnceTheBrokerGrantsItsSubscription() async throws {
        let (fixture, broker) = try await makeGateway(answering: .held)
        defer { fixture.close() }
        let push = fixture.push
        let reply = Task {
            let (_, token) = try await Self.requestWithToken(push)
            broker.note("token")
            return token
        }
        let topic = try await broker.held()
        broker.answer(true)
        #expect(try await reply.value == topic)
        #expect(broker.notes == ["granted", "token"])

        let id = try #require(await activities(fixture).first).id
        let rotated = Task {
            let token = try await push.token(app: Self.app, uid: nil, id: id, rotate: true)
            broker.note("rotated")
            return token
        }
        let next = try await broker.held()
        broker.answer(true)
        #expect(try await rotated.value == next)
        let started = Task {
            let token = try await push.startToken(app: Self.app, uid: nil, type: "Delivery", rotate: false)
            broker.note("push-to-start")
            return token
        }
        let start = try await broker.held()
        broker.answer(true)
        #expect(try await started.value == start)
        #expect(broker.notes == ["granted", "token", "granted", "rotated", "granted", "push-to-start"])
    }

    @Test func aTokenTheBrokerRefusesIsRefusedByNameAndStartsNothing() async throws {
        let (fixture, broker) = try await makeGateway(answering: .refuse)
        defer { fixture.close() }
        do {
            _ = try await requestWithToken(fixture.push)
            Issue.record("a token the broker refused was handed out")
        } catch let error as EngineError {
            guard case .pushUnavailable(let reason) = error else { throw error }
            #expect(reason.contains("refused"))
        }
        #expect(await activities(fixture).isEmpty)
        #expect(broker.subscribed.isEmpty, "the refused topic is let go, not asked for again")
        do {
            _ = try await fixture.push.startToken(app: Self.app, uid: nil, type: "Delivery", rotate: false)
            Issue.record("a push-to-start token the broker refused was handed out")
        } catch {
            guard case .pushUnavailable = error else { throw error }
        }
        #expect(broker.subscribed.isEmpty)
    }

    @Test func aBrokerThatNeverAnswersFailsTheRequestByNameOnceTheTimeoutIsOver() async throws {
        let (fixture, broker) = try await makeGateway(answering: .never, timeout: .milliseconds(100))
        defer { fixture.close() }
        do {
            _ = try await requestWithToken(fixture.push)
            Issue.record("a token was handed out without the broker's grant")
        } catch let error as EngineError {
            guard case .pushUnavailable(let reason) = error else { throw error }
            #expect(reason.contains("did not confirm"))
        }
        #expect(await activities(fixture).isEmpty)
        #expect(broker.subscribed.isEmpty)
    }

    /// Under MQTT 3.1.1 a refusal does not say why: a cluster node that cannot place the
    /// subscription yet refuses as an ACL does. Asked again until the timeout, then refused.
    @Test func aRefusalWithoutAReasonIsAskedAgainUntilTheTimeoutThenRefusedByName() async throws {
        let (fixture, broker) = try await makeGateway(answering: .refuseForNow, timeout: .milliseconds(100))
        defer { fixture.close() }
        do {
            _ = try await requestWithToken(fixture.push)
            Issue.record("a token the broker refused was handed out")
        } catch let error as EngineError {
            guard case .pushUnavailable(let reason) = error else { throw error }
            #expect(reason.contains("refused"))
        }
        #expect(await activities(fixture).isEmpty)
        #expect(broker.subscribed.isEmpty)
    }

    /// A channel the broker's ACL does not let the device read once started an activity that
    /// never heard from it.
    @Test func aChannelTheBrokerRefusesFailsTheStartAsAnInvalidChannel() async throws {
        let (fixture, broker) = try await makeGateway(answering: .refuse)
        defer { fixture.close() }
        let id = "c0ffee00c0ffee00c0ffee"
        let result: Result<(Activity, Bool, String?), EngineError> = await withCheckedContinuation { continuation in
            fixture.push.perform { push in
                push.request(
                    channel: id, alsoToken: false, app: Self.app, type: "Delivery", attributes: [:], content: ActivityContent(state: [:]),
                    key: nil, ownerGone: .keep, sourceApp: nil, uid: nil, decided: {}, prepare: { $0 }
                ) { continuation.resume(returning: $0) }
            }
        }
        guard case .failure(.refused(.invalidChannel(let channel, let reason))) = result else {
            Issue.record("expected InvalidChannel, got \(result)")
            return
        }
        #expect(channel == id && reason.contains("refused"))
        #expect(await activities(fixture).isEmpty)
        #expect(broker.subscribed.isEmpty)
    }
}

/// A device whose session another client with the same `ClientID=` kept taking logged two lines a
/// second for ever, and never why.
@Suite struct SessionWatchTests {
    @Test func connectionsDroppedSoonAfterTheyWereAcceptedAreToldOnce() {
        var watch = SessionWatch(stableAfter: 30)
        var now = 0.0
        var told: [Bool] = []
        for _ in 0..<6 {
            watch.connected(at: now)
            now += 0.5
            told.append(watch.ended(at: now, takenOver: false))
            now += 1
        }
        #expect(told == [false, false, true, false, false, false], "once, at the third")
        #expect(SessionWatch.flapping(clientID: "kitchen-42").contains("ClientID=kitchen-42"))
    }

    @Test func aConnectionThatLastedOrAFailedAttemptIsNotIt() {
        var watch = SessionWatch(stableAfter: 30)
        for round in 0..<3 {
            watch.connected(at: Double(round) * 100)
            let lasted = watch.ended(at: Double(round) * 100 + 31, takenOver: false)
            let failed = watch.ended(at: Double(round) * 100 + 40, takenOver: false)
            #expect(!lasted)
            #expect(!failed, "no connection: the broker is away")
        }
        #expect(!watch.told)
    }

    /// A packet too large for the link process ends each connection soon after it began, as
    /// long as the broker resends it: its own log says so, and no other client is blamed.
    @Test func connectionsEndedByAPacketTooLargeBlameNoOtherClient() {
        var watch = SessionWatch(stableAfter: 30)
        for round in 0..<6 {
            watch.connected(at: Double(round))
            watch.endedOtherwise()
            let told = watch.ended(at: Double(round) + 0.5, takenOver: false)
            #expect(!told, "no connection left to count")
        }
        #expect(!watch.told)
    }

    @Test func aBrokerThatSaysTheSessionWasTakenOverIsToldAtOnceAndOnce() {
        var watch = SessionWatch(stableAfter: 30)
        watch.connected(at: 0)
        let first = watch.ended(at: 1, takenOver: true)
        watch.connected(at: 2)
        let second = watch.ended(at: 3, takenOver: true)
        #expect(first)
        #expect(!second)
        #expect(SessionWatch.takenOver(clientID: "kitchen-42").contains("ClientID=kitchen-42"))
    }
}
