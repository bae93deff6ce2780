import DequeModule
import IslandCore
import IslandStore

/// The push gateway's line to the broker. It never waits: each call queues for the broker's
/// connection, which keeps subscriptions across reconnections by itself. `MQTTPushLink` is
/// the real one; tests record the calls.
protocol PushBroker: Sendable {
    func subscribe(_ topic: String)
    /// Subscribes to `topic`, one the broker does not hold for this device yet, and calls
    /// `answered` with each answer of the broker until it grants or denies it; not while the
    /// broker does not answer, nor once the topic is unsubscribed.
    func subscribe(_ topic: String, answered: @escaping @Sendable (SubscriptionAnswer) -> Void)
    func unsubscribe(_ topic: String)
    /// `retain`: the broker keeps it for whoever subscribes to the topic later.
    func publish(_ topic: String, payload: [UInt8], retain: Bool)
}

/// The broker's answer to a subscription.
enum SubscriptionAnswer: Sendable, Hashable {
    /// It holds the subscription: a message published to the topic from now on arrives.
    case granted
    /// Not authorized (MQTT 5's SUBACK code 0x87: its ACL): for good.
    case denied
    /// Refused for another reason, or for an unknown one (MQTT 3.1.1 has one code for every
    /// refusal): perhaps for now, as a cluster node that cannot place it yet; asked for again
    /// with the backoff.
    case refused
}

/// What the push gateway holds while push is on: the tokens and where they live.
struct PushState {
    /// The levels every token's topic starts with, and this device's client id after them.
    let root: String
    let device: String
    let broker: any PushBroker
    var registry: PushRegistry
    /// The broadcast channels the device's activities listen to.
    var channels = ChannelSubscriptions()
    /// Tokens revoked by decisions not yet finished, with why: their notices wait for the
    /// commit.
    var revocations: [(token: PushToken, reason: String)] = []
    /// Topics subscribed to for a reply that waits for the broker's grant, with how many
    /// replies wait: not unsubscribed while one does (`PushGateway+Subscriptions.swift`).
    var awaitingGrant: [String: Int] = [:]
    /// How long a reply waits for the broker's grant of a subscription before it fails.
    var subscriptionTimeout = PushState.defaultSubscriptionTimeout

    /// Long enough for a broker cluster electing its leaders (a NATS node answers a
    /// subscription it cannot place after 5 s), short enough that a client learns of a broker
    /// that is away while it still waits.
    static let defaultSubscriptionTimeout = Duration.seconds(20)

    /// A new token of `app` for this device.
    func makeToken(app: String) throws(EngineError) -> PushToken {
        // `random(in:)` draws from `SystemRandomNumberGenerator`: getrandom(2).
        let words = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
        do {
            return try PushToken.make(root: root, device: device, app: app, randomBytes: withUnsafeBytes(of: words) { Array($0) })
        } catch {
            // An app id that cannot be a topic level (a manifest's id with `+`, `#` or `/`).
            throw .pushUnavailable(reason: error.reason)
        }
    }

    /// `body` on this state where it is (`PushGateway.inPlace`).
    mutating func inPlace<T>(_ body: (inout PushState) -> T) -> T { body(&self) }
}

/// Answers handed out in the order their questions came, whatever order they are found in:
/// each question takes a ticket (`enqueue`), and an answer found (`answer`) goes out once every
/// earlier one has. A push refused at once (a redelivered duplicate) so waits for the answer
/// of the push before it, which waits for its commit.
struct AnswersInOrder<Answer> {
    typealias Deliver = @Sendable (Answer) -> Void

    private var waiting: Deque<(answer: Answer?, deliver: Deliver)> = []
    /// The ticket of `waiting.first`.
    private var first = 0

    var count: Int { waiting.count }

    /// A ticket for the next question; `deliver` takes its answer.
    mutating func enqueue(_ deliver: @escaping Deliver) -> Int {
        waiting.append((nil, deliver))
        return first + waiting.count - 1
    }

    /// Records the answer of `ticket`; returns the answers now due, in order, each with where
    /// it goes. A ticket is answered once.
    mutating func answer(_ ticket: Int, _ value: Answer) -> [(deliver: Deliver, answer: Answer)] {
        let index = ticket - first
        precondition(waiting.indices.contains(index) && waiting[index].answer == nil, "a ticket answered twice, or never issued")
        waiting[index].answer = value
        var due: [(deliver: Deliver, answer: Answer)] = []
        while let head = waiting.first, let answer = head.answer {
            due.append((head.deliver, answer))
            waiting.removeFirst()
            first += 1
        }
        return due
    }
}

extension PushRegistry.Entry {
    /// The entry as the store keeps it.
    var stored: StoredPushToken {
        switch grant {
        case .activity(let id, let owner):
            StoredPushToken(token: token.topic, app: owner.app, uid: owner.uid, activityID: id)
        case .start(let owner, let type):
            StoredPushToken(token: token.topic, app: owner.app, uid: owner.uid, type: type, lastTimestamp: lastStart)
        }
    }

    /// A stored row as an entry, if it is one of this device's tokens and whole.
    init?(_ row: StoredPushToken, root: String, device: String) {
        guard let token = try? PushToken(row.token), token.root == root, token.device == device, token.app == row.app else { return nil }
        let owner = ActivityOwner(app: row.app, uid: row.uid)
        switch (row.activityID, row.type) {
        case (let id?, nil): self.init(token: token, grant: .activity(id: id, owner: owner))
        case (nil, let type?): self.init(token: token, grant: .start(owner: owner, type: type), lastStart: row.lastTimestamp)
        default: return nil
        }
    }
}
