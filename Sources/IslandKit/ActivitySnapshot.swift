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

    init(json: JSON?) {
        state = json?[Names.state]?.objectValue ?? [:]
        staleDate = json?[Names.staleDate]?.doubleValue
        relevanceScore = json?[Names.relevanceScore]?.doubleValue ?? 0
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

    public init?(json: JSON?) {
        typealias Names = ProducerNames.Activity
        guard let object = json?.objectValue, let id = object[Names.id]?.stringValue else { return nil }
        self.id = id
        app = object[Names.app]?.stringValue ?? ""
        type = object[Names.type]?.stringValue ?? ""
        attributes = object[Names.attributes]?.objectValue ?? [:]
        content = RawActivityContent(json: object[Names.content])
        deliveredContent = object[Names.deliveredContent].map { RawActivityContent(json: $0) } ?? content
        state = object[Names.state]?.stringValue.flatMap(ActivityState.init(rawValue:)) ?? .active
        endReason = object[Names.endReason]?.stringValue.flatMap(ActivityEndReason.init(rawValue:))
        ownerGone = object[Names.ownerGone]?.stringValue ?? "keep"
        createdAt = object[Names.createdAt]?.doubleValue ?? 0
        updatedAt = object[Names.updatedAt]?.doubleValue ?? 0
        endedAt = object[Names.endedAt]?.doubleValue
        dismissAt = object[Names.dismissAt]?.doubleValue
        pushToken = object[Names.pushToken]?.stringValue
        start = object[Names.start]?.doubleValue
        startedLate = object[Names.startedLate]?.stringValue
        self.json = object
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

    public init?(json: JSON?) {
        typealias Names = ProducerNames.AuthorizationInfo
        guard let object = json?.objectValue, let enabled = object[Names.enabled]?.boolValue else { return nil }
        app = object[Names.app]?.stringValue ?? ""
        self.enabled = enabled
        frequentUpdates = object[Names.frequentUpdates]?.boolValue ?? false
        remainingStarts = object[Names.remainingStarts]?.intValue ?? 0
        remainingAlerts = object[Names.remainingAlerts]?.intValue ?? 0
        activities = object[Names.activities]?.intValue ?? 0
        globalActivities = object[Names.globalActivities]?.intValue ?? 0
        limits = object[Names.limits]?.objectValue ?? [:]
        self.json = object
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

    init?(json: JSON?) {
        typealias Names = ProducerNames.Event
        guard let object = json?.objectValue, let kind = object[Names.kind]?.stringValue.flatMap(Kind.init(rawValue:)) else { return nil }
        self.kind = kind
        activity = ActivitySnapshot(json: object[Names.activity])
        url = object[Names.url]?.stringValue
        action = object[Names.action]?.stringValue
        authorization = AuthorizationSnapshot(json: object[Names.authorization])
        type = object[Names.type]?.stringValue
        pushToken = object[Names.pushToken]?.stringValue
        focus = FocusSnapshot(json: object[Names.focus])
        self.json = object
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

    init?(json: JSON?) {
        typealias Names = ProducerNames.Focus
        guard let on = json?[Names.on]?.boolValue else { return nil }
        isOn = on
        since = json?[Names.since]?.doubleValue
    }
}

/// How an update reached presenters, untyped.
extension ActivityUpdateResult {
    init(json: JSON?) {
        typealias Names = ProducerNames.Delivery
        self.init(
            throttled: json?[Names.throttled]?.boolValue ?? false,
            deliverAt: Date(timeIntervalSince1970: json?[Names.deliverAt]?.doubleValue ?? 0),
            alerted: json?[Names.alerted]?.boolValue ?? false,
            alertSuppressed: json?[Names.alertSuppressed]?.boolValue ?? false,
            alertSuppressedReason: json?[Names.alertSuppressedReason]?.stringValue.flatMap(AlertSuppressionReason.init(rawValue:)))
    }
}
