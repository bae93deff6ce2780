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
