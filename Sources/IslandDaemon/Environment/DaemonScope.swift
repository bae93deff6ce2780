#if canImport(Glibc)
import Glibc
#endif

/// Which instance this is: the per-user daemon (the default) or the system one.
public enum DaemonScope: String, Sendable {
    case user, system
}

/// Where a daemon of a scope keeps its socket, state and configuration, following the XDG
/// base-directory conventions in the user scope and the FHS in the system scope.
public struct DaemonPaths: Sendable, Equatable {
    public var socket: String
    public var stateDirectory: String
    /// The main configuration file; `<file>.d/*.conf` drop-ins are read after it.
    public var configurationFile: String
    /// Directories searched, in order of precedence, for `applications/*.desktop` and
    /// `island/layouts/<app>/<type>.json`.
    public var dataDirectories: [String]

    /// The conventional paths of `scope`, from `environment` (the process environment).
    public static func defaults(for scope: DaemonScope, environment: [String: String]) -> DaemonPaths {
        func env(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        let home = env("HOME") ?? "/"
        let systemData = (env("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        switch scope {
        case .user:
            let runtime = env("XDG_RUNTIME_DIR") ?? "/tmp/island-\(getuid())"
            // systemd passes the unit's StateDirectory= in STATE_DIRECTORY.
            let state = env("STATE_DIRECTORY") ?? (env("XDG_STATE_HOME") ?? home + "/.local/state") + "/island"
            let config = (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/island/islandd.conf"
            let userData = env("XDG_DATA_HOME") ?? home + "/.local/share"
            return DaemonPaths(socket: runtime + "/island/islandd.sock", stateDirectory: state,
                               configurationFile: config, dataDirectories: [userData] + systemData)
        case .system:
            return DaemonPaths(socket: "/run/island/islandd.sock", stateDirectory: env("STATE_DIRECTORY") ?? "/var/lib/island",
                               configurationFile: "/etc/island/islandd.conf", dataDirectories: systemData)
        }
    }
}
