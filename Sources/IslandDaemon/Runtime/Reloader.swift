import IslandCore
import OrderedJSON
import Logging
import OrderedCollections
import Systemd
import VarlinkCore

/// Re-reads the configuration, the app manifests and the installed layouts, for SIGHUP and
/// `org.island.Admin.Reload` alike. An invalid configuration is refused and the running one
/// kept; the service manager hears RELOADING=1 and then READY=1 either way.
struct Reloader: Sendable {
    let mainFile: String
    let dataDirectories: [String]
    let registry: SharedValue<AppRegistry>
    let idleExit: IdleExit
    let sandboxAllowance: SandboxAllowance
    let engine: IslandEngine
    let logger: Logger

    func reload() async throws(VarlinkError) {
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
        self.registry.value = registry
        await engine.reload(registry: registry,
                            installedLayouts: InstalledLayouts.scan(dataDirectories: dataDirectories, logger: logger),
                            limits: configuration.limits, hideWhileSharing: configuration.daemon.hideWhileSharing,
                            lockScreen: configuration.lockScreen)
        logger.info("reloaded configuration and manifests", metadata: ["apps": "\(registry.manifests.count)"])
    }

    /// Re-reads the manifests and installed layouts alone, for `ManifestWatcherService`: a
    /// desktop entry changed, the configuration did not.
    func reloadManifests() async {
        let registry = AppRegistry.scan(dataDirectories: dataDirectories)
        self.registry.value = registry
        await engine.reload(registry: registry,
                            installedLayouts: InstalledLayouts.scan(dataDirectories: dataDirectories, logger: logger),
                            limits: nil, hideWhileSharing: nil, lockScreen: nil)
        logger.info("reloaded the manifests after a change in an applications folder", metadata: ["apps": "\(registry.manifests.count)"])
    }
}
