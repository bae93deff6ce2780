import IslandCore
import OrderedCollections
import OrderedJSON
import Testing

@Suite struct PushChannelTests {
    @Test func anIdIsSixteenRandomBytesInBase64URLAndNamesTheAppsTopic() throws {
        let channel = try PushChannel.make(root: "island", app: "org.example.Scores", randomBytes: Array(repeating: 0xFF, count: 16))
        #expect(channel.id == "_____________________w")
        #expect(channel.topic == "island/channels/org.example.Scores/_____________________w")
        #expect(channel.configTopic == channel.topic + "/config")
        #expect(channel.feedbackTopic(device: "kitchen") == "island/kitchen/org.example.Scores/_____________________w/feedback")
        #expect(PushChannel(topic: channel.topic) == channel)
        // 0xF8's first six bits are 62, `-`: an id a command line would take for an option.
        let dash = try PushChannel.make(root: "island", app: "x", randomBytes: [0xF8] + Array(repeating: 0, count: 15))
        #expect(dash.id == "_AAAAAAAAAAAAAAAAAAAAA")
        let zero = try PushChannel.make(root: "a/b", app: "x", randomBytes: Array(repeating: 0, count: 16))
        #expect(zero.id == "AAAAAAAAAAAAAAAAAAAAAA")
        #expect(PushChannel(topic: zero.topic) == zero)
    }

    @Test func whatIsNoChannelIdIsRefusedByName() {
        for id in [
            "", "short", "-AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAA+", "AAAAAAAAAAAAAAAAAAAAA/", "AAAAAAAAAAAAAAAAAAAAA#", "AAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            #expect {
                _ = try PushChannel(root: "island", app: "org.example.A", id: id)
            } throws: { error in
                guard case .invalidChannel = error as? IslandError else { return false }
                return (error as? IslandError)?.name == "org.island.InvalidChannel"
            }
        }
        // A token's topic, a config topic: no channel.
        #expect(PushChannel(topic: "island/device/org.example.A/00112233445566778899aabbccddeeff") == nil)
        #expect(PushChannel(topic: "island/channels/org.example.A/AAAAAAAAAAAAAAAAAAAAAA/config") == nil)
    }

    @Test func aChannelsShapeIsItsThirdLevelFromTheEnd() {
        #expect(PushChannel.hasChannelShape("island/channels/org.example.A/AAAAAAAAAAAAAAAAAAAAAA"))
        #expect(PushChannel.hasChannelShape("a/b/channels/x/AAAAAAAAAAAAAAAAAAAAAA"))
        // The shape alone: a device whose id is `channels` has token topics of that shape, which
        // `init?(topic:)` tells apart.
        #expect(PushChannel.hasChannelShape("island/channels/org.example.A/00112233445566778899aabbccddeeff"))
        for topic in [
            "island/device/org.example.A/00112233445566778899aabbccddeeff", "channels/org.example.A/AAAAAAAAAAAAAAAAAAAAAA",
            "island/channels/org.example.A/AAAAAAAAAAAAAAAAAAAAAA/config", "island/channel/x/y", "island/xchannels/x/y", "", "///",
        ] {
            #expect(!PushChannel.hasChannelShape(topic), "\(topic)")
        }
    }
}

@Suite struct ChannelMessageTests {
    let channel = try! PushChannel(root: "island", app: "org.example.A", id: "AAAAAAAAAAAAAAAAAAAAAA")

    private func bytes(_ aps: JSONObject, _ extra: JSONObject = [:]) -> [UInt8] {
        var top = extra
        top["aps"] = .object(aps)
        return JSON.object(top).serialized()
    }

    @Test func anUpdateIsReadWithItsExpirationAndWhetherItAsksForFeedback() throws {
        let payload = bytes(["timestamp": 100, "event": "update", "content-state": ["score": "2-1"], "expiration": 200], ["feedback": true])
        let message = try ChannelMessage.decode(payload, channel: channel, now: 150)
        #expect(message.request.event == .update && message.expiration == 200 && message.wantsFeedback)
        #expect(message.deadline == 200)
    }

