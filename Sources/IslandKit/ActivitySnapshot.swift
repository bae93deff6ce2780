import Foundation
public import OrderedJSON
import IslandProtocol
public import OrderedCollections

/// Content as the daemon holds it: the state as a JSON object.
public struct RawActivityContent: Sendable, Hashable {
    public var state: JSONObject
    public var staleDate: Double?
    public var relevanceScore: Double

    public init(state: JSONObject, staleDate: Double? = nil, relevanceScore: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    private typealias Names = ProducerNames.Content

    /// The reply's `Content`; a score it leaves out is 0, as the daemon reads one.
    init(_ content: ProducerReplies.Content) {
        self.init(state: content.state, staleDate: content.staleDate, relevanceScore: content.relevanceScore ?? 0)
    }

    /// The protocol's `Content`.
    public var json: JSON {
        var object: JSONObject = [Names.state: .object(state)]
        if let staleDate { object[Names.staleDate] = .double(staleDate) }
        object[Names.relevanceScore] = .double(relevanceScore)
        return .object(object)
    }
}

/// One activity as the daemon reported it (org.island.Producer's `Activity`), untyped: the
/// layer under `Activity<Attributes>`, used by tools such as the `island` CLI.
public struct ActivitySnapshot: Sendable, Hashable {
    public var id: String
    public var app: String
    public var type: String
    public var attributes: JSONObject
    /// The latest accepted content.
    public var content: RawActivityContent
    /// The content presenters show now; trails `content` while updates are coalesced.
    public var deliveredContent: RawActivityContent
    public var state: ActivityState
    public var endReason: ActivityEndReason?
    public var ownerGone: String
    public var createdAt: Double
    public var updatedAt: Double
    public var endedAt: Double?
    public var dismissAt: Double?
    /// Its push token (the MQTT topic its server publishes to), when it has one and the
    /// reply carried it (`Request`, `List`, a `pushToken` event).
    public var pushToken: String?
    /// The date a scheduled activity was requested to start at (seconds since the epoch):
    /// it is `pending` until then.
    public var start: Double?
    /// Why a scheduled activity started after `start` (`daemonDown`), when it did.
    public var startedLate: String?
    /// The activity exactly as received.
    public var json: JSONObject

    /// An `Activity` as the interface says it is, or nil.
    public init?(json: JSON?) {
        guard let json, let activity = try? ProducerReplies.Activity(reply: json) else { return nil }
        self.init(activity)
    }

    /// A state this IslandKit does not know (a newer daemon's) reads as `active`, as the
    /// activity is still there.
    init(_ activity: ProducerReplies.Activity) {
        id = activity.id
        app = activity.app
        type = activity.type
        attributes = activity.attributes
        content = RawActivityContent(activity.content)
        deliveredContent = RawActivityContent(activity.deliveredContent)
        state = ActivityState(rawValue: activity.state) ?? .active
        endReason = activity.endReason.flatMap(ActivityEndReason.init(rawValue:))
        ownerGone = activity.ownerGone
        createdAt = activity.createdAt
        updatedAt = activity.updatedAt
        endedAt = activity.endedAt
        dismissAt = activity.dismissAt
        pushToken = activity.pushToken
        start = activity.start
        startedLate = activity.startedLate
        json = activity.json
    }
}

/// The app's authorization as the daemon reported it (`AuthorizationInfo`).
public struct AuthorizationSnapshot: Sendable, Hashable {
    public var app: String
    public var enabled: Bool
    public var frequentUpdates: Bool
    public var remainingStarts: Int
    public var remainingAlerts: Int
    public var activities: Int
    public var globalActivities: Int
    public var limits: JSONObject
    public var json: JSONObject

    /// An `AuthorizationInfo` as the interface says it is, or nil.
    public init?(json: JSON?) {
        guard let json, let info = try? ProducerReplies.AuthorizationInfo(reply: json) else { return nil }
        self.init(info)
    }

    init(_ info: ProducerReplies.AuthorizationInfo) {
        app = info.app
        enabled = info.enabled
        frequentUpdates = info.frequentUpdates
        remainingStarts = info.remainingStarts
        remainingAlerts = info.remainingAlerts
        activities = info.activities
        globalActivities = info.globalActivities
        limits = info.limits.json
        json = info.json
    }
}

/// One event of the app's watch stream.
public struct ActivityEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// An activity changed state.
        case state
        /// New content reached presenters.
        case content
        /// The user tapped the activity; `url` is the layout's URL.
        case tap
        /// The user pressed a layout button; `action` is its id.
        case button
        /// The user changed the app's settings.
        case authorization
        /// IslandKit re-read an activity after reconnecting to a restarted daemon.
        case resync
        /// The activity has a new push token (`pushToken`); the one before works no more.
        case pushToken
        /// The app's push-to-start token for activities of `type` is new (`pushToken`).
        case pushToStartToken
        /// The user turned Do Not Disturb on or off (`focus`).
        case focus
    }

    public var kind: Kind
    public var activity: ActivitySnapshot?
    public var url: String?
    public var action: String?
    public var authorization: AuthorizationSnapshot?
    /// `pushToStartToken`: the activity type the token starts.
    public var type: String?
    /// `pushToken`, `pushToStartToken`: the new token.
    public var pushToken: String?
    /// `focus`: the user's Do Not Disturb as it is now.
    public var focus: FocusSnapshot?
    /// The event as received (for `resync`, built by IslandKit in the same shape).
    public var json: JSONObject

    /// nil for a kind this IslandKit does not tell of (`watching`, a newer daemon's).
    init?(_ event: ProducerReplies.Event) {
        guard let kind = Kind(rawValue: event.kind) else { return nil }
        self.kind = kind
        activity = event.activity.map(ActivitySnapshot.init)
        url = event.url
        action = event.action
        authorization = event.authorization.map(AuthorizationSnapshot.init)
        type = event.type
        pushToken = event.pushToken
        focus = event.focus.map(FocusSnapshot.init)
        json = event.json
    }

    init(resync activity: ActivitySnapshot) {
        kind = .resync
        self.activity = activity
        json = [ProducerNames.Event.kind: "resync", ProducerNames.Event.activity: .object(activity.json)]
    }
}

/// The user's Do Not Disturb (`Focus`): while on, the app's alerts apply without drawing
/// attention (`AlertSuppressionReason.focus`).
public struct FocusSnapshot: Sendable, Hashable {
    public var isOn: Bool
    /// When it was turned on, in seconds since the Unix epoch; nil while off.
    public var since: Double?

    init(_ focus: ProducerReplies.Focus) {
        isOn = focus.on
        since = focus.since
    }
}

/// How an update reached presenters, untyped.
extension ActivityUpdateResult {
    init(_ delivery: ProducerReplies.Delivery) {
        self.init(
            throttled: delivery.throttled, deliverAt: Date(timeIntervalSince1970: delivery.deliverAt), alerted: delivery.alerted,
            alertSuppressed: delivery.alertSuppressed,
            alertSuppressedReason: delivery.alertSuppressedReason.flatMap(AlertSuppressionReason.init(rawValue:)))
    }
}
