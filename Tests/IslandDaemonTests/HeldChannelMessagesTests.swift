import IslandCore
import IslandStore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// Channel messages at priority 1 held while the island was busy, read back from the store at
/// start: only those that may still apply are held again; the other rows are deleted.
@Suite struct HeldChannelMessagesTests {
    let channel = try! PushChannel(root: "island", app: "org.example.A", id: "AAAAAAAAAAAAAAAAAAAAAA")

    func message(timestamp: Double, priority: Int = 1, expiration: Double? = nil) -> [UInt8] {
        var aps: JSONObject = ["timestamp": .double(timestamp), "event": .string("update"), "priority": .int(priority)]
        aps["content-state"] = .object(["score": .string("1-0")])
        if let expiration { aps["expiration"] = .double(expiration) }
        return JSON.object(["aps": .object(aps)]).serialized()
    }

    @Test func whatMayStillApplyIsHeldAgainAndTheRestIsDeleted() throws {
        let owner = ActivityOwner(app: "org.example.A", uid: nil)
        let channels = ChannelSubscriptions([
            .init(channel: channel, activity: "kept", owner: owner), .init(channel: channel, activity: "expired", owner: owner),
            .init(channel: channel, activity: "loud", owner: owner),
        ])
        let now = 1_800_000_000.0
        var settings: [String: JSON] = ["manager": .object([:])]
        for (id, payload) in [
            ("kept", message(timestamp: now - 60)),
            // Its expiry passed while the daemon was down.
            ("expired", message(timestamp: now - 60, expiration: now - 1)),
            // Its activity went while the daemon was down.
            ("gone", message(timestamp: now - 60)),
            // Not a message a busy island holds.
            ("loud", message(timestamp: now - 60, priority: 10)),
        ] {
            guard case .putSetting(let key, let value) = HeldChannelMessages.keep(activity: id, payload: payload) else {
                Issue.record("a held message is a setting row")
                return
            }
            settings[key] = value
        }
        settings[HeldChannelMessages.key(activity: "unreadable")] = .string("not an object")
        let (held, dropped) = HeldChannelMessages.read(from: settings, channels: channels, now: now)
        #expect(held.map(\.entry.activity) == ["kept"])
        #expect(held.first?.request.content?.state == ["score": .string("1-0")])
        #expect(held.first?.entry.owner == owner)
        #expect(Set(dropped) == Set(["expired", "gone", "loud", "unreadable"].map { HeldChannelMessages.drop(activity: $0) }))
    }
}
