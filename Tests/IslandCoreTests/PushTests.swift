import IslandCore
import OrderedJSON
import OrderedCollections
import SeededRandom
import Testing

/// Sixteen bytes from a seed, so a token's secret is known.
private func secret(_ seed: UInt64) -> [UInt8] {
    (0..<UInt64(PushToken.secretBytes)).map { UInt8(truncatingIfNeeded: seed &* 31 &+ $0 &* 7) }
}

@Suite struct PushTokenTests {
    @Test func aTokenIsItsTopicAndItsFeedbackIsBelowIt() throws {
        let token = try PushToken.make(root: "island", device: "kitchen-42", app: "org.example.Pizza", randomBytes: secret(0))
        #expect(token.secret.count == 32)
        #expect(token.secret.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(token.topic == "island/kitchen-42/org.example.Pizza/\(token.secret)")
        #expect(token.feedbackTopic == "island/kitchen-42/org.example.Pizza/\(token.feedbackID)/feedback")
        #expect(try PushToken(token.topic) == token)
    }

    /// A backend subscribed to `island/+/<app>/+/feedback` once read other devices' tokens in
    /// the feedback topics' names.
    @Test func theFeedbackTopicNamesTheTokenByAHashNotByItsSecret() throws {
        let token = try PushToken.make(root: "island", device: "d", app: "org.example.A", randomBytes: Array(0..<16).map { UInt8($0 * 17) })
        #expect(token.secret == "00112233445566778899aabbccddeeff")
        // printf %s 00112233445566778899aabbccddeeff | sha256sum | cut -c1-32
        #expect(token.feedbackID == "5947d7c33d783f94b3b4c1a96ebc8991")
        #expect(token.feedbackTopic == "island/d/org.example.A/5947d7c33d783f94b3b4c1a96ebc8991/feedback")
        #expect(!token.feedbackTopic.contains(token.secret))
        #expect(PushToken.feedbackTopic(of: token.topic) == token.feedbackTopic)
        #expect(PushToken.feedbackTopic(of: "island/d/org.example.A/nosecret") == nil)
        // What a reader of the feedback topic learns is no token the device listens to.
        let learned = String(token.feedbackTopic.dropLast("/feedback".count))
        #expect(try PushToken(learned) != token)
    }

    @Test func sha256MatchesTheStandardsVectors() {
        func hex(_ text: String) -> String { SHA256.hash(Array(text.utf8)).map { String($0, radix: 16).leftPadded(2) }.joined() }
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func theSecretIsTheBytesInHexadecimal() throws {
        let token = try PushToken.make(root: "island", device: "d", app: "org.example.A", randomBytes: Array(0..<16).map { UInt8($0 * 17) })
        #expect(token.secret == "00112233445566778899aabbccddeeff")
    }

    @Test func aRootMayHaveSeveralLevels() throws {
        let token = try PushToken.make(root: "fleet/eu/island", device: "d1", app: "org.example.A", randomBytes: secret(7))
        let read = try PushToken(token.topic)
        #expect(read.root == "fleet/eu/island")
        #expect(read.device == "d1")
        #expect(read.app == "org.example.A")
    }

    @Test(arguments: [
        ("island", "dev+ice", "org.example.A"), ("island", "dev#", "org.example.A"), ("island", "a/b", "org.example.A"),
        ("island", "", "org.example.A"), ("island", "d", "org.example.+"), ("island", "d", "org/example"),
        ("$SYS", "d", "org.example.A"), ("island//x", "d", "org.example.A"), ("island", "nul\u{0}", "org.example.A"),
        ("island", String(repeating: "d", count: 256), "org.example.A"),
    ])
    func levelsThatBreakTheTopicGrammarAreRefused(root: String, device: String, app: String) {
        #expect(throws: PushTopicError.self) { try PushToken.make(root: root, device: device, app: app, randomBytes: secret(1)) }
    }

    @Test(arguments: [
        "island/d/org.example.A", "island/d/org.example.A/0123", "island/d/org.example.A/0123456789ABCDEF0123456789ABCDEF",
        "island/d/org.example.A/0123456789abcdef0123456789abcdeg", "island/+/org.example.A/0123456789abcdef0123456789abcdef",
        "island/d/org.example.A/0123456789abcdef0123456789abcdef/feedback",
    ])
    func textThatIsNoTokenIsRefused(text: String) {
        #expect(throws: PushTopicError.self) { try PushToken(text) }
    }
}

@Suite struct PushPayloadTests {
    func decode(_ text: String) throws(PushRefusal) -> PushRequest {
        try PushPayload.decode(Array(text.utf8))
    }

