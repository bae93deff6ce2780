package import OrderedJSON
import OrderedCollections

/// The user's choices (the permission store), persisted with the manager.
package struct ActivitySettings: Sendable, Hashable {
    /// Live Activities on for every app; off denies all of them.
    package var enabled: Bool
    /// Per-app choices; an app without an entry has the defaults.
    package var apps: [String: AppActivitySettings]
    /// When the user turned Do Not Disturb (focus) on; nil while it is off. While on, alerts
    /// are not shown.
    package var focusSince: Double?

    package init(enabled: Bool = true, apps: [String: AppActivitySettings] = [:], focusSince: Double? = nil) {
        self.enabled = enabled
        self.apps = apps
        self.focusSince = focusSince
    }

    package func settings(for app: String) -> AppActivitySettings { apps[app] ?? AppActivitySettings() }

    /// Whether the user allows `app` to run activities, globally and for the app.
    package func isEnabled(app: String) -> Bool { enabled && settings(for: app).enabled }

    /// Whether updates of `app` use the frequent rate: the manifest must allow it, and the user
    /// must not have turned it off.
    package func frequentUpdates(app: String, authorization: AppAuthorization) -> Bool {
        authorization.frequentUpdatesAllowed && settings(for: app).frequentUpdates
    }

    /// `{"enabled": true, "apps": {"<app>": {"enabled": true, "frequentUpdates": true}}, "focusSince": 1.0}`
    /// (`focusSince` only while focus is on), apps sorted so equal settings serialize to equal bytes.
    package var json: JSONObject {
        var apps: JSONObject = [:]
        for app in self.apps.keys.sorted() {
            let settings = self.apps[app]!
            apps[app] = ["enabled": .bool(settings.enabled), "frequentUpdates": .bool(settings.frequentUpdates)]
        }
        var object: JSONObject = ["enabled": .bool(enabled), "apps": .object(apps)]
        if let focusSince { object["focusSince"] = .double(focusSince) }
        return object
    }

    /// Reads `json`; missing members take their defaults. `path` prefixes member names in errors.
    package init(json: JSONObject, path: String = "") throws(ActivityDecodingError) {
        let reader = ActivityJSONReader(json, path: path)
        enabled = try reader.bool("enabled", default: true)
        focusSince = try reader.optionalDouble("focusSince")
        apps = [:]
        let appsReader = ActivityJSONReader(try reader.optionalObject("apps") ?? [:], path: reader.pathOf("apps"))
        for app in appsReader.object.keys {
            let entry = try appsReader.reader(app)
            apps[app] = AppActivitySettings(
                enabled: try entry.bool("enabled", default: true),
                frequentUpdates: try entry.bool("frequentUpdates", default: true)
            )
        }
    }
}

/// The user's choices for one app.
package struct AppActivitySettings: Sendable, Hashable {
    package var enabled: Bool
    /// Only effective when the manifest allows frequent updates; on by default then.
    package var frequentUpdates: Bool

    package init(enabled: Bool = true, frequentUpdates: Bool = true) {
        self.enabled = enabled
        self.frequentUpdates = frequentUpdates
    }
}
