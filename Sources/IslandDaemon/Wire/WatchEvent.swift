import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore
import IslandProtocol

/// One event of a Watch stream (`org.island.Producer.Event`), encoded once for every watcher
/// it goes to.
struct WatchEvent: Sendable {
    enum Kind: String, Sendable {
        /// The watcher is registered: no later change can escape it.
        case watching
        /// The activity's state changed.
        case state
        /// Content was delivered to presenters.
        case content
        /// A presenter tapped the activity.
        case tap
        /// A presenter pressed one of the activity's buttons.
        case button
        /// The app's authorization changed.
        case authorization
        /// An activity has a new push token.
        case pushToken
        /// The owner's push-to-start token of an activity type is new.
        case pushToStartToken
        /// The user turned Do Not Disturb on or off.
        case focus
    }

    private typealias Names = ProducerNames.Event

    let encoded: VarlinkEncodedParameters
    /// What a later event supersedes this one by: the activity a state or content event
    /// carries (the later event carries it whole, newer), or the app's authorization.
    let key: String?
    /// Whether a later event with the same key replaces this one. Taps and button presses are
    /// facts the app acts on, and an end is the last word on an activity: those are kept.
    let supersedable: Bool

    var size: Int { encoded.bytes.count }

    /// `{"event": {"kind": …, "activity": …, members…}}`.
    init(kind: Kind, activity: Activity, pushToken: String? = nil, members: KeyValuePairs<StaticString, JSON> = [:]) {
        var text = JSONText(capacity: 1024)
        text.openObject()
        text.key("event")
        text.openObject()
        text.member("kind", string: kind.rawValue)
        text.key("activity")
        Wire.writeActivity(activity, pushToken: pushToken, to: &text)
        for (key, value) in members { text.member(key, value) }
        text.closeObject()
        text.closeObject()
        encoded = VarlinkEncodedParameters(text)
        let terminal = activity.state == .ended || activity.state == .dismissed
        if kind == .pushToken {
            // A key of its own: a newer token replaces one still queued, never a state.
            key = "pushToken:" + activity.id
            supersedable = true
        } else {
            key = activity.id
            supersedable = kind == .content || (kind == .state && !terminal)
        }
    }

    init(_ event: JSONObject, key: String? = nil) {
        encoded = VarlinkEncodedParameters([ProducerNames.Watch.event: .object(event)])
        self.key = key
        supersedable = key != nil
    }

    /// The first event of every stream; with `focus` while Do Not Disturb is on (without, it
    /// is off: the event stays what it was before there was focus).
    static func watching(focusSince: Double?) -> WatchEvent {
        guard focusSince != nil else { return watching }
        return WatchEvent([Names.kind: .string(Kind.watching.rawValue), Names.focus: Wire.focus(since: focusSince)])
    }

    private static let watching = WatchEvent([Names.kind: .string(Kind.watching.rawValue)])

    /// Do Not Disturb is on since `since`, or off; a later one replaces it in a queue.
    static func focus(since: Double?) -> WatchEvent {
        WatchEvent([Names.kind: .string(Kind.focus.rawValue), Names.focus: Wire.focus(since: since)], key: Kind.focus.rawValue)
    }

    /// A presenter tapped the activity; `url` is what the tap opens, if anything.
    static func tap(_ activity: Activity, url: String?) -> WatchEvent {
        WatchEvent(kind: .tap, activity: activity, members: ["url": url.map { .string($0) } ?? .null])
    }

    /// A presenter pressed the activity's button of `action`.
    static func button(_ activity: Activity, action: String) -> WatchEvent {
        WatchEvent(kind: .button, activity: activity, members: ["action": .string(action)])  // StaticString key: JSONText's
    }

    /// The activity's push token is `token` now: the one before works no more.
    static func pushToken(_ activity: Activity, token: String) -> WatchEvent {
        WatchEvent(kind: .pushToken, activity: activity, pushToken: token, members: ["pushToken": .string(token)])  // StaticString key: JSONText's
    }

    /// The owner's push-to-start token for activities of `type` is `token` now.
    static func pushToStartToken(type: String, token: String) -> WatchEvent {
        WatchEvent(
            [Names.kind: .string(Kind.pushToStartToken.rawValue), Names.type: .string(type), Names.pushToken: .string(token)],
            key: Kind.pushToStartToken.rawValue + ":" + type)
    }

    /// The app's authorization as it is now; a later one replaces it in a queue.
    static func authorization(_ info: AuthorizationInfo) -> WatchEvent {
        WatchEvent(
            [Names.kind: .string(Kind.authorization.rawValue), Names.authorization: Wire.authorization(info)],
            key: Kind.authorization.rawValue)
    }
}
