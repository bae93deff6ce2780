import OrderedCollections
import IslandJSON

/// Progress notifications seen on the bus, as a monitor sees them: `Notify` calls from any
/// client to the notification server, the server's replies (which say the id it gave), and
/// `NotificationClosed`. The bridge never answers or sends anything here; the user's
/// notification daemon serves every call as if the bridge were not there.
///
/// A notification with a `value` hint or a `transfer` category becomes a Progress activity.
/// A later `Notify` that replaces it — by `replaces_id`, or by the same app with the same stack
/// tag — updates it in place; it ends when its notification closes, reaches 100, turns
/// `transfer.complete` or `transfer.error`, or is replaced by one that shows no progress.
///
/// Everything is bounded: calls waiting for their reply (`maximumPending`, the oldest
/// dropped), notifications followed (`maximumFollowed`, the least recently updated ended).
/// Replies and closings count only from the connection that owns the server's name.
public struct ProgressNotifications: Sendable {
    public static let maximumPending = 64
    public static let maximumFollowed = 32

    private struct CallKey: Hashable, Sendable {
        var caller: String
        var serial: UInt64
    }

    private struct Followed: Sendable {
        var source: String
        var id: UInt32
        var call: NotifyCall
        /// The tag it was stacked with: a replacement that repeats no tag keeps it.
        var stackTag: String?
        var app: SourceApp
        var startedAt: Double
        var updatedAt: Double
    }

    private let busID: String
    /// The connection that owns `org.freedesktop.Notifications`.
    public private(set) var server: String?
    private var pending: [CallKey: NotifyCall] = [:]
    private var pendingOrder: [CallKey] = []
    private var followed: [UInt32: Followed] = [:]

    public init(busID: String) {
        self.busID = busID
    }

    public static let serverName = "org.freedesktop.Notifications"

    /// The server's name changed owner: whatever the old server showed is gone with it.
    public mutating func serverChanged(to owner: String?) -> [SourceChange] {
        guard owner != server else { return [] }
        server = owner
        pending = [:]
        pendingOrder = []
        defer { followed = [:] }
        return followed.values.sorted { $0.startedAt < $1.startedAt }
            .map { .finish(source: $0.source, content: nil, keep: false) }
    }

    /// A `Notify` call from `caller` (its serial `serial`) to `destination`. Kept until the
    /// server's reply says which notification it is, when it could concern progress.
    public mutating func called(_ call: NotifyCall, caller: String, serial: UInt64, destination: String?) {
        guard let server, destination == Self.serverName || destination == server else { return }
        guard call.isProgress || (call.replacesID != 0 && followed[call.replacesID] != nil) || stackMatch(call) != nil else { return }
        let key = CallKey(caller: caller, serial: serial)
        if pending[key] == nil {
            pendingOrder.append(key)
            if pendingOrder.count > Self.maximumPending {
                pending[pendingOrder.removeFirst()] = nil
            }
        }
        pending[key] = call
    }

    /// The server's error reply to a call: nothing was shown.
    public mutating func failed(from sender: String, to caller: String, replySerial: UInt64) {
        guard sender == server else { return }
        let key = CallKey(caller: caller, serial: replySerial)
        if pending.removeValue(forKey: key) != nil { pendingOrder.removeAll { $0 == key } }
    }

