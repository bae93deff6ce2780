import Foundation
import IslandCore
import IslandStore
package import Logging
import NIOCore
import NIOPosix
package import VarlinkCore

/// The daemon's store, engine and interfaces without its socket, signals or service manager:
/// a `VarlinkService` to call in memory (`VarlinkClient.inProcess`), for IslandKitTesting. Its
/// rules, refusals and streams are the daemon's own; only the process around them is missing.
package final class InProcessDaemon: Sendable {
    /// What clients call; each `VarlinkClient.inProcess(service)` is one connection.
    package let service: VarlinkService
    private let writer: StoreWriter
    private let store: IslandStore
    private let engine: IslandEngine

    /// Starts from `stateDirectory` (created if need be, kept by the caller), with the desktop
    /// entries and installed layouts of `dataDirectories`, configured by `configurationFile`
    /// (absent: the defaults), in the user scope. Quiet unless given a `logger`: a test's
    /// output is its own.
    package init(
        stateDirectory: String, dataDirectories: [String], configurationFile: String,
        logger: Logger = Logger(label: "org.island.daemon.in-process", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws {
        let configuration = try ConfigurationLoader.load(mainFile: configurationFile)
        let registry = AppRegistry.scan(dataDirectories: dataDirectories)
        store = try IslandStore.open(directory: stateDirectory)
        let stored = try store.load()
        writer = StoreWriter(store: store)
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let manager = StateRestorer.manager(from: stored, limits: configuration.limits, now: clock(), logger: logger)
        // One loop of NIO's process-wide group: it outlives every daemon made here, so a timer
        // or commit still under way when the test ends has somewhere to run.
        let engine = IslandEngine(
            manager: manager, registry: registry, layouts: StateRestorer.layouts(from: stored, logger: logger),
            scope: .user, store: writer, loop: MultiThreadedEventLoopGroup.singleton.next(),
            clock: clock, logger: logger)
        self.engine = engine
        await engine.start(installedLayouts: InstalledLayouts.scan(dataDirectories: dataDirectories, logger: logger))
        let sandboxAllowance = SandboxAllowance(configuration.daemon)
        let interfaces = RoleInterfaces(
            engine: engine, push: PushGateway(engine: engine),
            roles: RoleBinder(
                scope: .user, resolver: { IdentityResolver(scope: .user, registry: registry) },
                presenterGroup: nil, sandboxAllowance: sandboxAllowance),
            scope: .user, version: "in-process")
        service = VarlinkService(
            info: VarlinkServiceInfo(
                vendor: "Island", product: "islandd (in process)", version: "in-process",
                url: "https://github.com/island-linux/island"),
            implementations: interfaces.implementations, connectionErrors: .island, logger: logger)
    }

    /// Stops as islandd does: what the closed clients set off is decided and committed (an
    /// activity of a producer gone under `ownerGone: end` ends), then the store closes; only
    /// then may its directory go. Close the clients first. Whatever reaches the engine later
    /// (a timer, a client still open) is refused by the closed store, which no longer touches
    /// the database.
    package func stop() async {
        // A hop onto the engine's loop: a closed connection's callback, queued there before,
        // has run; the commit waited for comes after every change it decided, lingering ones
        // too, and nothing lingers after it.
        try? await engine.commitEverythingDecided()
        // Draining and closing block on the database's queue (an fsync): not on a Swift
        // concurrency thread.
        let (writer, store) = (self.writer, self.store)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                writer.close()
                try? store.close()
                done.resume()
            }
        }
    }
}
