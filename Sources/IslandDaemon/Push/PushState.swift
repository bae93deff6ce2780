import IslandCore
import IslandStore

/// The engine's line to the broker. It never waits: each call queues for the broker's
/// connection, which keeps subscriptions across reconnections by itself. `MQTTPushLink` is
/// the real one; tests record the calls.
protocol PushBroker: Sendable {
    func subscribe(_ topic: String)
    func unsubscribe(_ topic: String)
    func publish(_ topic: String, payload: [UInt8])
}

/// What the engine holds while push is on: the tokens and where they live.
struct PushState {
    /// The levels every token's topic starts with, and this device's client id after them.
    let root: String
    let device: String
    let broker: any PushBroker
    var registry: PushRegistry
    /// Tokens revoked by decisions not yet finished, with why: their notices wait for the
    /// commit.
    var revocations: [(token: PushToken, reason: String)] = []

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
