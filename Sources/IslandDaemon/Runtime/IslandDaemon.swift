import Foundation
import IslandCore
import IslandPaths
import IslandJSON
import IslandStore
import Logging
import NIOPosix
import Systemd
import UnixSignals
import VarlinkCore
import VarlinkNIO

/// The daemon process: configuration, store, engine, socket, and the conversation with the
/// service manager, from start to a graceful stop.
public final class IslandDaemon: Sendable {
    public struct Options: Sendable {
        public var scope: DaemonScope
        public var paths: DaemonPaths
        public var version: String

        public init(scope: DaemonScope, paths: DaemonPaths, version: String) {
            self.scope = scope
            self.paths = paths
            self.version = version
        }
    }

    /// Why the daemon could not start; each says what to fix.
    public enum StartError: Error, CustomStringConvertible {
        case configuration(String)
        case store(String)
        case socket(String)

        public var description: String {
            switch self {
            case .configuration(let message): "configuration: \(message)"
            case .store(let message): "state: \(message)"
            case .socket(let message): "socket: \(message)"
            }
        }
    }

    let options: Options
    let logger: Logger

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT. Reports READY=1 only once the store is restored and
    /// the socket is served, so clients that connected early (socket activation) are
    /// answered from the restored state.
    public func run() async throws {
        // First, before the store and the socket take descriptors of their own.
        let descriptors = DescriptorLimit.raise()
        let configuration: IslandConfiguration
        do {
            configuration = try ConfigurationLoader.load(mainFile: options.paths.configurationFile)
        } catch {
            throw StartError.configuration("\(error)")
        }
        let registry = AppRegistry.scan(dataDirectories: options.paths.dataDirectories)

        let store: IslandStore
        let stored: StoredState
        do {
            store = try IslandStore.open(directory: options.paths.stateDirectory)
            stored = try store.load()
        } catch {
            throw StartError.store("\(error)")
        }
        if store.foundEmptyFile {
            logger.warning("the state database was an empty file: starting with no activities, settings or budgets",
                           metadata: ["path": "\(store.path)"])
        }
        if !stored.damaged.isEmpty {
            logger.warning("skipped damaged records in the state database", metadata: ["ids": "\(stored.damaged)"])
        }
        let writer = StoreWriter(store: store)
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let manager = StateRestorer.manager(from: stored, limits: configuration.limits, now: clock(), logger: logger)
        do {
            try writer.commitNow(StateRestorer.ownersMigration(from: stored, manager: manager))
        } catch {
            // The setting stays, so the next start migrates again; until then each activity
            // written carries its owner anyway.
            logger.error("could not store the activities' owners in the activities", metadata: ["error": "\(error)"])
        }
        // One event loop serves every connection and runs the engine: a call is decided on the
        // thread that read it, and only commits (on the store's thread) leave it.
        // It lives as long as the process: timers and commits may still reach it while stopping.
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let engine = IslandEngine(manager: manager, registry: registry, layouts: StateRestorer.layouts(from: stored, logger: logger),
                                  scope: options.scope,
                                  store: writer, loop: loop.next(), clock: clock, logger: logger)
        await engine.start(installedLayouts: InstalledLayouts.scan(dataDirectories: options.paths.dataDirectories, logger: logger))

        var serverConfiguration = VarlinkServer.Configuration()
        if let value = configuration.daemon.maxConnections { serverConfiguration.maximumConnections = value }
        if let value = configuration.daemon.maxConnectionsPerUser { serverConfiguration.maximumConnectionsPerUser = value }
        Self.fitConnectionLimits(&serverConfiguration, descriptors: descriptors, logger: logger)
        if let value = configuration.daemon.maxMessageSize { serverConfiguration.maximumMessageSize = value }
        serverConfiguration.socketMode = options.scope == .user ? 0o600 : 0o660

        let scope = options.scope
        let dataDirectories = options.paths.dataDirectories
        let registryBox = RegistryBox(registry)
        let sandboxAllowance = SandboxAllowance(configuration.daemon)
        var interfaces = RoleInterfaces(
            engine: engine,
            roles: RoleBinder(scope: scope, resolver: { IdentityResolver(scope: scope, registry: registryBox.value) },
                              presenterGroup: Self.groupID(named: "island"), sandboxAllowance: sandboxAllowance),
            scope: scope, version: options.version)
        // However many connections apps hold, presenters and admins get in (DESIGN.md §4).
        serverConfiguration.reservedInterfaces = ["org.island.Presenter", "org.island.Admin"]
        serverConfiguration.mayUseReserve = { [roles = interfaces.roles] peer in roles.mayPresentOrAdminister(peer) }
        let serverBox = ServerBox()
        let mainFile = options.paths.configurationFile
        let logger = self.logger
        let idleExit = IdleExit(seconds: configuration.daemon.idleExit)
        let reload: @Sendable () async throws(VarlinkError) -> Void = { () async throws(VarlinkError) in
            ServiceNotifier.reloading()
            defer { ServiceNotifier.ready(status: "Reloaded") }
            let configuration: IslandConfiguration
            do {
                configuration = try ConfigurationLoader.load(mainFile: mainFile)
            } catch {
                logger.error("reload refused: the configuration is invalid; keeping the running one", metadata: ["error": "\(error)"])
                if let error = error as? ConfigurationError {
                    throw VarlinkError("org.island.InvalidConfiguration", [
                        "path": .string(error.path), "line": .int(error.line), "message": .string(error.message),
                    ])
                }
                throw VarlinkError("org.island.InvalidConfiguration", ["path": .string(mainFile), "line": 0, "message": .string("\(error)")])
            }
            idleExit.after = configuration.daemon.idleExit
            sandboxAllowance.update(configuration.daemon)
            let registry = AppRegistry.scan(dataDirectories: dataDirectories)
            registryBox.value = registry
            await engine.reload(registry: registry,
                                installedLayouts: InstalledLayouts.scan(dataDirectories: dataDirectories, logger: logger),
                                limits: configuration.limits)
            logger.info("reloaded configuration and manifests", metadata: ["apps": "\(registry.manifests.count)"])
        }
        interfaces.reload = reload
        interfaces.connectionCount = { serverBox.server?.connectionCount ?? 0 }

        let service = VarlinkService(
            info: VarlinkServiceInfo(vendor: "Island", product: "islandd", version: options.version,
                                     url: "https://github.com/island-linux/island"),
            implementations: interfaces.implementations, connectionErrors: .island, canonicalTextOf: Wire.stateTextPath, logger: logger)
        let server = VarlinkServer(service: service, configuration: serverConfiguration, group: loop, logger: logger)
        serverBox.server = server

        let inherited = SocketActivation.takeListenedSockets()
        do {
            if inherited.isEmpty {
                try Self.prepareSocketDirectory(for: options.paths, scope: options.scope)
                try await server.bind(unixPath: options.paths.socket)
                if options.scope == .system {
                    Self.giveSocketToPresenterGroup(options.paths.socket, group: Self.groupID(named: "island"), logger: logger)
                }
            } else {
                for socket in inherited { try await server.adopt(listeningSocket: socket.fd) }
            }
        } catch {
            throw StartError.socket("\(options.paths.socket): \(error)")
        }

        let status = await engine.status()
        logger.info("ready", metadata: [
            "socket": "\(inherited.isEmpty ? options.paths.socket : "socket-activated")",
            "state": "\(options.paths.stateDirectory)", "activities": "\(status["activities"] ?? 0)",
        ])
        // Trapped before READY=1, so a SIGTERM right after it stops the daemon gracefully.
        let signalSequence = await UnixSignalsSequence(trapping: .sigterm, .sigint, .sighup)
        ServiceNotifier.ready(status: Self.statusLine(status))

        let watchdog = Task {
            guard let interval = ServiceNotifier.watchdogInterval else { return }
            while !Task.isCancelled {
                ServiceNotifier.watchdog()
                try? await Task.sleep(for: interval / 2)
            }
        }
        let statusReporter = Task {
            // STATUS= is for the service manager alone: without one, nothing wakes for it.
            guard ServiceNotifier.isSupervised else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                ServiceNotifier.status(Self.statusLine(await engine.status()))
            }
        }