    func refusal(_ text: String) -> PushRefusal? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func anUpdateReadsEveryField() throws {
        let request = try decode(
            """
            {"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"stage": "baking", "n": 2},
                     "stale-date": 1700003600, "relevance-score": 50.5, "alert": {"title": "Pizza", "body": "In the oven", "sound": "x"}},
             "custom": {"ignored": true}}
            """)
        #expect(request.event == .update)
        #expect(request.timestamp == 1_700_000_000)
        #expect(request.content == ActivityContent(state: ["stage": "baking", "n": 2], staleDate: 1_700_003_600, relevanceScore: 50.5))
        #expect(request.alert == Alert(title: "Pizza", body: "In the oven"))
        #expect(request.attributesType == nil)
    }

    @Test func aStartCarriesItsTypeAttributesAndTheWishForAToken() throws {
        let request = try decode(
            """
            {"aps": {"timestamp": 1.5, "event": "start", "content-state": {}, "attributes-type": "Delivery",
                     "attributes": {"restaurant": "Roma"}, "input-push-token": 1}}
            """)
        #expect(request.event == .start)
        #expect(request.attributesType == "Delivery")
        #expect(request.attributes == ["restaurant": "Roma"])
        #expect(request.wantsPushToken)
    }

    @Test func anEndMayLeaveOutItsStateAndSayWhenToDismiss() throws {
        let request = try decode(#"{"aps": {"timestamp": 10, "event": "end", "dismissal-date": 20}}"#)
        #expect(request.event == .end)
        #expect(request.content == nil)
        #expect(request.dismissalDate == 20)
        #expect(try decode(#"{"aps": {"timestamp": 10, "event": "end", "content-state": {"done": true}}}"#).content?.state == ["done": true])
    }

    @Test func anAlertStringIsItsBody() throws {
        let request = try decode(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "alert": "Arriving"}}"#)
        #expect(request.alert == Alert(title: "", body: "Arriving"))
    }

