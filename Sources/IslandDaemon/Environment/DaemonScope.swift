#if canImport(Glibc)
import Glibc
#endif
import IslandPaths

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
    /// The user's XDG runtime directory when the socket is the user instance's default one in
    /// it; the daemon then holds it to the spec's rule (owned by the user, mode 0700). Nil
    /// for a socket given on the command line and in the system scope.
    public var runtimeDirectory: String? = nil

    /// The conventional paths of `scope`, from `environment` (the process environment).
    public static func defaults(for scope: DaemonScope, environment: [String: String]) -> DaemonPaths {
        // The base-directory spec: an unset or empty variable means its default, and so does
        // a relative path ("must be absolute … consider the path invalid and ignore it").
        func env(_ name: String) -> String? {
            guard let value = environment[name], value.hasPrefix("/") else { return nil }
            return value
        }
        let home = env("HOME").map { $0 == "/" ? "" : $0 } ?? ""
        let listedData = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        let systemData = listedData.isEmpty ? ["/usr/local/share", "/usr/share"] : listedData
        // systemd passes the unit's StateDirectory= in STATE_DIRECTORY, colon-separated when
        // the unit names several; the first is the daemon's.
        let stateDirectory = env("STATE_DIRECTORY").map { String($0.split(separator: ":").first ?? Substring($0)) }
        switch scope {
        case .user:
            let runtime = SocketLocation.userRuntimeDirectory(environment: environment, uid: getuid())
            let state = stateDirectory ?? (env("XDG_STATE_HOME") ?? home + "/.local/state") + "/island"
            let config = (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/island/islandd.conf"
            let userData = env("XDG_DATA_HOME") ?? home + "/.local/share"
            return DaemonPaths(socket: SocketLocation.user(environment: environment, uid: getuid()), stateDirectory: state,
                               configurationFile: config, dataDirectories: [userData] + systemData,
                               runtimeDirectory: runtime)
        case .system:
            return DaemonPaths(socket: SocketLocation.system, stateDirectory: stateDirectory ?? "/var/lib/island",
                               configurationFile: "/etc/island/islandd.conf", dataDirectories: systemData)
        }
    }
}
