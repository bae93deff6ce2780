import IslandCore
import IslandStore
import OrderedCollections
import OrderedJSON

/// Channel messages at priority 1 held while the island is busy, as the store keeps them: one
/// setting row per activity, `push-held:<activity id>`, whose value is the message's text as
/// the broker delivered it.
///
/// A held message has been acknowledged to the broker (libmosquitto sends the PUBACK as it
/// reads it) and answered `throttled`, so it is committed before that answer goes, and read
/// back after a restart: nothing acknowledged is lost across a crash. It is read back as it
/// arrived, through the same checks (its expiry, the channel's longest lifetime), since the
/// island may rest only hours later.
enum HeldChannelMessages {
    static let keyPrefix = "push-held:"

    static func key(activity id: String) -> String { keyPrefix + id }

    /// The row that keeps `payload`, held for activity `id`.
    static func keep(activity id: String, payload: [UInt8]) -> StoreMutation {
        .putSetting(key: key(activity: id), value: .object(["payload": .string(String(decoding: payload, as: UTF8.self))]))
    }

    /// The row of activity `id`'s held message goes: applied, superseded, or its activity gone.
    static func drop(activity id: String) -> StoreMutation {
        .deleteSetting(key: key(activity: id))
    }

    /// The held messages among stored `settings`, for the activities that still listen to a
    /// channel (`channels`), read again at `now`; the rows of the others — activity gone,
    /// expired, unreadable — to delete.
    static func read(
        from settings: [String: JSON], channels: ChannelSubscriptions, now: Double
    ) -> (held: [(entry: ChannelSubscriptions.Entry, request: PushRequest)], dropped: [StoreMutation]) {
        var held: [(entry: ChannelSubscriptions.Entry, request: PushRequest)] = []
        var dropped: [StoreMutation] = []
        // In key order: each activity's one message; the order they are applied in does not
        // matter, each goes to its own activity.
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) where key.hasPrefix(keyPrefix) {
            let id = String(key.dropFirst(keyPrefix.count))
            guard let entry = channels.byActivity[id], let text = value.objectValue?["payload"]?.stringValue,
                let message = try? ChannelMessage.decode(Array(text.utf8), channel: entry.channel, now: now),
                message.request.event == .update, message.request.priority == .background
            else {
                dropped.append(drop(activity: id))
                continue
            }
            held.append((entry, message.request))
        }
        return (held, dropped)
    }
}
