/// The `[Daemon]` section. Nil means not configured: the daemon uses its built-in value.
public struct DaemonSettings: Sendable, Hashable {
    /// `IdleExitSec=`: seconds without clients or activities before a socket-activated daemon
    /// exits; 0 means never.
    public var idleExit: Double?
    /// `MaxConnections=`: client connections in total.
    public var maxConnections: Int?
    /// `MaxConnectionsPerUser=`: client connections per uid.
    public var maxConnectionsPerUser: Int?
    /// `MaxMessageSize=`: bytes in one Varlink message.
    public var maxMessageSize: Int?
    /// `SandboxedPresenters=`: apps whose sandboxed processes may still present. A sandbox
    /// keeps an app from reading other apps' activities; only the user lifts that.
    public var sandboxedPresenters: Set<String> = []
    /// `SandboxedAdmins=`: apps whose sandboxed processes may still administer the daemon.
    public var sandboxedAdmins: Set<String> = []
    /// `HideWhileSharing=`: whether presenters are shown no activity content while the screen
    /// is shared. On unless the user turns it off: no producer can.
    public var hideWhileSharing = true
    /// `ExpandedSec=`: how long a user's expansion lasts without a collapse; nil: the
    /// island's built-in time.
    public var expandedFor: Double?
    /// `AlertSec=`: how long an alerting update keeps its activity expanded; nil: built in.
    public var alertFor: Double?

    public init(idleExit: Double? = nil, maxConnections: Int? = nil, maxConnectionsPerUser: Int? = nil, maxMessageSize: Int? = nil,
                sandboxedPresenters: Set<String> = [], sandboxedAdmins: Set<String> = []) {
        self.sandboxedPresenters = sandboxedPresenters
        self.sandboxedAdmins = sandboxedAdmins
        self.idleExit = idleExit
        self.maxConnections = maxConnections
        self.maxConnectionsPerUser = maxConnectionsPerUser
        self.maxMessageSize = maxMessageSize
    }
}
