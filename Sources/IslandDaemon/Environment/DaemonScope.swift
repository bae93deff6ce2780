#if canImport(Glibc)
import Glibc
#endif
import FreeDesktop
import IslandPaths

/// Which instance this is: the per-user daemon (the default) or the system one.
package enum DaemonScope: String, Sendable {
    case user, system
}

/// Where a daemon of a scope keeps its socket, state and configuration, following the XDG
/// base-directory spec in the user scope (`BaseDirectories`) and the FHS in the system scope.
package struct DaemonPaths: Sendable, Equatable {
    package var socket: String
    package var stateDirectory: String
    /// The main configuration file; `<file>.d/*.conf` drop-ins are read after it.
    package var configurationFile: String
    /// Directories searched, in order of precedence, for `applications/*.desktop` and
    /// `island/layouts/<app>/<type>.json`.
    package var dataDirectories: [String]
    /// The user's XDG runtime directory when the socket is the user instance's default one in
    /// it; the daemon then holds it to the spec's rule (owned by the user, mode 0700). Nil
    /// for a socket given on the command line and in the system scope.
    package var runtimeDirectory: String? = nil

    /// The conventional paths of `scope`, from `environment` (the process environment).
    package static func defaults(for scope: DaemonScope, environment: [String: String]) -> DaemonPaths {
        let base = BaseDirectories(environment: environment)
        // systemd passes the unit's StateDirectory= in STATE_DIRECTORY, colon-separated when
        // the unit names several; the first is the daemon's.
        let stateDirectory = environment["STATE_DIRECTORY"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            .map { String($0.split(separator: ":").first ?? Substring($0)) }
        switch scope {
        case .user:
            let runtime = SocketLocation.userRuntimeDirectory(environment: environment, uid: getuid())
            return DaemonPaths(
                socket: SocketLocation.user(environment: environment, uid: getuid()),
                stateDirectory: stateDirectory ?? base.stateHome + "/island",
                configurationFile: base.configHome + "/island/islandd.conf", dataDirectories: base.dataSearchPath,
                runtimeDirectory: runtime)
        case .system:
            return DaemonPaths(
                socket: SocketLocation.system, stateDirectory: stateDirectory ?? "/var/lib/island",
                configurationFile: "/etc/island/islandd.conf", dataDirectories: base.dataDirectories)
        }
    }
}
