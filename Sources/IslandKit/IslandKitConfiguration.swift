public import Foundation
import IslandPaths
import Synchronization

/// Process-wide settings of IslandKit. Call `IslandKit.configure` before the first activity
/// call when the defaults do not fit.
public enum IslandKit {
    /// Which app this process acts for, and where the daemon listens.
    public struct Configuration: Sendable, Hashable {
        /// The app id to claim (the name of its `.desktop` file without the extension). When
        /// nil, the daemon identifies the process from its flatpak id, systemd unit or
        /// executable. The user instance accepts a claim for any app with a manifest.
        public var appID: String?
        /// The daemon's socket.
        public var socketPath: String
        /// How long a call waits for the daemon to come back after it went away, before
        /// failing with `daemonUnavailable`.
        public var reconnectTimeout: Duration

        public init(appID: String? = nil, socketPath: String? = nil, reconnectTimeout: Duration = .seconds(10)) {
            self.appID = appID
            self.socketPath = socketPath ?? IslandKit.defaultSocketPath()
            self.reconnectTimeout = reconnectTimeout
        }
    }

    private static let current = Mutex(Configuration())

    /// Sets the app id to claim and the daemon's socket. `socketPath` defaults to
    /// `$ISLAND_SOCKET`, else `$XDG_RUNTIME_DIR/island/islandd.sock`.
    public static func configure(appID: String? = nil, socketPath: String? = nil, reconnectTimeout: Duration = .seconds(10)) {
        current.withLock { $0 = Configuration(appID: appID, socketPath: socketPath, reconnectTimeout: reconnectTimeout) }
    }

    /// The configuration in effect.
    public static var configuration: Configuration { current.withLock { $0 } }

    /// `$ISLAND_SOCKET`, else `$XDG_RUNTIME_DIR/island/islandd.sock`, else the user
    /// instance's conventional path `/run/user/UID/island/islandd.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        SocketLocation.client(environment: environment, uid: getuid())
    }
}
