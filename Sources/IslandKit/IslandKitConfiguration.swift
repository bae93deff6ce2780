public import Foundation
import IslandPaths
import Synchronization

/// Process-wide settings of IslandKit. Call `IslandKit.configure` before the first activity
/// call when the defaults do not fit.
public enum IslandKit {
    /// Which app this process acts for, where the daemon listens, and how dates travel.
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
        /// How the `Date`s of attributes and content states are written in their JSON.
        public var dateEncoding: ContentDateEncoding

        public init(
            appID: String? = nil, socketPath: String? = nil, reconnectTimeout: Duration = .seconds(10),
            dateEncoding: ContentDateEncoding = .unixSeconds
        ) {
            self.appID = appID
            self.socketPath = socketPath ?? IslandKit.defaultSocketPath()
            self.reconnectTimeout = reconnectTimeout
            self.dateEncoding = dateEncoding
        }
    }

    private static let current = Mutex(Configuration())

    /// Sets the app id to claim, the daemon's socket and how dates are written. `socketPath`
    /// defaults to `$ISLAND_SOCKET`, else `$XDG_RUNTIME_DIR/island/islandd.sock`.
    public static func configure(
        appID: String? = nil, socketPath: String? = nil, reconnectTimeout: Duration = .seconds(10),
        dateEncoding: ContentDateEncoding = .unixSeconds
    ) {
        current.withLock {
            $0 = Configuration(appID: appID, socketPath: socketPath, reconnectTimeout: reconnectTimeout, dateEncoding: dateEncoding)
        }
    }

    /// The configuration in effect.
    public static var configuration: Configuration { current.withLock { $0 } }

    /// `$ISLAND_SOCKET`, else `$XDG_RUNTIME_DIR/island/islandd.sock`, else the user
    /// instance's conventional path `/run/user/UID/island/islandd.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        SocketLocation.client(environment: environment, uid: getuid())
    }
}

/// How the `Date`s in an app's attributes and content states are written in their JSON: what
/// its layouts read, and what its server must send in a push's `content-state`. Chosen once
/// per app, with `IslandKit.configure(dateEncoding:)`; the daemon stores the JSON as it is
/// given and cannot tell a date from another number.
public enum ContentDateEncoding: Sendable, Hashable {
    /// Seconds since 1970-01-01 (Unix time), the protocol's dates: a layout's `timer`,
    /// `progress` over a time range and `time(…)` read them as they are. The default.
    case unixSeconds
    /// Seconds since 2001-01-01, as Foundation's `JSONEncoder` writes a `Date` by default
    /// (`.deferredToDate`) and ActivityKit decodes a push's `content-state`: for an app whose
    /// server already sends its `ContentState` to iOS devices and sends the same payloads
    /// here. Layouts read every number as Unix time, so a date a layout shows needs a Unix
    /// copy in the state (`var etaUnix: Double`).
    case activityKit
}
