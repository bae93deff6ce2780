import Foundation
import FreeDesktop
import IslandCore
import IslandPaths
import Logging
import NIOCore
import ServiceLifecycle
import Systemd
import VarlinkCore
import VarlinkNIO
import IslandProtocol

/// The daemon's socket as a service of the group, and the one place the daemon uses
/// `VarlinkServer`. It serves from the group's start, when the group has trapped SIGTERM and
/// SIGINT already, so a client that can connect can also stop the daemon gracefully; and it
/// drains on graceful shutdown: calls in progress finish, streams end with ShuttingDown, and
/// only then does the daemon close the store.
struct SocketService: Service {
    /// Where the listening socket comes from.
    enum Source: Sendable {
        /// Made by the daemon at `paths.socket`.
        case path(DaemonPaths, DaemonScope)
        /// Passed by the service manager (socket activation); `path` only names it in errors.
        case inherited([ListenedSocket], path: String)
    }

    private let server: VarlinkServer
    private let source: Source
    /// Tells the service manager READY=1, once the socket is served.
    private let ready: @Sendable () async -> Void
    private let logger: Logger

    init(
        service: VarlinkService, settings: DaemonSettings, scope: DaemonScope, descriptors: Int,
        mayUseReserve: @escaping @Sendable (PeerCredentials) -> Bool, loop: any EventLoopGroup,
        source: Source, ready: @escaping @Sendable () async -> Void, logger: Logger
    ) {
        var configuration = VarlinkServer.Configuration()
        if let value = settings.maxConnections { configuration.maximumConnections = value }
        if let value = settings.maxConnectionsPerUser { configuration.maximumConnectionsPerUser = value }
        Self.fitConnectionLimits(&configuration, descriptors: descriptors, logger: logger)
        if let value = settings.maxMessageSize { configuration.maximumMessageSize = value }
        configuration.socketMode = scope == .user ? 0o600 : 0o660
        // However many connections apps hold, presenters and admins get in (docs/design.md §4).
        configuration.reservedInterfaces = [PresenterNames.interface, AdminNames.interface]
        configuration.mayUseReserve = mayUseReserve
        server = VarlinkServer(service: service, configuration: configuration, group: loop, logger: logger)
        self.source = source
        self.ready = ready
        self.logger = logger
    }

    /// Connections currently open.
    var connectionCount: Int { server.connectionCount }

    func run() async throws {
        try await listen()
        await ready()
        // Returns on graceful shutdown and throws when the group is cancelled instead (another
        // service failed): the server drains either way before the store closes.
        try? await gracefulShutdown()
        logger.info("stopping")
        ServiceNotifier.stopping()
        await server.shutdown()
    }

    private func listen() async throws(IslandDaemon.StartError) {
        do {
            switch source {
            case .path(let paths, let scope):
                try Self.prepareSocketDirectory(for: paths, scope: scope)
                if let kind = ConnectFailure.nonSocket(at: paths.socket, followingLinks: false) { throw SocketObstacle(kind: kind) }
                try await server.bind(unixPath: paths.socket)
                if scope == .system {
                    Self.giveSocketToPresenterGroup(paths.socket, group: IslandDaemon.groupID(named: "island"), logger: logger)
                }
            case .inherited(let sockets, _):
                for socket in sockets { try await server.adopt(listeningSocket: socket.fd) }
            }
        } catch {
            throw .socket("\(source.path): \(error)")
        }
    }

    /// Keeps the connection limits below the descriptors the daemon has, saying so when that
    /// lowers what is configured.
    static func fitConnectionLimits(_ configuration: inout VarlinkServer.Configuration, descriptors: Int, logger: Logger) {
        let fitted = DescriptorLimit.connectionLimits(
            total: configuration.maximumConnections, perUser: configuration.maximumConnectionsPerUser,
            reserve: configuration.reservedConnections, descriptors: descriptors)
        if fitted != (configuration.maximumConnections, configuration.maximumConnectionsPerUser) {
            logger.warning(
                "connection limits lowered to fit the descriptor limit (LimitNOFILE=)",
                metadata: [
                    "descriptors": "\(descriptors)", "max_connections": "\(fitted.total)",
                    "max_connections_per_user": "\(fitted.perUser)",
                ])
        }
        (configuration.maximumConnections, configuration.maximumConnectionsPerUser) = fitted
    }

    /// Makes the socket's directory when it is missing, and refuses one that another user
    /// controls: whoever can write to it (or to a directory above it) can replace the socket
    /// with their own and receive every client's calls.
    static func prepareSocketDirectory(for paths: DaemonPaths, scope: DaemonScope) throws {
        let uid = getuid()
        if let runtime = paths.runtimeDirectory {
            guard FileManager.default.fileExists(atPath: runtime) else {
                // Said as it is: a runtime directory named by $XDG_RUNTIME_DIR that is not there,
                // or the one pam_systemd makes at login, not made.
                let named = BaseDirectories(environment: ProcessInfo.processInfo.environment).runtimeDirectory == runtime
                throw PrivateDirectory.Refusal(
                    path: runtime,
                    reason: named
                        ? "the runtime directory $XDG_RUNTIME_DIR names does not exist; make it (yours, mode 0700), "
                            + "start islandd from a login session or pass --socket"
                        : "the runtime directory does not exist ($XDG_RUNTIME_DIR is unset and pam_systemd made no "
                            + "/run/user/\(uid)); start islandd from a login session or pass --socket")
            }
            try PrivateDirectory.checkRuntimeDirectory(runtime, uid: uid)
        }
        let socket = paths.socket.hasPrefix("/") ? paths.socket : FileManager.default.currentDirectoryPath + "/" + paths.socket
        let directory = (socket as NSString).deletingLastPathComponent
        // Checked before anything is made in it, and again once made.
        var existing = directory
        while existing.count > 1 && !FileManager.default.fileExists(atPath: existing) {
            existing = (existing as NSString).deletingLastPathComponent
        }
        try PrivateDirectory.checkTree(existing, uid: uid)
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: scope == .user ? 0o700 : 0o755])
        try PrivateDirectory.checkTree(directory, uid: uid)
    }

    /// Gives the system socket to the `island` group, as the unit's `SocketGroup=island` does
    /// under socket activation, so presenters in that group can connect (mode 0660).
    static func giveSocketToPresenterGroup(_ socket: String, group: UInt32?, logger: Logger) {
        guard let group else {
            logger.warning("no group 'island': only root can connect to the system socket", metadata: ["socket": "\(socket)"])
            return
        }
        if chown(socket, uid_t.max, group) != 0 {
            logger.warning(
                "cannot give the socket to group 'island'",
                metadata: [
                    "socket": "\(socket)", "error": "\(String(cString: strerror(errno)))",
                ])
        }
    }
}

extension SocketService.Source {
    var path: String {
        switch self {
        case .path(let paths, _): paths.socket
        case .inherited(_, let path): path
        }
    }

    var isInherited: Bool {
        if case .inherited = self { true } else { false }
    }
}

/// Something other than a socket where the socket goes, said with what to do. The bind replaces
/// a socket (one a daemon left) and refuses anything else, but in words that say neither what
/// is there nor what to do (`UnixDomainSocketPathWrongType()`, or a failed `stat` of a link
/// loop); any program of the user's can put a FIFO, a file or a link in the runtime directory.
struct SocketObstacle: Error, CustomStringConvertible {
    let kind: String
    var description: String {
        "\(kind) is there, not a socket; islandd replaces only a socket: remove it, or pass --socket"
    }
}
