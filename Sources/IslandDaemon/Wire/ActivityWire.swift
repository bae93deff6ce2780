import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore
import IslandProtocol

/// The daemon's values in the shapes of Protocol/org.island.*.varlink: everything the engine
/// knows as Swift values becomes JSON here, and only here. (Parameters arriving are read by
/// the decoders generated from Interfaces/MethodParameters.varlinkmap.)
enum Wire {
    /// An activity as producers and watchers see it, written as text: a producer's every
    /// reply carries one. `pushToken` is the activity's, for its own app's eyes only.
    static func writeActivity(_ activity: Activity, pushToken: String? = nil, to text: inout JSONText) {
        activity.openObject(in: &text)
        activity.writeContents(to: &text)
        text.member("state", string: activity.state.rawValue)
        if let reason = activity.endReason { text.member("endReason", string: reason.rawValue) }
        text.member("ownerGone", string: activity.ownerGonePolicy.rawValue)
        activity.writeCreatedAt(to: &text)
        text.member("updatedAt", double: activity.updatedAt)
        if let endedAt = activity.endedAt { text.member("endedAt", double: endedAt) }
        if let dismissAt = activity.dismissAt { text.member("dismissAt", double: dismissAt) }
        if let pushToken { text.member("pushToken", string: pushToken) }
        if let schedule = activity.schedule {
            text.member("start", double: schedule.date)
            if let late = schedule.late { text.member("startedLate", string: late.rawValue) }
        }
        text.closeObject()
    }

    /// The same as a tree, for the calls that are not on every update's path (lists, watchers).
    static func activity(_ activity: Activity, pushToken: String? = nil) -> JSON {
        var text = JSONText(capacity: 512)
        writeActivity(activity, pushToken: pushToken, to: &text)
        // The writer only writes JSON.
        return try! JSONParser.parse(text.bytes)
    }

    /// What presenters head an app's activities with, from its desktop entry; for an activity
    /// its producer speaks for another app with, that app's, and the producer's own beside.
    /// Immutable, and one reference: the presenters' layout cache hands it out with every
    /// item it writes, on every update, and a copy then retains once instead of five times.
    final class AppLabel: Equatable, Sendable {
        let name: String?
        let icon: String?
        let producerName: String?
        let producerIcon: String?
        /// `"appName":…,"appIcon":…(,"producerName":…,"producerIcon":…)`, written once for
        /// every item of the app's activities.
        let members: [UInt8]

        init(name: String? = nil, icon: String? = nil, producerName: String? = nil, producerIcon: String? = nil) {
            (self.name, self.icon, self.producerName, self.producerIcon) = (name, icon, producerName, producerIcon)
            var text = JSONText(capacity: 64)
            if let name { text.member("appName", string: name) }
            if let icon { text.member("appIcon", string: icon) }
            if let producerName { text.member("producerName", string: producerName) }
            if let producerIcon { text.member("producerIcon", string: producerIcon) }
            members = text.bytes
        }

        static func == (lhs: AppLabel, rhs: AppLabel) -> Bool {
            lhs.name == rhs.name && lhs.icon == rhs.icon && lhs.producerName == rhs.producerName && lhs.producerIcon == rhs.producerIcon
        }
    }

    /// An activity as presenters draw it (an `Item`): delivered content and its layout, or,
    /// with `layout` nil, without the layout the presenter already has. Written as text: it
    /// goes out on every update.
    static func writeItem(
        _ activity: Activity, layout: (json: JSON, isDefault: Bool)?, app: AppLabel = AppLabel(),
        to text: inout JSONText
    ) {
        activity.openObject(in: &text)
        text.members(app.members)
        text.key("content")
        activity.deliveredContent.writeJSON(to: &text)
        text.member("state", string: activity.state.rawValue)
        if let reason = activity.endReason { text.member("endReason", string: reason.rawValue) }
        activity.writeCreatedAt(to: &text)
        if let endedAt = activity.endedAt { text.member("endedAt", double: endedAt) }
        if let dismissAt = activity.dismissAt { text.member("dismissAt", double: dismissAt) }
        if let layout {
            text.member("layout", layout.json)
            text.member("defaultLayout", bool: layout.isDefault)
        }
        text.closeObject()
    }

    /// `org.island.Producer.AuthorizationInfo`.
    static func authorization(_ info: AuthorizationInfo) -> JSON {
        typealias Info = ProducerNames.AuthorizationInfo
        return [
            Info.app: .string(info.app), Info.enabled: .bool(info.enabled), Info.frequentUpdates: .bool(info.frequentUpdates),
            Info.limits: limits(info.limits, frequent: info.frequentUpdates),
            Info.remainingStarts: .int(info.remainingStarts), Info.remainingAlerts: .int(info.remainingAlerts),
            Info.activities: .int(info.liveActivities), Info.globalActivities: .int(info.globalLiveActivities),
        ]
    }

    /// `Limits`, the same in the producer and admin interfaces.
    static func limits(_ limits: ActivityLimits, frequent: Bool) -> JSON {
        typealias Limits = ProducerNames.Limits
        return [
            Limits.maxPayloadBytes: .int(limits.maximumPayloadBytes),
            Limits.maxActivitiesPerApp: .int(limits.maximumActivitiesPerApp),
            Limits.maxActivities: .int(limits.maximumActivities),
            Limits.startBudget: .int(limits.startBudget),
            Limits.startBudgetWindow: .double(limits.startBudgetWindow),
            // JSON has no infinity: an uncapped rate is reported as 0.
            Limits.updatesPerSecond: .double(finite(frequent ? limits.frequentUpdatesPerSecond : limits.updatesPerSecond)),
            Limits.alertBudget: .int(limits.alertBudget),
            Limits.alertBudgetWindow: .double(limits.alertBudgetWindow),
            Limits.maxActiveDuration: .double(limits.maximumActiveDuration),
            Limits.maxDismissalDelay: .double(limits.maximumDismissalDelay),
        ]
    }

    private static func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }
}