    @Test func aMessageAfterItsExpirationIsRefusedByName() {
        let payload = bytes(["timestamp": 100, "event": "update", "content-state": [:], "expiration": 200])
        #expect(throws: PushRefusal.refused(.channelMessageExpired(channel: channel.id, expiration: 200))) {
            try ChannelMessage.decode(payload, channel: channel, now: 200.5)
        }
    }

    /// One name for the expiry, a token's push's and a channel's: the other is refused, not
    /// ignored, so a backend that used it does not believe its messages expire.
    @Test func anExpiryBesideApsIsRefusedByName() {
        let payload = bytes(["timestamp": 100, "event": "update", "content-state": [:]], ["apns-expiration": 200])
        #expect(throws: PushRefusal.self) { try ChannelMessage.decode(payload, channel: channel, now: 150) }
        #expect(throws: PushRefusal.self) { try PushPayload.decode(payload) }
        do {
            _ = try PushPayload.decode(payload)
        } catch {
            guard case .invalidPayload(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("aps.expiration"))
        }
    }

    @Test func anExpiryOfZeroIsNoneToCheckOnArrival() throws {
        let payload = bytes(["timestamp": 100, "event": "update", "content-state": [:], "expiration": 0])
        let message = try ChannelMessage.decode(payload, channel: channel, now: 150)
        #expect(message.expiration == nil && message.deadline == 100 + 8 * 3600)
    }

    /// A broker without MQTT 5's message expiry retains for ever: the 8 hours hold whatever the
    /// message says.
    @Test func noMessageIsAppliedMoreThanEightHoursAfterItsTimestamp() throws {
        let forever = bytes(["timestamp": 100, "event": "update", "content-state": [:]])
        _ = try ChannelMessage.decode(forever, channel: channel, now: 100 + 8 * 3600)
        #expect(throws: PushRefusal.refused(.channelMessageExpired(channel: channel.id, expiration: 100 + 8 * 3600))) {
            try ChannelMessage.decode(forever, channel: channel, now: 101 + 8 * 3600)
        }
    }

    @Test func aBroadcastStartIsRefusedByName() {
        let payload = bytes(["timestamp": 100, "event": "start", "content-state": [:], "attributes-type": "T", "attributes": [:]])
        #expect(throws: PushRefusal.refused(.broadcastStart(channel: channel.id))) {
            try ChannelMessage.decode(payload, channel: channel, now: 100)
        }
        #expect(IslandError.broadcastStart(channel: "x").name == "org.island.BroadcastStart")
    }

    @Test func aMessageLargerThanABroadcastMayBeIsRefusedBeforeItIsRead() {
        let payload = bytes(["timestamp": 100, "event": "update", "content-state": ["pad": .string(String(repeating: "x", count: 5200))]])
        #expect(throws: PushRefusal.payloadTooLarge(limit: 5120, size: payload.count)) {
            try ChannelMessage.decode(payload, channel: channel, now: 100)
        }
    }

    /// A message is read in one pass from its text when it can be, and through the tree
    /// otherwise: the one pass takes nothing the tree would refuse, and reads what it takes as
    /// the tree does.
    @Test func theOnePassReadsWhatTheTreeReadsAndLeavesTheRestToIt() throws {
        let read: [String] = [
            #"{"aps":{"timestamp":100,"event":"update","content-state":{"score":"2-1","n":[1,{"a":null}]}}}"#,
            #"{"feedback":true,"aps":{"event":"update","timestamp":1.5e2,"content-state":{},"stale-date":300,"relevance-score":50,"#
                + #""priority":5,"expiration":0,"sequence":7,"alert":{"title":"T","body":null}}}"#,
            #" { "aps" : { "event" : "end" , "timestamp" : 100 , "dismissal-date" : 90 } , "feedback" : null } "#,
            #"{"aps":{"event":"end","timestamp":100,"content-state":{"x":1.0},"alert":"body only","priority":1}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{"é":"\u00e9"},"dismissal-date":null,"alert":null}}"#,
        ]
        let treeOnly: [String] = [
            // Refused by the tree, by name.
            #"{"aps":{"event":"update","timestamp":100}}"#,
            #"{"aps":{"event":"update","timestamp":0,"content-state":{}}}"#,
            #"{"aps":{"event":"update","timestamp":-1,"content-state":{}}}"#,
            #"{"aps":{"event":"bounce","timestamp":100,"content-state":{}}}"#,
            #"{"aps":{"event":"update","timestamp":"100","content-state":{}}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":[]}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"priority":7}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"priority":10.5}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"expiration":-1}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"sequence":0}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"sequence":1.5}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"alert":{"title":"","body":""}}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"alert":7}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{}},"feedback":"yes"}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{}},"apns-expiration":5}"#,
            #"{"aps":{"event":"update","timestamp":100,"timestamp":101,"content-state":{}}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{}},"aps":{}}"#,
            #"{"aps":null}"#, "[]", "", #"{"aps":{"event":"update","timestamp":100,"content-state":{}}} x"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{"a":1,"a":2}}}"#,
            // Read by the tree: members the one pass does not know, or keys with escapes.
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"sound":"default"}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{},"alert":{"title":"T","subtitle":"S"}}}"#,
            #"{"aps":{"event":"update","timestamp":100,"content-state":{}},"extra":1}"#,
            #"{"aps":{"ev\u0065nt":"update","timestamp":100,"content-state":{}}}"#,
            #"{"aps":{"event":"start","timestamp":100,"content-state":{},"attributes-type":"T","attributes":{}}}"#,
        ]
        for text in read + treeOnly {
            let bytes = Array(text.utf8)
            let tree: (request: PushRequest, wantsFeedback: Bool)? = try? {
                let top = try PushPayload.parse(bytes)
                return (try PushPayload.decode(top), top["feedback"]?.boolValue ?? false)
            }()
            let onePass = ChannelMessage.readText(bytes)
            if read.contains(text) {
                let (onePass, tree) = (try #require(onePass, "\(text)"), try #require(tree, "\(text)"))
                #expect(onePass.request == tree.request, "\(text)")
                #expect(onePass.request.content?.stateText == tree.request.content?.stateText, "\(text)")
                #expect(onePass.wantsFeedback == tree.wantsFeedback, "\(text)")
            } else {
                #expect(onePass == nil, "\(text)")
            }
        }
        // And what the tree refuses is still refused by name through `decode`.
        #expect(throws: PushRefusal.invalidPayload(reason: "aps.content-state is missing")) {
            try ChannelMessage.decode(Array(treeOnly[0].utf8), channel: channel, now: 100)
        }
        #expect(throws: PushRefusal.invalidPayload(reason: "feedback must be true or false")) {
            try ChannelMessage.decode(Array(treeOnly[13].utf8), channel: channel, now: 100)
        }
    }

    @Test func aStartThroughAPushToStartTokenMayNameAChannel() throws {
        let payload = bytes([
            "timestamp": 1, "event": "start", "content-state": [:], "attributes-type": "T", "attributes": [:],
            "input-push-channel": "AAAAAAAAAAAAAAAAAAAAAA",
        ])
        #expect(try PushPayload.decode(payload).pushChannel == "AAAAAAAAAAAAAAAAAAAAAA")
    }
}

