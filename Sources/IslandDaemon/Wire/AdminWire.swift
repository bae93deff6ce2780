import IslandCore
import IslandProtocol
import OrderedJSON
import OrderedCollections

extension Wire {
    /// `org.island.Admin.App`.
    static func app(_ app: AppOverview) -> JSON {
        typealias App = AdminNames.App
        var object: JSONObject = [App.id: .string(app.id)]
        if let name = app.name { object[App.name] = .string(name) }
        object[App.entitled] = .bool(app.entitled)
        object[App.frequentUpdatesAllowed] = .bool(app.frequentUpdatesAllowed)
        object[App.enabled] = .bool(app.enabled)
        object[App.frequentUpdates] = .bool(app.frequentUpdates)
        object[App.activities] = .int(app.activities)
        object[App.limits] = limits(app.limits, frequent: app.frequentUpdates)
        return .object(object)
    }

    /// `Focus`, the same in the admin, presenter and producer interfaces: `{"on": true, "since": …}`
    /// while Do Not Disturb is on, `{"on": false}` while it is off.
    static func focus(since: Double?) -> JSON {
        guard let since else { return [AdminNames.Focus.on: false] }
        return [AdminNames.Focus.on: true, AdminNames.Focus.since: .double(since)]
    }

    /// The reply of `org.island.Admin.Status`.
    static func status(_ status: EngineStatus, version: String, scope: DaemonScope, connections: Int) -> JSONObject {
        typealias Status = AdminNames.Status
        return [
            Status.activities: .int(status.activities),
            Status.liveActivities: .int(status.liveActivities),
            Status.presenters: .int(status.presenters),
            Status.producers: .int(status.producers),
            Status.uptime: .double(status.uptime),
            Status.limits: limits(status.limits, frequent: false),
            Status.version: .string(version),
            Status.scope: .string(scope.rawValue),
            Status.connections: .int(connections),
        ]
    }
}