    /// The server's reply to a call: notification `id` shows it.
    public mutating func replied(from sender: String, to caller: String, replySerial: UInt64, id: UInt32, now: Double,
                                 lookup: (String) -> DesktopEntry?) -> [SourceChange] {
        guard sender == server else { return [] }
        let key = CallKey(caller: caller, serial: replySerial)
        guard let call = pending.removeValue(forKey: key) else { return [] }
        pendingOrder.removeAll { $0 == key }

        // What it replaces: the notification of its replaces_id, or the same app's of its tag.
        // (replaces_id 0 replaces nothing.)
        let replaced = call.replacesID != 0 && followed[call.replacesID] != nil ? call.replacesID : nil
        let previous = replaced ?? (followed[id] != nil ? id : stackMatch(call))
        if let previous, var entry = followed.removeValue(forKey: previous) {
            entry.id = id
            // A replacement without a value keeps the last one shown.
            let lastValue = entry.call.value
            entry.call = call
            if entry.call.value == nil { entry.call.value = lastValue }
            entry.stackTag = call.stackTag ?? entry.stackTag
            entry.updatedAt = now
            if let outcome = Self.outcome(of: call) {
                // It says it is over, or shows no progress any more.
                return [.finish(source: entry.source, content: content(of: entry, outcome: outcome), keep: true)]
            }
            followed[id] = entry
            return [.show(activity(of: entry))]
        }
        guard call.isProgress else { return [] }
        var changes: [SourceChange] = []
        if followed.count >= Self.maximumFollowed, let stalest = followed.values.min(by: { $0.updatedAt < $1.updatedAt }) {
            followed[stalest.id] = nil
            changes.append(.finish(source: stalest.source, content: nil, keep: false))
        }
        let app = SourceApp.resolve(entry: call.desktopEntry, label: call.appName, iconName: call.appIcon,
                                    fallback: SourceApp(name: call.appName.isEmpty ? "Notification" : call.appName,
                                                        icon: "dialog-information"),
                                    lookup: lookup)
        let entry = Followed(source: "notify:\(busID):\(sender):\(id)", id: id, call: call, stackTag: call.stackTag, app: app,
                             startedAt: now, updatedAt: now)
        if let outcome = Self.outcome(of: call) {
            // Done or failed already: shown ended.
            changes.append(.show(activity(of: entry)))
            changes.append(.finish(source: entry.source, content: content(of: entry, outcome: outcome), keep: true))
            return changes
        }
        followed[id] = entry
        changes.append(.show(activity(of: entry)))
        return changes
    }

    /// `NotificationClosed(id, reason)` from `sender`: reason 2 is the user dismissing it.
    /// A server that stacks (dunst) closes the old notification of a tag before it answers
    /// the call that replaces it: while such a call waits for its reply, the closing is the
    /// replacement, not the end.
    public mutating func closed(id: UInt32, reason: UInt32, from sender: String) -> [SourceChange] {
        guard sender == server, let entry = followed[id] else { return [] }
        let replaced = pending.values.contains { call in
            call.replacesID == id || (entry.stackTag != nil && call.stackTag == entry.stackTag && call.appName == entry.call.appName)
        }
        if replaced { return [] }
        followed[id] = nil
        return [.finish(source: entry.source, content: nil, keep: reason != 2)]
    }

    /// The notification ids followed now.
    public var followedIDs: [UInt32] { followed.keys.sorted() }
    public var pendingCount: Int { pending.count }

    private func stackMatch(_ call: NotifyCall) -> UInt32? {
        guard let tag = call.stackTag else { return nil }
        return followed.values.first { $0.stackTag == tag && $0.call.appName == call.appName }?.id
    }

    // MARK: The activity

    private enum Outcome: Equatable {
        case done, failed, replaced
    }

    /// How a call ends its progress, if it does: still in progress is nil.
    private static func outcome(of call: NotifyCall) -> Outcome? {
        if call.category == "transfer.error" { return .failed }
        if call.category == "transfer.complete" || (call.value ?? 0) >= 100 { return .done }
        return call.isProgress ? nil : .replaced
    }

    private func state(of entry: Followed) -> JSONObject {
        var state: JSONObject = ["title": .string(entry.call.summary.isEmpty ? entry.app.name : entry.call.summary)]
        if !entry.call.body.isEmpty { state["body"] = .string(entry.call.body) }
        if let value = entry.call.value { state["percent"] = .int(value) }
        return state
    }

    private func content(of entry: Followed, outcome: Outcome) -> BridgedContent {
        var state = state(of: entry)
        switch outcome {
        case .done:
            state["percent"] = .int(100)
            state["done"] = .bool(true)
        case .failed:
            state["failed"] = .bool(true)
        case .replaced:
            state["done"] = .bool(true)
        }
        return BridgedContent(state: state, relevance: Rank.Tier.progress.relevance)
    }

    private func activity(of entry: Followed) -> BridgedActivity {
        BridgedActivity(source: entry.source, type: "Progress",
                        attributes: ["app": entry.app.json, "via": "notification"],
                        content: BridgedContent(state: state(of: entry), relevance: Rank.Tier.progress.relevance),
                        rank: Rank(tier: .progress, since: entry.startedAt))
    }
}
