public import Foundation

/// What describes a Live Activity of one kind, as in ActivityKit: the static attributes
/// (set once, at the start) and the dynamic `ContentState` (replaced by every update).
///
/// Both are sent to the daemon as JSON objects, dates as seconds since the Unix epoch, so
/// layouts can format them (`{{attributes.title}}`, a `timer` to `{{state.endsAt}}`).
public protocol ActivityAttributes: Codable, Sendable {
    associatedtype ContentState: Codable & Hashable & Sendable

    /// The activity type the daemon, layouts and presenters know these attributes by, and
    /// the app's server names in a push-to-start. Set it: the default is the Swift type's
    /// name, so renaming the struct would silently leave its registered layout, its
    /// push-to-start token and its running activities behind under the old name.
    ///
    /// ```swift
    /// struct DeliveryAttributes: ActivityAttributes {
    ///     static let activityType = "Delivery"
    ///     …
    /// }
    /// ```
    static var activityType: String { get }
}

extension ActivityAttributes {
    public static var activityType: String { String(describing: Self.self) }
}

/// An activity's content: its state, when it becomes out of date, and how it ranks against
/// other activities in the island and on the lock screen (higher first).
public struct ActivityContent<State: Codable & Hashable & Sendable>: Sendable, Hashable {
    public var state: State
    public var staleDate: Date?
    public var relevanceScore: Double

    public init(state: State, staleDate: Date?, relevanceScore: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

/// Where an activity is in its life: `pending → active ⇄ stale → ended → dismissed`.
public enum ActivityState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, active, stale, ended, dismissed
}

/// Why an activity ended.
public enum ActivityEndReason: String, Sendable, Hashable, Codable {
    case app, user, expired, ownerGone, system
}

/// When an ended activity leaves the lock screen.
public enum ActivityUIDismissalPolicy: Sendable, Hashable {
    /// Stays listed for up to four hours.
    case `default`
    /// Removed now.
    case immediate
    /// Removed at the date (capped at the end plus four hours).
    case after(Date)
}

/// What happens to an activity when the app's last connection to the daemon goes away.
public enum ActivityOwnerGonePolicy: String, Sendable, Hashable {
    /// Nothing: the activity stays as it is (the default).
    case keep
    /// The activity ends with reason `ownerGone`.
    case end
    /// The activity becomes stale after a grace period.
    case stale
}

/// An update that should draw attention: presenters expand the activity briefly, as
/// ActivityKit's `AlertConfiguration`. Title and body are plain strings (ActivityKit's are
/// `LocalizedStringResource`s, which string literals also make).
public struct AlertConfiguration: Sendable, Hashable {
    public var title: String
    public var body: String
    /// Accepted for ActivityKit's sake and not sent: Island's presenters play no sounds.
    public var sound: AlertSound

    public init(title: String, body: String, sound: AlertSound = .default) {
        self.title = title
        self.body = body
        self.sound = sound
    }

    /// The sound of an alert, as ActivityKit's `AlertConfiguration.AlertSound`.
    public struct AlertSound: Sendable, Hashable {
        /// The name of the sound file; nil for the default sound.
        public var name: String?

        public static let `default` = AlertSound(name: nil)

        public static func named(_ name: String) -> AlertSound { AlertSound(name: name) }
    }
}

/// How an update reached presenters. Island's update budget is observable, never silent.
public struct ActivityUpdateResult: Sendable, Hashable {
    /// The content was accepted, but presenters get it only at `deliverAt`; later updates
    /// before then coalesce (the latest wins).
    public var throttled: Bool
    public var deliverAt: Date
    /// The alert was shown.
    public var alerted: Bool
    /// The content applied without the alert, for `alertSuppressedReason`.
    public var alertSuppressed: Bool
    /// Why the alert was not shown; nil when it was, or none was given (or a daemon from
    /// before the reason said only `alertSuppressed`).
    public var alertSuppressedReason: AlertSuppressionReason?

    public init(
        throttled: Bool, deliverAt: Date, alerted: Bool, alertSuppressed: Bool,
        alertSuppressedReason: AlertSuppressionReason? = nil
    ) {
        self.throttled = throttled
        self.deliverAt = deliverAt
        self.alerted = alerted
        self.alertSuppressed = alertSuppressed
        self.alertSuppressedReason = alertSuppressedReason
    }
}

/// Why an alerting update applied without its alert.
public enum AlertSuppressionReason: String, Sendable, Hashable {
    /// The app's alert budget (6 an hour by default) is spent.
    case budget
    /// The user has Do Not Disturb on; nothing of the budget was spent.
    case focus
    /// The activity is `pending` (scheduled): its start shows its own alert.
    case pending
}