        // Stop on SIGTERM or SIGINT, or, when socket activated, once idle for IdleExitSec=.
        let (stopRequests, requestStop) = AsyncStream.makeStream(of: String.self)
        let signals = Task {
            for await signal in signalSequence {
                if signal == .sighup {
                    try? await reload()
                    continue
                }
                requestStop.yield("signal \(signal)")
                return
            }
        }
        let idleWatch = Task {
            guard !inherited.isEmpty else { return }
            await idleExit.wait(until: { server.connectionCount == 0 ? await engine.isIdle : false })
            if !Task.isCancelled { requestStop.yield("idle for IdleExitSec=\(idleExit.after ?? 0)s") }
        }
        var reason = "end of signals"
        for await request in stopRequests {
            reason = request
            break
        }

        logger.info("stopping", metadata: ["reason": "\(reason)"])
        ServiceNotifier.stopping()
        signals.cancel()
        idleWatch.cancel()
        watchdog.cancel()
        statusReporter.cancel()
        await server.shutdown()
        // Everything acknowledged is already committed; this drains what is in flight.
        writer.close()
        try? store.close()
    }

    /// Keeps the connection limits below the descriptors the daemon has, saying so when that
    /// lowers what is configured.
    static func fitConnectionLimits(_ configuration: inout VarlinkServer.Configuration, descriptors: Int, logger: Logger) {
        let fitted = DescriptorLimit.connectionLimits(
            total: configuration.maximumConnections, perUser: configuration.maximumConnectionsPerUser,
            reserve: configuration.reservedConnections, descriptors: descriptors)
        if fitted != (configuration.maximumConnections, configuration.maximumConnectionsPerUser) {
            logger.warning("connection limits lowered to fit the descriptor limit (LimitNOFILE=)", metadata: [
                "descriptors": "\(descriptors)", "max_connections": "\(fitted.total)",
                "max_connections_per_user": "\(fitted.perUser)",
            ])
        }
        (configuration.maximumConnections, configuration.maximumConnectionsPerUser) = fitted
    }

    static func statusLine(_ status: JSONObject) -> String {
        let live = status["liveActivities"]?.intValue ?? 0
        let presenters = status["presenters"]?.intValue ?? 0
        let producers = status["producers"]?.intValue ?? 0
        return "\(live) live activities, \(producers) producers, \(presenters) presenters"
    }

    /// Makes the socket's directory when it is missing, and refuses one that another user
    /// controls: whoever can write to it (or to a directory above it) can replace the socket
    /// with their own and receive every client's calls.
    static func prepareSocketDirectory(for paths: DaemonPaths, scope: DaemonScope) throws {
        let uid = getuid()
        if let runtime = paths.runtimeDirectory {
            guard FileManager.default.fileExists(atPath: runtime) else {
                throw PrivateDirectory.Refusal(path: runtime, reason: """
                    the runtime directory does not exist ($XDG_RUNTIME_DIR is unset and pam_systemd \
                    made no /run/user/\(uid)); start islandd from a login session or pass --socket
                    """)
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
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
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
            logger.warning("cannot give the socket to group 'island'", metadata: [
                "socket": "\(socket)", "error": "\(String(cString: strerror(errno)))",
            ])
        }
    }

    static func groupID(named name: String) -> UInt32? {
        guard let group = getgrnam(name) else { return nil }
        return group.pointee.gr_gid
    }
}

/// The app registry, replaced on reload and read by every identity check.
final class RegistryBox: @unchecked Sendable {
    private let lock = NSLock()
    private var registry: AppRegistry
    init(_ registry: AppRegistry) { self.registry = registry }
    var value: AppRegistry {
        get { lock.withLock { registry } }
        set { lock.withLock { registry = newValue } }
    }
}

/// The server, known only after the interfaces that report its connection count exist.
final class ServerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: VarlinkServer?
    var server: VarlinkServer? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