    @Test(arguments: [
        ("[]", "the payload must be a JSON object"),
        (#"{"aps": 1}"#, "aps must be an object"),
        (#"{"aps": {"timestamp": 1, "content-state": {}}}"#, "aps.event is missing"),
        (#"{"aps": {"timestamp": 1, "event": "begin", "content-state": {}}}"#, "aps.event must be start, update or end"),
        (#"{"aps": {"event": "update", "content-state": {}}}"#, "aps.timestamp is missing: a push is ordered by it"),
        (#"{"aps": {"timestamp": "1", "event": "update", "content-state": {}}}"#, "aps.timestamp must be a number"),
        (#"{"aps": {"timestamp": -1, "event": "update", "content-state": {}}}"#, "aps.timestamp must be greater than 0"),
        (#"{"aps": {"timestamp": 1, "event": "update"}}"#, "aps.content-state is missing"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": []}}"#, "aps.content-state must be an object"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "stale-date": true}}"#, "aps.stale-date must be a number"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "alert": {"title": 3}}}"#, "aps.alert.title must be a string"),
        (#"{"aps": {"timestamp": 1, "event": "update", "content-state": {}, "alert": {}}}"#, "aps.alert has neither title nor body"),
        (#"{"aps": {"timestamp": 1, "event": "start", "content-state": {}, "attributes": {}}}"#, "aps.attributes-type is missing"),
        (#"{"aps": {"timestamp": 1, "event": "start", "content-state": {}, "attributes-type": "T"}}"#, "aps.attributes is missing"),
        (
            #"{"aps": {"timestamp": 1, "event": "start", "content-state": {}, "attributes-type": "T", "attributes": {}, "input-push-token": 2}}"#,
            "aps.input-push-token must be 1, 0, true or false"
        ),
    ])
    func malformedPayloadsAreRefusedWithTheirReason(payload: String, reason: String) {
        #expect(refusal(payload) == .invalidPayload(reason: reason))
    }

    @Test(arguments: [#"{"aps": {"#, #"{"aps": {"timestamp": 1e999, "event": "update", "content-state": {}}}"#, "\u{FF}"])
    func notJSONIsRefusedAndSaysWhere(payload: String) {
        guard case .invalidPayload(let reason)? = refusal(payload) else {
            Issue.record("\(payload) was not refused as invalid")
            return
        }
        #expect(reason.hasPrefix("not JSON:"))
    }

    @Test func theSizeIsBoundedBeforeParsing() {
        let big = [UInt8](repeating: UInt8(ascii: " "), count: PushPayload.maximumBytes + 1)
        #expect(refusal(String(decoding: big, as: UTF8.self)) == .payloadTooLarge(limit: PushPayload.maximumBytes, size: PushPayload.maximumBytes + 1))
    }

    @Test func nestingIsBoundedWhileParsing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let payload = #"{"aps": {"timestamp": 1, "event": "update", "content-state": {"x": "# + deep + "}}}"
        #expect(payload.utf8.count > PushPayload.maximumBytes)
        let bounded = String(repeating: "[", count: 1_000) + String(repeating: "]", count: 1_000)
        guard case .invalidPayload(let reason)? = refusal(#"{"aps": {"timestamp": 1, "event": "update", "content-state": {"x": "# + bounded + "}}}") else {
            Issue.record("a payload nested 1,000 deep was not refused")
            return
        }
        #expect(reason.hasPrefix("not JSON:"))
    }
}

@Suite struct PushFeedbackTests {
    func json(_ feedback: PushFeedback) throws -> JSONObject {
        try #require(try JSONParser.parse(feedback.payload).objectValue)
    }

    @Test func anAppliedPushNamesItsActivity() throws {
        let object = try json(PushFeedback(timestamp: 5, event: .start, outcome: .applied(activity: "A1", pushToken: "island/d/a.b/x"), receivedAt: 6))
        #expect(object == ["timestamp": 5.0, "event": "start", "outcome": "applied", "activity": "A1", "pushToken": "island/d/a.b/x", "receivedAt": 6.0])
    }

    @Test func aThrottledPushSaysWhenItWillShow() throws {
        let object = try json(
            PushFeedback(timestamp: 5, event: .update, outcome: .throttled(activity: "A1", deliverAt: 5.5, alertSuppressed: .budget), receivedAt: 5.1))
        #expect(object["outcome"] == "throttled")
        #expect(object["deliverAt"] == 5.5)
        #expect(object["alertSuppressed"] == true)
        #expect(object["alertSuppressedReason"] == "budget")
        let quiet = try json(PushFeedback(timestamp: 6, event: .update, outcome: .applied(activity: "A1", alertSuppressed: .focus), receivedAt: 6.1))
        #expect(quiet["alertSuppressed"] == true)
        #expect(quiet["alertSuppressedReason"] == "focus")
        let shown = try json(PushFeedback(timestamp: 7, event: .update, outcome: .applied(activity: "A1"), receivedAt: 7.1))
        #expect(shown["alertSuppressed"] == nil && shown["alertSuppressedReason"] == nil, "nothing said when the alert showed")
    }

    @Test func aRefusalCarriesTheNamedErrorAndWhatTheRequestSaid() throws {
        let refusal = PushRefusal.refused(.staleTimestamp(id: "A1", last: 10, given: 9))
        let object = try json(PushFeedback(request: PushRequest(event: .update, timestamp: 9), refusal: refusal, receivedAt: 11))
        #expect(object["outcome"] == "refused")
        #expect(object["error"] == "org.island.StaleTimestamp")
        #expect(object["parameters"] == ["id": "A1", "last": 10.0, "given": 9.0])
        #expect(object["timestamp"] == 9.0)
        let unreadable = try json(PushFeedback(request: nil, refusal: .invalidPayload(reason: "not JSON"), receivedAt: 11))
        #expect(unreadable["timestamp"] == .null)
        #expect(unreadable["event"] == .null)
        #expect(unreadable["error"] == "org.island.InvalidPushPayload")
    }
}

@Suite struct PushRegistryTests {
    let owner = ActivityOwner(app: "org.example.A", uid: 1000)

    func token(_ n: UInt64) throws -> PushToken {
        try PushToken.make(root: "island", device: "d", app: "org.example.A", randomBytes: secret(n))
    }

    @Test func anActivityTokenIsFoundByItsTopicAndRotatedAway() throws {
        var registry = PushRegistry()
        let first = try token(1), second = try token(2)
        #expect(registry.setToken(first, activity: "A1", owner: owner) == nil)
        #expect(registry.entry(topic: first.topic)?.grant == .activity(id: "A1", owner: owner))
        let replaced = registry.setToken(second, activity: "A1", owner: owner)
        #expect(replaced?.token == first)
        #expect(registry.entry(topic: first.topic) == nil, "the old token stops working at once")
        #expect(registry.token(activity: "A1") == second)
        #expect(registry.revoke(activity: "A1")?.token == second)
        #expect(registry.topics == [])
    }

    @Test func startsThroughAPushToStartTokenAreOrderedByTimestampAcrossRotations() throws {
        var registry = PushRegistry()
        let first = try token(3), second = try token(4)
        try registry.setStartToken(first, owner: owner, type: "Delivery")
        try registry.checkStart(topic: first.topic, timestamp: 10, now: 0)
        registry.recordStart(topic: first.topic, timestamp: 10)
        #expect(throws: IslandError.staleTimestamp(id: "", last: 10, given: 10)) { try registry.checkStart(topic: first.topic, timestamp: 10, now: 0) }
        #expect(throws: IslandError.staleTimestamp(id: "", last: 10, given: 9)) { try registry.checkStart(topic: first.topic, timestamp: 9, now: 0) }
        try registry.setStartToken(second, owner: owner, type: "Delivery")
        #expect(registry.startToken(owner: owner, type: "Delivery") == second)
        #expect(throws: IslandError.self) { try registry.checkStart(topic: second.topic, timestamp: 10, now: 0) }
        try registry.checkStart(topic: second.topic, timestamp: 11, now: 0)
    }

    /// One start in milliseconds once pinned the token's order for ever, across
    /// rotations and restarts.
    @Test func aStartFarAheadOfTheClockIsRefusedAndAnOldPinOrdersNothing() throws {
        let now = 1_700_000_000.0
        var registry = PushRegistry()
        let first = try token(5)
        try registry.setStartToken(first, owner: owner, type: "Delivery")
        #expect(throws: IslandError.implausibleTimestamp(id: "", given: now * 1000, latest: now + 600)) {
            try registry.checkStart(topic: first.topic, timestamp: now * 1000, now: now)
        }
        try registry.checkStart(topic: first.topic, timestamp: now + 600, now: now)
        // A pin from before the rule (as a daemon restarts with its stored rows).
        var restored = PushRegistry([PushRegistry.Entry(token: first, grant: .start(owner: owner, type: "Delivery"), lastStart: now * 1000)])
        try restored.checkStart(topic: first.topic, timestamp: now, now: now)
        restored.recordStart(topic: first.topic, timestamp: now)
        #expect(throws: IslandError.staleTimestamp(id: "", last: now, given: now)) {
            try restored.checkStart(topic: first.topic, timestamp: now, now: now + 1)
        }
    }

    @Test func anOwnerHoldsABoundedNumberOfPushToStartTokens() throws {
        var registry = PushRegistry()
        for n in 0..<PushRegistry.maximumStartTokensPerOwner {
            try registry.setStartToken(try token(UInt64(100 + n)), owner: owner, type: "T\(n)")
        }
        #expect(throws: IslandError.tooManyPushTokens(app: "org.example.A", limit: PushRegistry.maximumStartTokensPerOwner)) {
            try registry.setStartToken(try token(999), owner: owner, type: "one more")
        }
        // Rotating one it has is still allowed; another owner has its own allowance.
        try registry.setStartToken(try token(1000), owner: owner, type: "T0")
        try registry.setStartToken(try token(1001), owner: ActivityOwner(app: "org.example.A", uid: 1001), type: "one more")
    }
}

@Suite struct PushPayloadMutationTests {

    /// Whatever a broker hands over — a valid payload with bytes flipped, dropped, repeated or
    /// cut — is read or refused by name, never a crash or a hang; and what is read obeys the
    /// rules the engine relies on.
    @Test func mutatedPayloadsAreReadOrRefusedNeverTrusted() {
        let seeds = [
            #"{"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"stage": "on the way", "n": [1, 2.5, true, null]}, "alert": {"title": "T", "body": "B"}, "stale-date": 1700003600, "relevance-score": 5}}"#,
            #"{"aps": {"timestamp": 1.5, "event": "start", "content-state": {}, "attributes-type": "Delivery", "attributes": {"order": {"id": "x"}}, "input-push-token": 1}}"#,
            #"{"aps": {"timestamp": 9, "event": "end", "dismissal-date": 0, "content-state": {"done": "yes"}}}"#,
        ].map { Array($0.utf8) }
        var generator = SplitMix64(seed: 20)
        var read = 0, refused = 0
        for round in 0..<6_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(bytes[at], at: at)
                default: bytes = Array(bytes[..<at])
                }
                if bytes.isEmpty { bytes = [0] }
            }
            do {
                let request = try PushPayload.decode(bytes)
                read += 1
                #expect(request.timestamp > 0 && request.timestamp.isFinite)
                #expect(request.event != .update || request.content != nil)
                #expect(request.event != .start || (request.attributesType != nil && request.attributes != nil))
            } catch {
                refused += 1
                #expect(!error.name.isEmpty)
            }
        }
        #expect(read > 0 && refused > 0, "the mutations exercised both ways: \(read) read, \(refused) refused")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// An `end`'s dismissal as the device applies it, for token pushes and channel messages alike.
@Suite struct PushDismissalTests {
    @Test func anEndsDismissalDateIsDefaultAtOnceOrLater() {
        var request = PushRequest(event: .end, timestamp: 100)
        #expect(request.dismissal(receivedAt: 200) == .default)
        request.dismissalDate = 150
        #expect(request.dismissal(receivedAt: 200) == .immediate)
        request.dismissalDate = 200
        #expect(request.dismissal(receivedAt: 200) == .immediate)
        request.dismissalDate = 300
        #expect(request.dismissal(receivedAt: 200) == .after(300))
    }
}