@Suite struct ChannelSubscriptionsTests {
    let owner = ActivityOwner(app: "org.example.A", uid: nil)
    let one = try! PushChannel(root: "island", app: "org.example.A", id: "AAAAAAAAAAAAAAAAAAAAAA")
    let two = try! PushChannel(root: "island", app: "org.example.A", id: "BBBBBBBBBBBBBBBBBBBBBB")

    @Test func aChannelIsSubscribedToOnceForAllItsActivitiesAndLeftWithTheLast() {
        var subscriptions = ChannelSubscriptions()
        let first = subscriptions.add(.init(channel: one, activity: "a", owner: owner))
        #expect(first.subscribe == one.topic && first.unsubscribe == nil)
        let second = subscriptions.add(.init(channel: one, activity: "b", owner: owner))
        #expect(second.subscribe == nil && second.unsubscribe == nil)
        #expect(subscriptions.entries(topic: one.topic).map(\.activity) == ["a", "b"])
        #expect(subscriptions.isListened(topic: one.topic) && !subscriptions.isListened(topic: two.topic))
        let a = subscriptions.remove(activity: "a")
        #expect(a?.entry.activity == "a" && a?.unsubscribe == nil)
        #expect(subscriptions.isListened(topic: one.topic), "b still listens")
        let b = subscriptions.remove(activity: "b")
        #expect(b?.entry.activity == "b" && b?.unsubscribe == one.topic)
        #expect(!subscriptions.isListened(topic: one.topic), "the last one left")
        let again = subscriptions.remove(activity: "b")
        #expect(subscriptions.topics.isEmpty && again == nil)
    }

    @Test func movingAnActivityToAnotherChannelLeavesTheFirstWhenNoOneElseListens() {
        var subscriptions = ChannelSubscriptions([.init(channel: one, activity: "a", owner: owner)])
        let moved = subscriptions.add(.init(channel: two, activity: "a", owner: owner))
        #expect(moved.subscribe == two.topic && moved.unsubscribe == one.topic)
        #expect(subscriptions.topics == [two.topic])
        #expect(!subscriptions.isListened(topic: one.topic) && subscriptions.isListened(topic: two.topic))
    }
}
