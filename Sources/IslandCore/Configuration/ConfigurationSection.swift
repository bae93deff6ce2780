extension IslandConfiguration {
    /// A section header, and which keys it accepts.
    enum Section: Equatable {
        case limits
        case daemon
        case push
        case app(String)
        /// `[LockScreen]` (nil) or `[LockScreen:<app-id>]`.
        case lockScreen(String?)

        init(_ name: String, path: String, line: Int) throws(ConfigurationError) {
            switch name {
            case "Limits": self = .limits
            case "Daemon": self = .daemon
            case "Push": self = .push
            case "LockScreen": self = .lockScreen(nil)
            case _ where name.hasPrefix("App:") || name.hasPrefix("LockScreen:"):
                let isApp = name.hasPrefix("App:")
                let app = String(name.dropFirst(isApp ? "App:".count : "LockScreen:".count))
                guard Self.isAppID(app) else {
                    throw ConfigurationError(
                        path: path, line: line,
                        message: "invalid app id '\(app)' in [\(name)]: expected a reverse-DNS name such as org.example.App")
                }
                self = isApp ? .app(app) : .lockScreen(app)
            default:
                let suggestion =
                    name.lowercased().hasPrefix("app:")
                    ? "App:" + name.dropFirst("app:".count)
                    : closest(to: name, among: ["Limits", "Daemon", "Push", "LockScreen"]) ?? "Limits"
                throw ConfigurationError(
                    path: path, line: line,
                    message: "unknown section [\(name)]; did you mean [\(suggestion)]? "
                        + "Sections are [Limits], [Daemon], [Push], [LockScreen], [LockScreen:<app-id>] and [App:<app-id>]")
            }
        }

        var header: String {
            switch self {
            case .limits: "[Limits]"
            case .daemon: "[Daemon]"
            case .push: "[Push]"
            case .app(let app): "[App:\(app)]"
            case .lockScreen(nil): "[LockScreen]"
            case .lockScreen(let app?): "[LockScreen:\(app)]"
            }
        }

        /// The limit `key` names, when this section accepts it.
        func limitKey(_ key: String, at location: (path: String, line: Int)) throws(ConfigurationError) -> LimitKey {
            if let limitKey = LimitKey(rawValue: key) {
                guard limitKey.isGlobalOnly, case .app = self else { return limitKey }
                let what = limitKey == .maxActivities ? "live" : "ended"
                throw ConfigurationError(
                    path: location.path, line: location.line,
                    message: "\(key)= is only allowed in [Limits]: it caps the \(what) activities of all apps together; "
                        + "use \(key)PerApp= for one app")
            }
            if DaemonKey(rawValue: key) != nil {
                throw ConfigurationError(
                    path: location.path, line: location.line, message: "\(key)= belongs in [Daemon], not \(header)")
            }
            let known = LimitKey.allCases.filter { !($0.isGlobalOnly && self != .limits) }.map(\.rawValue)
            throw unknown(key, known: known, at: location)
        }

        /// The push setting `key` names.
        func pushKey(_ key: String, at location: (path: String, line: Int)) throws(ConfigurationError) -> PushKey {
            if let pushKey = PushKey(rawValue: key) { return pushKey }
            throw unknown(key, known: PushKey.allCases.map(\.rawValue), at: location)
        }

        /// The daemon setting `key` names.
        func daemonKey(_ key: String, at location: (path: String, line: Int)) throws(ConfigurationError) -> DaemonKey {
            if let daemonKey = DaemonKey(rawValue: key) { return daemonKey }
            if LimitKey(rawValue: key) != nil {
                throw ConfigurationError(
                    path: location.path, line: location.line,
                    message: "\(key)= belongs in [Limits] or [App:<app-id>], not [Daemon]")
            }
            throw unknown(key, known: DaemonKey.allCases.map(\.rawValue), at: location)
        }

        private func unknown(_ key: String, known: [String], at location: (path: String, line: Int)) -> ConfigurationError {
            let suggestion = closest(to: key, among: known).map { "; did you mean '\($0)='?" } ?? ""
            return ConfigurationError(
                path: location.path, line: location.line, message: "unknown key '\(key)=' in \(header)\(suggestion)")
        }

        /// A reverse-DNS app id as desktop files and Flatpak use: at least two dot-separated
        /// elements of `[A-Za-z0-9_-]`, the first not starting with a digit.
        static func isAppID(_ id: String) -> Bool {
            guard id.utf8.count <= 255 else { return false }
            let elements = id.split(separator: ".", omittingEmptySubsequences: false)
            guard elements.count >= 2, let first = elements[0].unicodeScalars.first, !("0"..."9").contains(first) else {
                return false
            }
            return elements.allSatisfy { element in
                !element.isEmpty
                    && element.unicodeScalars.allSatisfy { scalar in
                        switch scalar {
                        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
                        default: false
                        }
                    }
            }
        }
    }
}
