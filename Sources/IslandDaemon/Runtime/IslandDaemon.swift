import NIOCore
import Foundation
import IslandCore
import OrderedJSON
import IslandStore
package import Logging
import MQTT
import NIOPosix
import ServiceLifecycle
import Systemd
import UnixSignals
import VarlinkCore
import VarlinkNIO
import IslandProtocol

/// The daemon process: configuration, store, engine, socket, and the conversation with the
/// service manager, from start to a graceful stop.
package final class IslandDaemon: Sendable {
    package struct Options: Sendable {
        package var scope: DaemonScope
        package var paths: DaemonPaths
        package var version: String

        package init(scope: DaemonScope, paths: DaemonPaths, version: String) {
            self.scope = scope
            self.paths = paths
            self.version = version
        }
    }

    /// Why the daemon could not start; each says what to fix.
    package enum StartError: Error, CustomStringConvertible {
        case configuration(String)
        case store(String)
        case socket(String)

        package var description: String {
            switch self {
            case .configuration(let message): "configuration: \(message)"
            case .store(let message): "state: \(message)"
            case .socket(let message): "socket: \(message)"
            }
        }
    }

    let options: Options
    let logger: Logger

    package init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT, or, when socket activated, until idle for `IdleExitSec=`.
    /// Restores everything a client is answered from (configuration, store, engine), then runs
    /// the process as a `ServiceGroup`, as hummingbird's `Application` does: the socket, the
    /// SIGHUP reload, and what a service manager asked for (watchdog, status, idle exit).
    /// READY=1 comes once the socket is served from the restored state, so clients that
    /// connected early (socket activation) are answered from it; the store closes once the
    /// group has stopped, after the socket drained.
    package func run() async throws {
        // First, before the store and the socket take descriptors of their own.
        let descriptors = DescriptorLimit.raise()
        // Before any other thread runs: taking them clears LISTEN_* with unsetenv(3).
        let inherited = SocketActivation.takeListenedSockets()
        let configuration: IslandConfiguration
        do {
            configuration = try ConfigurationLoader.load(mainFile: options.paths.configurationFile)
        } catch {
            throw StartError.configuration("\(error)")
        }
        // Off the cooperative pool, as every later read of the data directories.
        let files = FileReads()
        let dataDirectories = options.paths.dataDirectories
        // Watched before they are read, on the same thread: what changes there after this
        // scan looked is an event, even before the daemon says it is ready.
        let (manifestChanges, manifestChanged) = ManifestWatcherService.makeChanges()
        let (watcher, scan) = await files.run { [logger] in
            let watcher = ManifestWatcher(dataDirectories: dataDirectories, logger: logger, changed: manifestChanged)
            watcher?.start()
            return (watcher, Reloader.scan(dataDirectories: dataDirectories))
        }
        // A start that fails below leaves no thread watching.
        defer { watcher?.stop() }
        let registry = SharedValue(scan.registry)

        let store: IslandStore
        let stored: StoredState
        do {
            store = try IslandStore.open(directory: options.paths.stateDirectory)
            stored = try store.load()
        } catch {
            throw StartError.store("\(error)")
        }
        if store.foundEmptyFile {
            logger.warning(
                "the state database was an empty file: starting with no activities, settings or budgets",
                metadata: ["path": "\(store.path)"])
        }
        if !stored.damaged.isEmpty {
            logger.warning("skipped damaged records in the state database", metadata: ["ids": "\(stored.damaged)"])
        }
        let writer = StoreWriter(store: store)
        defer {
            // Everything decided is handed to the store by now (`commitEverythingDecided`);
            // this drains what is in flight.
            writer.close()
            try? store.close()
        }
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let manager = StateRestorer.manager(from: stored, limits: configuration.limits, now: clock(), logger: logger)
        do {
            try writer.commitNow(
                StateRestorer.ownersMigration(from: stored, manager: manager)
                    + StateRestorer.pushSpendingMigration(from: stored, manager: manager))
        } catch {
            // The settings stay, so the next start migrates again; until then each activity
            // written carries its owner anyway, and the pushes' spending is read as before.
            logger.error("could not migrate the stored state", metadata: ["error": "\(error)"])
        }
        // One event loop serves every connection and runs the engine: a call is decided on the
        // thread that read it, and only commits (on the store's thread) leave it.
        // It lives as long as the process: timers and commits may still reach it while stopping.
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let scheduling = EventLoopScheduling(logger: logger)
        loop.next().execute { scheduling.start() }
        let engine = IslandEngine(
            manager: manager, registry: registry.value,
            layouts: StateRestorer.layouts(from: stored, logger: logger), scope: options.scope,
            store: writer, loop: loop.next(), clock: clock, logger: logger)
        // Before the engine starts: an activity dismissed while the daemon was down takes its
        // token with it, and the tokens of those that remain are subscribed to.
        let push = PushGateway(engine: engine)
        var pushService: PushService?
        if configuration.push.isEnabled {
            let device = configuration.push.clientID ?? MQTTConfiguration.defaultDevice(scope: options.scope)
            let mqtt = try MQTTConfiguration(configuration.push, device: device)
            // TLS files beside a plain broker are most likely a mistyped mqtts://: the
            // credentials would cross the network in clear, and nothing else would say so.
            if !mqtt.broker.secure, configuration.push.caFile ?? configuration.push.certificateFile ?? configuration.push.keyFile != nil {
                logger.warning(
                    "[Push] Broker= is mqtt://, not encrypted: CAFile=, CertificateFile= and KeyFile= apply to mqtts:// only and are not used",
                    metadata: ["broker": "\(configuration.push.broker ?? "")"])
            }
            let service = try PushService(
                configuration: mqtt, linkHeadroom: configuration.push.linkHeadroom, gateway: push, logger: logger)
            await push.enable(
                root: configuration.push.topicRoot, device: device, broker: service.link, stored: stored.pushTokens, held: stored.settings)
            pushService = service
        }
        await engine.timeExpansions(configuration.daemon)
        InstalledLayouts.log(scan.layouts.skipped, logger: logger)
        await engine.start(
            installedLayouts: scan.layouts.layouts, hideWhileSharing: configuration.daemon.hideWhileSharing,
            lockScreen: configuration.lockScreen, turnEnded: { scheduling.turnEnded() })
        // Channel messages held while the island was busy before a restart: the island rests now.
        await push.releaseBackground()

        let scope = options.scope
        let sandboxAllowance = SandboxAllowance(configuration.daemon)
        let idleExit = IdleExit(seconds: configuration.daemon.idleExit)
        let reloader = Reloader(
            mainFile: options.paths.configurationFile, dataDirectories: options.paths.dataDirectories,
            registry: registry, idleExit: idleExit, sandboxAllowance: sandboxAllowance,
            engine: engine, files: files, logger: logger)
        let socket = SharedValue<SocketService?>(nil)
        var interfaces = RoleInterfaces(
            engine: engine, push: push,
            roles: RoleBinder(
                scope: scope, resolver: { IdentityResolver(scope: scope, registry: registry.value) },
                presenterGroup: Self.groupID(named: "island"), sandboxAllowance: sandboxAllowance),
            scope: scope, version: options.version)
        interfaces.reload = reloader.reload
        interfaces.connectionCount = { socket.value?.connectionCount ?? 0 }
        if let pushService {
            let (client, device) = (pushService.client, pushService.device)
            interfaces.pushStatus = {
                typealias Status = AdminNames.PushStatus
                return [
                    Status.broker: .string(client.broker.description), Status.device: .string(device), Status.connected: .bool(client.isConnected),
                    Status.tokens: .int(await push.tokenCount ?? 0),
                ]
            }
        }
        let service = VarlinkService(
            info: VarlinkServiceInfo(
                vendor: "Island", product: "islandd", version: options.version,
                url: "https://github.com/island-linux/island"),
            implementations: interfaces.implementations, connectionErrors: .island, logger: logger)

        let logger = self.logger
        let stateDirectory = options.paths.stateDirectory
        let source: SocketService.Source =
            inherited.isEmpty
            ? .path(options.paths, scope) : .inherited(inherited, path: options.paths.socket)
        let served = SocketService(
            service: service, settings: configuration.daemon, scope: scope, descriptors: descriptors,
            mayUseReserve: { [roles = interfaces.roles] peer in roles.mayPresentOrAdminister(peer) },
            loop: loop, source: source,
            ready: {
                let status = await engine.status()
                logger.info(
                    "ready",
                    metadata: [
                        "socket": "\(source.isInherited ? "socket-activated" : source.path)",
                        "state": "\(stateDirectory)", "activities": "\(status.activities)",
                    ])
                ServiceNotifier.ready(status: Self.statusLine(status))
            },
            logger: logger)
        socket.value = served

        // Trapped before the group starts, since READY=1 promises that SIGHUP reloads. The
        // group traps SIGTERM and SIGINT itself before it starts any service, so before READY=1.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        // The group stops its services in reverse: the watchdog pings until the socket drained.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let interval = ServiceNotifier.watchdogInterval {
            services.append(.init(service: WatchdogPings(interval: interval)))
        }
        services.append(.init(service: served))
        if let pushService { services.append(.init(service: pushService)) }
        services.append(.init(service: HangupReloads(hangups: hangups, reloader: reloader)))
        services.append(
            .init(
                service: ManifestWatcherService(watcher: watcher, changes: manifestChanges, reloader: reloader)))
        if ServiceNotifier.isSupervised {
            services.append(.init(service: StatusReports(period: .seconds(5), status: { Self.statusLine(await engine.status()) })))
        }
        if !inherited.isEmpty {
            // Never for a socket the daemon bound itself: nobody would start it again.
            let idle = IdleExitService(
                idleExit: idleExit, isIdle: { served.connectionCount == 0 ? await engine.isIdle : false },
                logger: logger)
            services.append(.init(service: idle, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        // The socket has drained once the group stops; what lingers then (the timer's changes,
        // which nobody waits for) is committed before the store closes: SIGTERM loses nothing
        // decided.
        do {
            try await group.run()
        } catch {
            try? await engine.commitEverythingDecided()
            throw error
        }
        try? await engine.commitEverythingDecided()
    }

    static func statusLine(_ status: EngineStatus) -> String {
        "\(status.liveActivities) live activities, \(status.producers) producers, \(status.presenters) presenters"
    }

    static func groupID(named name: String) -> UInt32? {
        guard let group = getgrnam(name) else { return nil }
        return group.pointee.gr_gid
    }
}
