import IslandCore
import OrderedJSON
import OrderedCollections

extension Wire {
    /// `org.island.Admin.App`.
    static func app(_ app: AppOverview) -> JSON {
        var object: JSONObject = ["id": .string(app.id)]
        if let name = app.name { object["name"] = .string(name) }
        object["entitled"] = .bool(app.entitled)
        object["frequentUpdatesAllowed"] = .bool(app.frequentUpdatesAllowed)
        object["enabled"] = .bool(app.enabled)
        object["frequentUpdates"] = .bool(app.frequentUpdates)
        object["activities"] = .int(app.activities)
        object["limits"] = limits(app.limits, frequent: app.frequentUpdates)
        return .object(object)
    }

    /// `Focus`, the same in the admin, presenter and producer interfaces: `{"on": true, "since": …}`
    /// while Do Not Disturb is on, `{"on": false}` while it is off.
    static func focus(since: Double?) -> JSON {
        guard let since else { return ["on": false] }
        return ["on": true, "since": .double(since)]
    }

    /// The reply of `org.island.Admin.Status`.
    static func status(_ status: EngineStatus, version: String, scope: DaemonScope, connections: Int) -> JSONObject {
        [
            "activities": .int(status.activities),
            "liveActivities": .int(status.liveActivities),
            "presenters": .int(status.presenters),
            "producers": .int(status.producers),
            "uptime": .double(status.uptime),
            "limits": limits(status.limits, frequent: false),
            "version": .string(version),
            "scope": .string(scope.rawValue),
            "connections": .int(connections),
        ]
    }
}
