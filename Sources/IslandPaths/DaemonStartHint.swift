import Foundation

/// What a client says to a user whose daemon is not reachable: how to start one that exists
/// (`island`'s hint, IslandKit's recovery suggestion). The packaged user unit is named only
/// where systemd would find it (its user unit search path, systemd.unit(5)); from a source
/// checkout no unit is installed and `systemctl --user start islandd.socket` only fails, so the
/// hint names `scripts/run.sh` and `islandd` instead (the units are the packages', docs/design.md §7).
package enum DaemonStartHint {
    package static let unit = "islandd.socket"

    /// The directories systemd's user manager reads units from, for `environment`, in its order
    /// (systemd.unit(5), "User Unit Search Path").
    package static func userUnitDirectories(environment: [String: String]) -> [String] {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        func list(_ name: String, default fallback: String) -> [String] {
            (value(name) ?? fallback).split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        }
        let home = value("HOME")
        var directories: [String] = []
        if let config = value("XDG_CONFIG_HOME") ?? home.map({ $0 + "/.config" }) { directories.append(config + "/systemd/user") }
        directories += list("XDG_CONFIG_DIRS", default: "/etc/xdg").map { $0 + "/systemd/user" }
        directories.append("/etc/systemd/user")
        if let runtime = value("XDG_RUNTIME_DIR") { directories.append(runtime + "/systemd/user") }
        directories.append("/run/systemd/user")
        if let data = value("XDG_DATA_HOME") ?? home.map({ $0 + "/.local/share" }) { directories.append(data + "/systemd/user") }
        directories += list("XDG_DATA_DIRS", default: "/usr/local/share:/usr/share").map { $0 + "/systemd/user" }
        directories += ["/usr/local/lib/systemd/user", "/usr/lib/systemd/user", "/lib/systemd/user"]
        return directories
    }

    /// Whether `islandd.socket` is among the user units systemd would find.
    package static func unitInstalled(environment: [String: String], exists: (String) -> Bool) -> Bool {
        userUnitDirectories(environment: environment).contains { exists($0 + "/" + unit) }
    }

    /// How to start the daemon, to which the caller adds how else to reach one.
    package static func hint(unitInstalled: Bool) -> String {
        unitInstalled
            ? "start islandd (`systemctl --user start \(unit)`)"
            : "start islandd (`scripts/run.sh` in a source checkout, else `islandd &`: no \(unit) user unit is installed)"
    }

    /// The hint for this process's environment and file system.
    package static func current() -> String {
        hint(unitInstalled: unitInstalled(environment: ProcessInfo.processInfo.environment) { FileManager.default.fileExists(atPath: $0) })
    }
}
