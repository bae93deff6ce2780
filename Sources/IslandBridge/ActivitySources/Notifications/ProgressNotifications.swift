import OrderedCollections
import OrderedJSON

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
/// A notification belongs to the connection that sent the `Notify` that made it: only that
/// connection's calls replace or close it. Another connection's `replaces_id` (or stack tag)
/// makes a new notification of its own (as the spec allows a server to), even when the server
/// gives it the same id: the first is then *displaced*, kept as it was until its own sender
/// sends again, and only the notification the server shows under an id now ends when that id
/// closes. A closing by `CloseNotification` (reason 3) ends only the notification of the
/// connection seen calling it. A displaced notification whose connection has left the bus
/// can never be changed again, and the server shows another in its place: it is dismissed
/// (so a script that sends each update from a new connection, as `notify-send` does, leaves
/// no stale activities behind). Each notification's app is resolved from its sender's
/// identity (`SenderIdentity`), never from its claims alone.
///
/// Everything is bounded: calls waiting for their reply, kept per caller (its unique name) —
/// a caller's new call pushes out only its own oldest (`maximumPendingPerCaller`), never
/// another's, so that a peer sending calls faster than the server answers cannot make the
/// bridge forget another's progress before its reply; a new caller takes the place of the one
/// silent longest only when `maximumCallers` have calls waiting — notifications followed
/// (`maximumFollowed`, the least recently updated ended), closings asked for
/// (`maximumClosings`). Replies and closings count only from the connection that owns the
/// server's name.
package struct ProgressNotifications: Sendable {
    package static let maximumPendingPerCaller = 8
    package static let maximumCallers = 64
    package static let maximumClosings = 64
    package static let maximumFollowed = 32

    /// What one connection has waiting for the server's reply, oldest first.
    private struct Caller: Sendable {
        var pending: [(serial: UInt64, call: NotifyCall)] = []
        /// When it last called, in the order of observation.
        var lastCall: UInt64 = 0
    }

    /// A notification: the connection that sent it, and the id the server gave it.
    package struct Key: Sendable, Hashable {
        package var owner: String
        package var id: UInt32

        package init(owner: String, id: UInt32) {
            self.owner = owner
            self.id = id
        }
    }

    private struct Followed: Sendable {
        var source: String
        var owner: String
        var id: UInt32
        /// Another connection's notification took its id at the server since its own last call.
        var displaced = false
        /// Its connection has left the bus.
        var ownerLeft = false
        var call: NotifyCall
        /// The tag it was stacked with: a replacement that repeats no tag keeps it.
        var stackTag: String?
        var app: SourceApp
        /// Its sender said it is about the user (`x-gnome-privacy-scope` `user`): shown as a
        /// PrivateProgress, whose layout is private on the lock screen. Fixed by the call that
        /// started it: an activity's type never changes.
        var privateOnLockScreen: Bool
        var startedAt: Double
        var updatedAt: Double
    }

    private let busID: String
    /// The connection that owns `org.freedesktop.Notifications`.
    package private(set) var server: String?
    private var callers: [String: Caller] = [:]
    /// Calls kept so far: the order of `Caller.lastCall`.
    private var calls: UInt64 = 0
    private var followed: [Key: Followed] = [:]
    /// `CloseNotification` calls seen, by the connection that made them, oldest first.
    private var closing: [Key] = []

    package init(busID: String) {
        self.busID = busID
    }

    package static let serverName = "org.freedesktop.Notifications"

    /// The server's name changed owner: whatever the old server showed is gone with it.
    package mutating func serverChanged(to owner: String?) -> [SourceChange] {
        guard owner != server else { return [] }
        server = owner
        callers = [:]
        closing = []
        defer { followed = [:] }
        return followed.values.sorted { $0.startedAt < $1.startedAt }
            .map { .finish(source: $0.source, content: nil, keep: false) }
    }

    /// A `Notify` call from `caller` (its serial `serial`) to `destination`. Kept until the
    /// server's reply says which notification it is, when it could concern progress; true
    /// when kept (the shell then finds out who `caller` is before the reply comes).
    @discardableResult
    package mutating func called(_ call: NotifyCall, caller: String, serial: UInt64, destination: String?) -> Bool {
        guard let server, destination == Self.serverName || destination == server else { return false }
        guard
            call.isProgress || (call.replacesID != 0 && followed[Key(owner: caller, id: call.replacesID)] != nil)
                || stackMatch(call, caller: caller) != nil
        else { return false }
        calls += 1
        if callers[caller] == nil, callers.count >= Self.maximumCallers,
            let silent = callers.min(by: { $0.value.lastCall < $1.value.lastCall })?.key
        {
            callers[silent] = nil
        }
        var entry = callers[caller] ?? Caller()
        if let index = entry.pending.firstIndex(where: { $0.serial == serial }) {
            entry.pending[index].call = call
        } else {
            if entry.pending.count >= Self.maximumPendingPerCaller { entry.pending.removeFirst() }
            entry.pending.append((serial, call))
        }
        entry.lastCall = calls
        callers[caller] = entry
        return true
    }

    /// Takes `caller`'s call of serial `serial` out of what waits for a reply.
    private mutating func take(_ caller: String, serial: UInt64) -> NotifyCall? {
        guard var entry = callers[caller], let index = entry.pending.firstIndex(where: { $0.serial == serial }) else { return nil }
        let call = entry.pending.remove(at: index).call
        callers[caller] = entry.pending.isEmpty ? nil : entry
        return call
    }

    /// A `CloseNotification(id)` call from `caller` to `destination`: the closing it causes
    /// (reason 3) ends `caller`'s notification `id`, and no other connection's.
    package mutating func closeCalled(id: UInt32, caller: String, destination: String?) {
        guard let server, destination == Self.serverName || destination == server,
            followed.keys.contains(where: { $0.id == id })
        else { return }
        closing.append(Key(owner: caller, id: id))
        if closing.count > Self.maximumClosings { closing.removeFirst() }
    }

    /// The server's error reply to a call: nothing was shown.
    package mutating func failed(from sender: String, to caller: String, replySerial: UInt64) {
        guard sender == server else { return }
        _ = take(caller, serial: replySerial)
    }

    /// The server's reply to a call: notification `id` shows it. `identity` is what the bridge
    /// established about `caller`; it decides the app a new notification is shown as.
    package mutating func replied(
        from sender: String, to caller: String, replySerial: UInt64, id: UInt32, now: Double,
        identity: SenderIdentity = .unknown, lookup: (String) -> DesktopEntry?
    ) -> [SourceChange] {
        guard sender == server else { return [] }
        guard let call = take(caller, serial: replySerial) else { return [] }

        // What it replaces: the caller's own notification of its replaces_id, or of the id the
        // server answered, or the caller's of its tag. (replaces_id 0 replaces nothing.) Another
        // connection's notification is never replaced: it is displaced when this one takes
        // its id at the server.
        let own = { (id: UInt32) in Key(owner: caller, id: id) }
        let replaced = call.replacesID != 0 && followed[own(call.replacesID)] != nil ? own(call.replacesID) : nil
        let previous = replaced ?? (followed[own(id)] != nil ? own(id) : stackMatch(call, caller: caller))
        var changes: [SourceChange] = []
        for key in followed.keys.sorted(by: { $0.owner < $1.owner }) where key.id == id && key.owner != caller {
            followed[key]?.displaced = true
            if followed[key]?.ownerLeft == true, let gone = followed.removeValue(forKey: key) {
                changes.append(.finish(source: gone.source, content: nil, keep: false))
            }
        }
        if let previous, var entry = followed.removeValue(forKey: previous) {
            entry.id = id
            entry.displaced = false
            // A replacement without a value keeps the last one shown.
            let lastValue = entry.call.value
            entry.call = call
            if entry.call.value == nil { entry.call.value = lastValue }
            entry.stackTag = call.stackTag ?? entry.stackTag
            entry.updatedAt = now
            if let outcome = Self.outcome(of: call) {
                // It says it is over, or shows no progress any more.
                return changes + [.finish(source: entry.source, content: content(of: entry, outcome: outcome), keep: true)]
            }
            followed[own(id)] = entry
            return changes + [.show(activity(of: entry))]
        }
        guard call.isProgress else { return changes }
        if followed.count >= Self.maximumFollowed, let stalest = followed.values.min(by: { $0.updatedAt < $1.updatedAt }) {
            followed[Key(owner: stalest.owner, id: stalest.id)] = nil
            changes.append(.finish(source: stalest.source, content: nil, keep: false))
        }
        let app = SourceApp.resolve(
            claim: call.desktopEntry, identity: identity, kind: .notification, label: call.appName,
            lookup: lookup)
        // The caller is part of the key: another connection's notification of the same id is
        // another activity. (Unique names are never reused on a bus.)
        let entry = Followed(
            source: SourceKey.notification(busID: busID, owner: caller, id: id).description, owner: caller, id: id, call: call, stackTag: call.stackTag,
            app: app, privateOnLockScreen: call.privacyScope == .user, startedAt: now, updatedAt: now)
        if let outcome = Self.outcome(of: call) {
            // Done or failed already: shown ended.
            changes.append(.show(activity(of: entry)))
            changes.append(.finish(source: entry.source, content: content(of: entry, outcome: outcome), keep: true))
            return changes
        }
        followed[own(id)] = entry
        changes.append(.show(activity(of: entry)))
        return changes
    }

    /// `NotificationClosed(id, reason)` from `sender`: reason 2 is the user dismissing it, 3
    /// a `CloseNotification` call. A call's closing ends the notification of the connection
    /// seen calling it, if it has one of that id (another connection's call ends nothing);
    /// any other ends the one the server shows under `id` (not one another connection's
    /// that it displaced).
    /// A server that stacks (dunst) closes the old notification of a tag before it answers
    /// the call that replaces it: while such a call of its own sender waits for its reply, the
    /// closing is the replacement, not the end.
    package mutating func closed(id: UInt32, reason: UInt32, from sender: String) -> [SourceChange] {
        guard sender == server else { return [] }
        let closers = closing.filter { $0.id == id }
        closing.removeAll { $0.id == id }
        // A reason 3 no one was seen asking for is the server's own doing.
        let ended: [Key] =
            if reason == 3 && !closers.isEmpty {
                closers.filter { followed[$0] != nil }
            } else {
                followed.filter { $0.key.id == id && !$0.value.displaced }.map(\.key)
            }
        var changes: [SourceChange] = []
        for key in ended.sorted(by: { $0.owner < $1.owner }) {
            guard let entry = followed[key] else { continue }
            let replaced = (callers[key.owner]?.pending ?? []).contains { _, call in
                (call.replacesID == id
                    || (entry.stackTag != nil && call.stackTag == entry.stackTag && call.appName == entry.call.appName))
            }
            if replaced { continue }
            followed[key] = nil
            changes.append(.finish(source: entry.source, content: nil, keep: reason != 2))
        }
        return changes
    }

    /// Connection `owner` left the bus: its notifications another connection's displaced are
    /// dismissed; the others stay until they close, and are dismissed when displaced.
    package mutating func ownerLeft(_ owner: String) -> [SourceChange] {
        var changes: [SourceChange] = []
        for key in followed.keys.sorted(by: { $0.id < $1.id }) where key.owner == owner {
            if followed[key]?.displaced == true, let gone = followed.removeValue(forKey: key) {
                changes.append(.finish(source: gone.source, content: nil, keep: false))
            } else {
                followed[key]?.ownerLeft = true
            }
        }
        return changes
    }

    /// The connections whose notifications are followed and still on the bus, as far as
    /// `ownerLeft` was told.
    package var owners: Set<String> { Set(followed.values.filter { !$0.ownerLeft }.map(\.owner)) }

    /// The notification ids followed now.
    package var followedIDs: [UInt32] { followed.keys.map(\.id).sorted() }

    /// The notifications followed now, by sender and id.
    package var followedKeys: Set<Key> { Set(followed.keys) }
    /// Calls waiting for their reply, of every caller.
    package var pendingCount: Int { callers.values.reduce(0) { $0 + $1.pending.count } }

    /// The caller's own notification of the call's stack tag.
    private func stackMatch(_ call: NotifyCall, caller: String) -> Key? {
        guard let tag = call.stackTag else { return nil }
        return followed.values.first { $0.owner == caller && $0.stackTag == tag && $0.call.appName == call.appName }
            .map { Key(owner: $0.owner, id: $0.id) }
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
        BridgedActivity(
            source: entry.source, type: entry.privateOnLockScreen ? "PrivateProgress" : "Progress",
            attributes: ["app": entry.app.json, "via": "notification"],
            content: BridgedContent(state: state(of: entry), relevance: Rank.Tier.progress.relevance),
            rank: Rank(tier: .progress, since: entry.startedAt))
    }
}
