import IslandCore
import IslandJSON
import Varlink

/// Activities and their parts in the shapes of Protocol/org.island.*.varlink. Parameters
/// arriving here have already been validated against the interface, so these conversions
/// only read what the IDL guarantees.
enum Wire {
    static func content(_ content: ActivityContent) -> JSON {
        var object: JSONObject = ["state": .object(content.state)]
        if let staleDate = content.staleDate { object["staleDate"] = .double(staleDate) }
        object["relevanceScore"] = .double(content.relevanceScore)
        return .object(object)
    }

    static func content(from json: JSON?) -> ActivityContent? {
        guard let object = json?.objectValue, let state = object["state"]?.objectValue else { return nil }
        return ActivityContent(state: state, staleDate: object["staleDate"]?.doubleValue,
                               relevanceScore: object["relevanceScore"]?.doubleValue ?? 0)
    }

    static func activity(_ activity: Activity) -> JSON {
        var object: JSONObject = [
            "id": .string(activity.id), "app": .string(activity.app), "type": .string(activity.type),
            "attributes": .object(activity.attributes),
            "content": content(activity.content), "deliveredContent": content(activity.deliveredContent),
            "state": .string(activity.state.rawValue),
        ]
        if let reason = activity.endReason { object["endReason"] = .string(reason.rawValue) }
        object["ownerGone"] = .string(activity.ownerGonePolicy.rawValue)
        object["createdAt"] = .double(activity.createdAt)
        object["updatedAt"] = .double(activity.updatedAt)
        if let endedAt = activity.endedAt { object["endedAt"] = .double(endedAt) }
        if let dismissAt = activity.dismissAt { object["dismissAt"] = .double(dismissAt) }
        return .object(object)
    }

    /// An activity as presenters draw it (an `Item`): delivered content and its layout, or,
    /// with `layout` nil, without the layout the presenter already has. Written as text: it
    /// goes out on every update.
    static func writeItem(_ activity: Activity, layout: (json: JSON, isDefault: Bool)?, to text: inout JSONText) {
        text.openObject()
        text.member("id", .string(activity.id))
        text.member("app", .string(activity.app))
        text.member("type", .string(activity.type))
        text.member("attributes", .object(activity.attributes))
        text.member("content", content(activity.deliveredContent))
        text.member("state", .string(activity.state.rawValue))
        if let reason = activity.endReason { text.member("endReason", .string(reason.rawValue)) }
        text.member("createdAt", .double(activity.createdAt))
        if let dismissAt = activity.dismissAt { text.member("dismissAt", .double(dismissAt)) }
        if let layout {
            text.member("layout", layout.json)
            text.member("defaultLayout", .bool(layout.isDefault))
        }
        text.closeObject()
    }

    static func limits(_ limits: ActivityLimits, frequent: Bool) -> JSON {
        [
            "maxPayloadBytes": .int(limits.maximumPayloadBytes),
            "maxActivitiesPerApp": .int(limits.maximumActivitiesPerApp),
            "maxActivities": .int(limits.maximumActivities),
            "startBudget": .int(limits.startBudget),
            "startBudgetWindow": .double(limits.startBudgetWindow),
            // JSON has no infinity: an uncapped rate is reported as 0.
            "updatesPerSecond": .double(finite(frequent ? limits.frequentUpdatesPerSecond : limits.updatesPerSecond)),
            "alertBudget": .int(limits.alertBudget),
            "alertBudgetWindow": .double(limits.alertBudgetWindow),
            "maxActiveDuration": .double(limits.maximumActiveDuration),
            "maxDismissalDelay": .double(limits.maximumDismissalDelay),
        ]
    }

    private static func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }

    /// The policy of an `End` call; `after` without its date is refused rather than read as
    /// "dismiss now", which would silently drop the activity.
    static func dismissalPolicy(from json: JSON?) throws(VarlinkError) -> DismissalPolicy {
        switch json?["kind"]?.stringValue {
        case "immediate": return .immediate
        case "after":
            guard let date = json?["date"]?.doubleValue else { throw VarlinkError.invalidParameter("dismissalPolicy.date") }
            return .after(date)
        default: return .default
        }
    }
}
