/// The device's live push tokens and what each grants: updating and ending one activity, or
/// starting activities of one type for one owner. Pure: tokens are made by the caller (with
/// their randomness), and every change returns what to persist and to (un)subscribe.
package struct PushRegistry: Sendable, Hashable {
    /// What a token lets its holder do.
    package enum Grant: Sendable, Hashable {
        /// Update and end this activity, as its owner would.
        case activity(id: String, owner: ActivityOwner)
        /// Start activities of `type` for `owner`.
        case start(owner: ActivityOwner, type: String)

        package var owner: ActivityOwner {
            switch self {
            case .activity(_, let owner), .start(let owner, _): owner
            }
        }
    }

    package struct Entry: Sendable, Hashable {
        package var token: PushToken
        package var grant: Grant
        /// A push-to-start token's last start (the server's timestamp): a start not newer is
        /// a redelivery or out of order, and refused.
        package var lastStart: Double?

        package init(token: PushToken, grant: Grant, lastStart: Double? = nil) {
            self.token = token
            self.grant = grant
            self.lastStart = lastStart
        }
    }

    private struct StartKey: Hashable {
        var owner: ActivityOwner
        var type: String
    }

    /// By topic: how a push finds its token.
    package private(set) var entries: [String: Entry] = [:]
    private var byActivity: [String: String] = [:]
    private var byStartKey: [StartKey: String] = [:]
    /// The highest `sequence` received through each token: 0 for a token made in this run
    /// (its server numbers from 1), none for a token restored from the store until its first
    /// numbered push (this is not persisted).
    private var highestSequence: [String: Int] = [:]

    /// Push-to-start tokens one owner may hold: one per activity type, for a bounded number.
    package static let maximumStartTokensPerOwner = 32

    package init(_ entries: [Entry] = []) {
        for entry in entries { insert(entry) }
    }

    /// Every token's topic, to subscribe to.
    package var topics: [String] { entries.keys.sorted() }

    package func entry(topic: String) -> Entry? { entries[topic] }

    package func token(activity id: String) -> PushToken? { byActivity[id].flatMap { entries[$0]?.token } }

    package func startToken(owner: ActivityOwner, type: String) -> PushToken? {
        byStartKey[StartKey(owner: owner, type: type)].flatMap { entries[$0]?.token }
    }

    /// Gives activity `id` the token, replacing (and returning) the one it had.
    @discardableResult
    package mutating func setToken(_ token: PushToken, activity id: String, owner: ActivityOwner) -> Entry? {
        let replaced = byActivity[id].flatMap { removeEntry(topic: $0) }
        highestSequence[token.topic] = 0
        insert(Entry(token: token, grant: .activity(id: id, owner: owner)))
        return replaced
    }

    /// Gives `owner` the push-to-start token for `type`, replacing (and returning) the one it
    /// had; the last start's timestamp carries over, so a rotation cannot replay old starts.
    ///
    /// - Throws: `IslandError.tooManyPushTokens` past `maximumStartTokensPerOwner` types.
    @discardableResult
    package mutating func setStartToken(_ token: PushToken, owner: ActivityOwner, type: String) throws(IslandError) -> Entry? {
        let key = StartKey(owner: owner, type: type)
        let replaced = byStartKey[key].flatMap { removeEntry(topic: $0) }
        if replaced == nil, byStartKey.keys.count(where: { $0.owner == owner }) >= Self.maximumStartTokensPerOwner {
            throw .tooManyPushTokens(app: owner.app, limit: Self.maximumStartTokensPerOwner)
        }
        highestSequence[token.topic] = 0
        insert(Entry(token: token, grant: .start(owner: owner, type: type), lastStart: replaced?.lastStart))
        return replaced
    }

    /// Notes a push numbered `sequence` received through the token at `topic`: how many
    /// numbers before it were skipped since the highest received — pushes its server sent that
    /// never reached this device (a broker that dropped them from a full queue). 0 for the
    /// next number, a repeat or an older one, and for the first numbered push through a token
    /// restored from the store, whose count did not survive the restart.
    package mutating func receive(sequence: Int, topic: String) -> Int {
        guard entries[topic] != nil else { return 0 }
        let highest = highestSequence[topic]
        highestSequence[topic] = max(highest ?? sequence, sequence)
        guard let highest, sequence > highest + 1 else { return 0 }
        return sequence - highest - 1
    }

    /// Revokes activity `id`'s token, returning it.
    package mutating func revoke(activity id: String) -> Entry? {
        byActivity[id].flatMap { removeEntry(topic: $0) }
    }

    /// Refuses a start through the token at `topic` whose timestamp is not newer than its
    /// last (a redelivery, equal, or an older push), or implausibly far ahead of `now`: the
    /// rule of updates (`TimestampOrder`), so no last start, kept across rotations and
    /// restarts, holds starts out for longer than the skew.
    package func checkStart(topic: String, timestamp: Double, now: Double) throws(IslandError) {
        try TimestampOrder.check(timestamp, id: "", last: entries[topic]?.lastStart, now: now)
    }

    /// Records a start made through the token at `topic`; returns the entry as it now is.
    @discardableResult
    package mutating func recordStart(topic: String, timestamp: Double) -> Entry? {
        entries[topic]?.lastStart = timestamp
        return entries[topic]
    }

    private mutating func insert(_ entry: Entry) {
        let topic = entry.token.topic
        entries[topic] = entry
        switch entry.grant {
        case .activity(let id, _): byActivity[id] = topic
        case .start(let owner, let type): byStartKey[StartKey(owner: owner, type: type)] = topic
        }
    }

    private mutating func removeEntry(topic: String) -> Entry? {
        guard let entry = entries.removeValue(forKey: topic) else { return nil }
        highestSequence[topic] = nil
        switch entry.grant {
        case .activity(let id, _): byActivity[id] = nil
        case .start(let owner, let type): byStartKey[StartKey(owner: owner, type: type)] = nil
        }
        return entry
    }
}
