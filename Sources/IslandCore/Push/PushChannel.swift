import OrderedJSON
import OrderedCollections

/// A broadcast channel: one topic, `<root>/channels/<app>/<id>`, that an app's backend
/// publishes to once and every device with an activity subscribed to it receives.
///
/// Unlike a push token the id is no secret: the broker's ACL decides who publishes (only the
/// app's backend may write `<root>/channels/<app>/#`; devices only read `<root>/channels/+/+`).
/// The channel's record — its storage policy, fixed at creation — is a retained message on
/// `<topic>/config`, which only the app's backend reads and writes; what a device needs of the
/// policy travels in each message (`ChannelPayload`).
///
/// The per-device feedback of a channel, when its backend asked for it, goes to
/// `<root>/<device>/<app>/<id>/feedback`: a device's own levels, as a token's feedback.
package struct PushChannel: Sendable, Hashable, CustomStringConvertible {
    /// What the broker keeps of a channel's messages, fixed when the channel is created.
    package enum Storage: String, Sendable, Hashable, CaseIterable {
        /// Nothing: a device that is offline when a message is published never gets it (the
        /// backend publishes at QoS 0, which a broker does not queue for an absent session).
        case none
        /// The most recent message, retained (and, on MQTT 5, given a message expiry) for at
        /// most `maximumLatestLifetime`: a device that subscribes later gets it at once.
        case latest
    }

    package let root: String
    package let app: String
    package let id: String

    /// The level after the root that holds every app's channels.
    package static let level = "channels"
    /// Characters in an id: 16 random bytes in unpadded base64url.
    package static let idLength = 22
    static let randomBytes = 16
    /// Channels one app may have at once, as APNs allows.
    package static let maximumPerApp = 10_000
    /// How long a `latest` message is kept, at most, from its timestamp: APNs' 8 hours.
    package static let maximumLatestLifetime: Double = 8 * 3600
    /// The largest message on a channel, as APNs allows for a broadcast.
    package static let maximumPayloadBytes = 5120

    package var topic: String { "\(root)/\(Self.level)/\(app)/\(id)" }
    /// Where the channel's record (its storage policy) is retained.
    package var configTopic: String { "\(topic)/config" }
    /// Every channel record of `app`, for listing and counting them.
    package static func configWildcard(root: String, app: String) -> String { "\(root)/\(level)/\(app)/+/config" }
    /// Where `device` answers the channel's messages, when the channel asks for answers.
    package func feedbackTopic(device: String) -> String { "\(root)/\(device)/\(app)/\(id)/\(PushToken.feedbackLevel)" }
    package var description: String { topic }

    /// The channel `id` of `app`.
    ///
    /// - Throws: `IslandError.invalidChannel` when `id` is not an id `make` could have drawn, or
    ///   the app or root cannot be topic levels.
    package init(root: String, app: String, id: String) throws(IslandError) {
        guard id.utf8.count == Self.idLength, id.utf8.allSatisfy({ Self.alphabetBytes.contains($0) }), id.first != "-" else {
            throw .invalidChannel(
                channel: String(id.prefix(64)),
                reason: "a channel id is \(Self.idLength) characters of A-Z, a-z, 0-9, - and _, not starting with -")
        }
        do {
            try PushTopic.checkRoot(root)
            try PushTopic.checkLevel(app, what: "app id")
        } catch {
            throw .invalidChannel(channel: id, reason: error.reason)
        }
        (self.root, self.app, self.id) = (root, app, id)
    }

    /// Whether `topic`'s third level from the end is `channels`, as a channel's is: a test of
    /// its shape alone, a scan of its last bytes, to route what arrives; `init?(topic:)` checks
    /// every level (a push token's topic may have that shape too, on a device whose id is
    /// `channels`).
    package static func hasChannelShape(_ topic: String) -> Bool {
        let bytes = topic.utf8
        var index = bytes.endIndex
        var end = bytes.endIndex
        var slashes = 0
        while index > bytes.startIndex {
            bytes.formIndex(before: &index)
            guard bytes[index] == UInt8(ascii: "/") else { continue }
            slashes += 1
            if slashes == 2 { end = index }
            if slashes == 3 { return bytes[bytes.index(after: index)..<end].elementsEqual(level.utf8) }
        }
        return false
    }

    /// The channel whose message topic is `topic`; nil for any other topic.
    package init?(topic: String) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 4, levels[levels.count - 3] == Self.level else { return nil }
        let root = levels.dropLast(3).joined(separator: "/")
        guard let channel = try? PushChannel(root: root, app: String(levels[levels.count - 2]), id: String(levels[levels.count - 1]))
        else { return nil }
        self = channel
    }

    /// A new channel of `app` whose id is `randomBytes` (16 of them, from the system's
    /// cryptographic generator): 128 bits (less a fraction of one: the first character is never
    /// `-`), so an id is never drawn twice.
    package static func make(root: String, app: String, randomBytes bytes: [UInt8]) throws(IslandError) -> PushChannel {
        precondition(bytes.count == randomBytes, "a channel id is \(randomBytes) random bytes")
        var id = ""
        var bits = 0, value: UInt32 = 0
        for byte in bytes {
            value = value << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                id.append(alphabet[Int((value >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { id.append(alphabet[Int((value << UInt32(6 - bits)) & 0x3F)]) }
        // A command line takes an argument starting with `-` for an option (`island channel push
        // -x…` would not find its id): `_` instead, one value of 64 for the first character.
        if id.first == "-" { id = "_" + id.dropFirst() }
        return try PushChannel(root: root, app: app, id: id)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    private static let alphabetBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}

/// One message on a broadcast channel: an APNs-shaped payload (`PushPayload`), its expiry in
/// `aps.expiration` as a token's push has it, and beside `aps` whether devices answer it:
///
/// ```json
/// {"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"score": "2-1"},
///          "expiration": 1700003600},
///  "feedback": true}
/// ```
///
/// `aps.expiration` (epoch seconds; 0 or absent: none) is checked on arrival, so a message a
/// broker kept too long — one without MQTT 5's message expiry keeps a retained message for
/// ever — is not applied; whatever it says, a message is not applied more than
/// `PushChannel.maximumLatestLifetime` after its timestamp. `feedback` asks every device to
/// answer (for testing: a million devices must not answer one publish by default).
package struct ChannelMessage: Sendable, Hashable {
    package var request: PushRequest
    package var wantsFeedback: Bool

    /// `aps.expiration`, unless 0 (now or never: the broker's to honour, nothing to check here).
    package var expiration: Double? { request.expiration.flatMap { $0 > 0 ? $0 : nil } }

    /// Reads a message's untrusted bytes, as `PushPayload` does a push's, within a broadcast's
    /// smaller size, and refuses what a broadcast may not do: start an activity, or arrive late.
    package static func decode(_ bytes: [UInt8], channel: PushChannel, now: Double) throws(PushRefusal) -> ChannelMessage {
        guard bytes.count <= PushChannel.maximumPayloadBytes else {
            throw .payloadTooLarge(limit: PushChannel.maximumPayloadBytes, size: bytes.count)
        }
        let message: ChannelMessage
        if let read = readText(bytes) {
            message = ChannelMessage(request: read.request, wantsFeedback: read.wantsFeedback)
        } else {
            // What the one pass does not take, the tree reads, and refuses by name.
            let top = try PushPayload.parse(bytes)
            let request = try PushPayload.decode(top)
            var wantsFeedback = false
            if let value = top["feedback"], !value.isNull {
                guard let flag = value.boolValue else { throw .invalidPayload(reason: "feedback must be true or false") }
                wantsFeedback = flag
            }
            message = ChannelMessage(request: request, wantsFeedback: wantsFeedback)
        }
        let request = message.request
        guard request.event != .start else { throw .refused(.broadcastStart(channel: channel.id)) }
        guard request.priority != .background || request.alert == nil else {
            throw .invalidPayload(reason: "aps.priority 1 never alerts: a message with an alert is sent at 10 or 5")
        }
        let deadline = message.deadline
        guard now <= deadline else {
            throw .refused(.channelMessageExpired(channel: channel.id, expiration: deadline))
        }
        return message
    }

    /// The last moment the message may be applied: its expiration, and never later than the
    /// longest a channel keeps a message.
    package var deadline: Double {
        min(expiration ?? .infinity, request.timestamp + PushChannel.maximumLatestLifetime)
    }
}

/// Which of the device's activities listen to which channel: an activity to at most one
/// channel, a channel for any number of activities. Pure: the caller subscribes to the topics
/// it is told to and stores the rows.
package struct ChannelSubscriptions: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        package var channel: PushChannel
        package var activity: String
        package var owner: ActivityOwner

        package init(channel: PushChannel, activity: String, owner: ActivityOwner) {
            self.channel = channel
            self.activity = activity
            self.owner = owner
        }
    }

    package private(set) var byActivity: [String: Entry] = [:]
    /// By the channel's topic, in the order the activities subscribed: the entries themselves,
    /// so that a message's listeners are one lookup, handed out as the array kept here (no
    /// array made, no activity looked up again for each message).
    private var byTopic: [String: [Entry]] = [:]

    package init(_ entries: [Entry] = []) {
        for entry in entries { _ = add(entry) }
    }

    /// Every channel topic listened to, to subscribe to.
    package var topics: [String] { byTopic.keys.sorted() }

    /// Whether an activity listens to the channel at `topic`: one lookup, no array made (a
    /// topic's entries are dropped with its last activity).
    package func isListened(topic: String) -> Bool {
        byTopic[topic] != nil
    }

    /// The activities listening to the channel at `topic`, in the order they subscribed.
    package func entries(topic: String) -> [Entry] {
        byTopic[topic] ?? []
    }

    /// Adds `entry` (replacing the activity's channel, if it had one): the topic to subscribe
    /// to when no activity listened to it before, and to unsubscribe from when the replaced
    /// channel has no activity left.
    package mutating func add(_ entry: Entry) -> (subscribe: String?, unsubscribe: String?) {
        let unsubscribe = remove(activity: entry.activity)?.unsubscribe
        let topic = entry.channel.topic
        byActivity[entry.activity] = entry
        let first = byTopic[topic] == nil
        byTopic[topic, default: []].append(entry)
        return (first ? topic : nil, unsubscribe == topic ? nil : unsubscribe)
    }

    /// Removes activity `id`'s subscription: the entry, and the topic to unsubscribe from when
    /// no activity listens to it any more.
    package mutating func remove(activity id: String) -> (entry: Entry, unsubscribe: String?)? {
        guard let entry = byActivity.removeValue(forKey: id) else { return nil }
        let topic = entry.channel.topic
        byTopic[topic]?.removeAll { $0.activity == id }
        guard byTopic[topic]?.isEmpty == true else { return (entry, nil) }
        byTopic[topic] = nil
        return (entry, topic)
    }
}
