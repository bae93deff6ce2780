package import IslandCore
import FreeDesktop

/// `~/.config/island/bridge.conf`: which sources run and how many activities the bridge
/// shows. systemd-style INI like islandd.conf; a bad key or value is refused with
/// `path:line: message`.
///
/// ```ini
/// [Bridge]
/// MaxActivities=5
/// KeepEnded=1min
///
/// [MPRIS]
/// Enabled=yes
/// StaleAfterPause=10min
///
/// [Notifications]
/// Enabled=yes
///
/// [Jobs]
/// Enabled=auto
/// MaxJobs=32
/// MaxJobsPerSender=8
///
/// [DoNotDisturb]
/// Follow=yes
///
/// [ScreenSharing]
/// Follow=yes
///
/// [Lock]
/// Follow=yes
/// ```
package struct BridgeConfiguration: Sendable, Hashable {
    /// At most this many activities at once; the daemon's `MaxActivitiesPerApp` for the
    /// bridge caps it further.
    package var maxActivities = 5
    /// How long a finished transfer or progress stays listed after it ended (seconds).
    package var keepEnded = 60.0
    package var mprisEnabled = true
    /// A player paused or stopped this long (seconds) shows as stale.
    package var staleAfterPause = 600.0
    package var notificationsEnabled = true
    /// Whether to serve KDE's job tracker names: `nil` is `auto`, not inside a KDE Plasma
    /// session (whose own notification applet serves them).
    package var jobsEnabled: Bool?
    package var maxJobs = 32
    package var maxJobsPerSender = 8
    /// Whether the desktop's Do Not Disturb switch sets islandd's focus (`DesktopFocus`).
    package var followFocus = true
    /// Whether screen-cast sessions on the bus set islandd's sharing (`ScreenCastSessions`).
    package var followScreenSharing = true
    /// Whether the desktop's lock reports (logind, the screensavers) set islandd's lock (`DesktopLock`).
    package var followLock = true

    package init() {}

    /// Whether the job server runs in a session whose `XDG_CURRENT_DESKTOP` is `desktop`.
    package func servesJobs(currentDesktop: String?) -> Bool {
        if let jobsEnabled { return jobsEnabled }
        let desktops = (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
        return !desktops.contains("KDE")
    }

    /// The sources that run in a session whose `XDG_CURRENT_DESKTOP` is `currentDesktop`.
    package func enabledSources(currentDesktop: String?) -> SessionSources.Enabled {
        SessionSources.Enabled(mpris: mprisEnabled, notifications: notificationsEnabled, jobs: servesJobs(currentDesktop: currentDesktop))
    }

    /// Whether this configuration, replacing `old`, makes the bridge follow the bus afresh: a
    /// source turned on or off, or the job server's limits (what it showed from the bus then
    /// ends). Everything else applies at once.
    package func restartsSources(from old: BridgeConfiguration, currentDesktop: String?) -> Bool {
        enabledSources(currentDesktop: currentDesktop) != old.enabledSources(currentDesktop: currentDesktop)
            || maxJobs != old.maxJobs || maxJobsPerSender != old.maxJobsPerSender
    }

    /// Reads a configuration file's text; `path` names it in errors.
    package static func parse(_ contents: String, path: String) throws(ConfigurationError) -> BridgeConfiguration {
        var configuration = BridgeConfiguration()
        var section: String?
        for line in try IslandConfiguration.lines(of: contents, path: path) {
            switch line {
            case .group(let name, let number):
                guard ["Bridge", "MPRIS", "Notifications", "Jobs", "DoNotDisturb", "ScreenSharing", "Lock"].contains(name) else {
                    throw ConfigurationError(
                        path: path, line: number,
                        message: "unknown section [\(name)] (expected [Bridge], [MPRIS], [Notifications], [Jobs], [DoNotDisturb], [ScreenSharing] or [Lock])")
                }
                section = name
            case .entry(let entry):
                let (key, value, number) = (entry.key, entry.value, entry.line)
                func fail(_ message: String) -> ConfigurationError {
                    ConfigurationError(path: path, line: number, message: message)
                }
                func bool() throws(ConfigurationError) -> Bool {
                    switch value.lowercased() {
                    case "yes", "true", "on", "1": return true
                    case "no", "false", "off", "0": return false
                    default: throw fail("\(key)= takes yes or no, not '\(value)'")
                    }
                }
                func count(minimum: Int) throws(ConfigurationError) -> Int {
                    guard let number = Int(value), number >= minimum else {
                        throw fail("\(key)= takes a whole number of at least \(minimum), not '\(value)'")
                    }
                    return number
                }
                func span() throws(ConfigurationError) -> Double {
                    guard let seconds = TimeSpan.seconds(value), seconds >= 0 else {
                        throw fail("\(key)= takes a time span such as 10min or 30s, not '\(value)'")
                    }
                    return seconds
                }
                switch (section, key) {
                case ("Bridge", "MaxActivities"): configuration.maxActivities = try count(minimum: 1)
                case ("Bridge", "KeepEnded"): configuration.keepEnded = try span()
                case ("MPRIS", "Enabled"): configuration.mprisEnabled = try bool()
                case ("MPRIS", "StaleAfterPause"): configuration.staleAfterPause = try span()
                case ("Notifications", "Enabled"): configuration.notificationsEnabled = try bool()
                case ("Jobs", "Enabled"): configuration.jobsEnabled = value.lowercased() == "auto" ? nil : try bool()
                case ("Jobs", "MaxJobs"): configuration.maxJobs = try count(minimum: 1)
                case ("Jobs", "MaxJobsPerSender"): configuration.maxJobsPerSender = try count(minimum: 1)
                case ("DoNotDisturb", "Follow"): configuration.followFocus = try bool()
                case ("ScreenSharing", "Follow"): configuration.followScreenSharing = try bool()
                case ("Lock", "Follow"): configuration.followLock = try bool()
                case (nil, _): throw fail("\(key)= outside a section")
                default: throw fail("unknown key \(key)= in [\(section!)]")
                }
            }
        }
        return configuration
    }
}
