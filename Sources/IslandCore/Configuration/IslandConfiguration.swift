import FreeDesktop

/// islandd's configuration: the limits of docs/design.md §3, globally and per app, and the
/// daemon's own settings, read from systemd-style INI files.
///
/// ```ini
/// [Limits]
/// UpdatesPerSecond=5
/// MaxActiveSec=8h
///
/// [App:org.example.Bench]
/// UpdatesPerSecond=infinity
///
/// [Daemon]
/// IdleExitSec=5min
/// ```
///
/// Pure: it reads file contents, not files. The daemon passes `islandd.conf` first, then the
/// `islandd.conf.d/*.conf` drop-ins sorted by file name.
package struct IslandConfiguration: Sendable, Hashable {
    package var limits: LimitsPolicy
    package var daemon: DaemonSettings
    package var push: PushSettings
    package var lockScreen: LockScreenPolicy

    package init(
        limits: LimitsPolicy = LimitsPolicy(), daemon: DaemonSettings = DaemonSettings(), push: PushSettings = PushSettings(),
        lockScreen: LockScreenPolicy = LockScreenPolicy()
    ) {
        self.limits = limits
        self.daemon = daemon
        self.push = push
        self.lockScreen = lockScreen
    }

    /// The configuration when no file sets anything.
    package static let defaults = IslandConfiguration()

    /// Reads `files`, in precedence order: a later file's assignment of a key overrides an
    /// earlier one's, as with systemd drop-ins. Each file starts outside any section.
    ///
    /// `[App:<app-id>]` sections start from the global values as finally resolved by all files,
    /// so a drop-in raising a global limit raises it for every app that does not set its own.
    /// An empty assignment (`Key=`) undoes earlier ones: back to the built-in default in
    /// `[Limits]` and `[Daemon]`, back to the global value in `[App:…]`.
    ///
    /// - Throws: the first problem found, with its file and line. Nothing is guessed: an
    ///   unknown section or key, or a value out of range, is an error, not a warning.
    package static func parse(files: [(path: String, contents: String)]) throws(ConfigurationError) -> IslandConfiguration {
        var global: [LimitKey: Value] = [:]
        var perApp: [String: [LimitKey: Value]] = [:]
        var daemon = DaemonSettings()
        var push = PushSettings()
        var lockScreen = LockScreenPolicy()

        for file in files {
            var section: Section?
            for line in try lines(of: file.contents, path: file.path) {
                switch line {
                case .group(let name, let number):
                    section = try Section(name, path: file.path, line: number)
                case .entry(let entry):
                    let (key, text, number) = (entry.key, entry.value, entry.line)
                    let location = (path: file.path, line: number)
                    switch section {
                    case nil:
                        throw ConfigurationError(
                            path: file.path, line: number,
                            message: "'\(key)=' is outside any section; put it under [Limits], [Daemon], [Push], [LockScreen] or [App:<app-id>]")
                    case .limits:
                        let limitKey = try Section.limits.limitKey(key, at: location)
                        global[limitKey] = try value(text, for: limitKey.rawValue, as: limitKey.kind, at: location)
                    case .app(let app):
                        let limitKey = try Section.app(app).limitKey(key, at: location)
                        perApp[app, default: [:]][limitKey] = try value(text, for: limitKey.rawValue, as: limitKey.kind, at: location)
                    case .daemon:
                        let daemonKey = try Section.daemon.daemonKey(key, at: location)
                        daemonKey.apply(try value(text, for: daemonKey.rawValue, as: daemonKey.kind, at: location), to: &daemon)
                    case .lockScreen(let app):
                        let section = Section.lockScreen(app)
                        guard key == "Visibility" else {
                            throw ConfigurationError(
                                path: file.path, line: number,
                                message: "unknown key '\(key)=' in \(section.header); it takes Visibility= only")
                        }
                        var level: LockScreenVisibility?
                        if !text.isEmpty {
                            guard let named = LockScreenVisibility(rawValue: text) else {
                                throw ConfigurationError(
                                    path: file.path, line: number,
                                    message: "invalid value '\(text)' for Visibility=: expected \(LockScreenVisibility.allNames)")
                            }
                            level = named
                        }
                        // An empty assignment undoes earlier ones: public for all apps, all
                        // apps' level for one.
                        if let app { lockScreen.perApp[app] = level } else { lockScreen.visibility = level ?? .public }
                    case .push:
                        let pushKey = try Section.push.pushKey(key, at: location)
                        do {
                            try pushKey.apply(text, to: &push)
                        } catch {
                            throw ConfigurationError(
                                path: file.path, line: number,
                                message: "invalid value '\(text)' for \(key)=: \(error.reason)")
                        }
                    }
                }
            }
        }

        var globalLimits = ActivityLimits.defaults
        for (key, value) in global { key.apply(value, to: &globalLimits) }
        var appLimits: [String: ActivityLimits] = [:]
        for (app, assignments) in perApp where !assignments.isEmpty {
            var limits = globalLimits
            for (key, value) in assignments { key.apply(value, to: &limits) }
            appLimits[app] = limits
        }
        return IslandConfiguration(
            limits: LimitsPolicy(global: globalLimits, perApp: appLimits), daemon: daemon, push: push,
            lockScreen: lockScreen)
    }

    /// The value of one assignment; nil for an empty one, which resets the key.
    private static func value(
        _ text: String, for key: String, as kind: ValueKind, at location: (path: String, line: Int)
    ) throws(ConfigurationError) -> Value? {
        guard !text.isEmpty else { return nil }
        do {
            return try read(text, as: kind)
        } catch {
            throw ConfigurationError(
                path: location.path, line: location.line,
                message: "invalid value '\(text)' for \(key)=: \(error.reason)")
        }
    }
}
