/// The `[Daemon]` section. Nil means not configured: the daemon uses its built-in value.
package struct DaemonSettings: Sendable, Hashable {
    /// `IdleExitSec=`: seconds without clients or activities before a socket-activated daemon
    /// exits; 0 means never.
    package var idleExit: Double?
    /// `MaxConnections=`: client connections in total.
    package var maxConnections: Int?
    /// `MaxConnectionsPerUser=`: client connections per uid.
    package var maxConnectionsPerUser: Int?
    /// `MaxMessageSize=`: bytes in one Varlink message.
    package var maxMessageSize: Int?
    /// `SandboxedPresenters=`: apps whose sandboxed processes may still present. A sandbox
    /// keeps an app from reading other apps' activities; only the user lifts that.
    package var sandboxedPresenters: Set<String> = []
    /// `SandboxedAdmins=`: apps whose sandboxed processes may still administer the daemon.
    package var sandboxedAdmins: Set<String> = []
    /// `HideWhileSharing=`: whether presenters are shown no activity content while the screen
    /// is shared. On unless the user turns it off: no producer can.
    package var hideWhileSharing = true
    /// `ExpandedSec=`: how long a user's expansion lasts without a collapse; nil: the
    /// island's built-in time.
    package var expandedFor: Double?
    /// `AlertSec=`: how long an alerting update keeps its activity expanded; nil: built in.
    package var alertFor: Double?

    package init(
        idleExit: Double? = nil, maxConnections: Int? = nil, maxConnectionsPerUser: Int? = nil, maxMessageSize: Int? = nil,
        sandboxedPresenters: Set<String> = [], sandboxedAdmins: Set<String> = []
    ) {
        self.sandboxedPresenters = sandboxedPresenters
        self.sandboxedAdmins = sandboxedAdmins
        self.idleExit = idleExit
        self.maxConnections = maxConnections
        self.maxConnectionsPerUser = maxConnectionsPerUser
        self.maxMessageSize = maxMessageSize
    }
}
