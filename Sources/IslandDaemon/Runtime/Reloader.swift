import IslandCore
import OrderedJSON
import Logging
import OrderedCollections
import Systemd
import VarlinkCore
import IslandProtocol

/// Re-reads the configuration, the app manifests and the installed layouts, for SIGHUP and
/// `org.island.Admin.Reload` alike. An invalid configuration is refused and the running one
/// kept; the service manager hears RELOADING=1 and then READY=1 either way. Every file is read
/// on the file thread (`FileReads`), never on the cooperative pool that serves the calls.
struct Reloader: Sendable {
    let mainFile: String
    let dataDirectories: [String]
    let registry: SharedValue<AppRegistry>
    let idleExit: IdleExit
    let sandboxAllowance: SandboxAllowance
    let engine: IslandEngine
    let files: FileReads
    let logger: Logger

    /// What one scan of the data directories found.
    struct Scan: Sendable {
        var registry: AppRegistry
        var layouts: InstalledLayouts.Found
    }

    static func scan(dataDirectories: [String]) -> Scan {
        Scan(registry: AppRegistry.scan(dataDirectories: dataDirectories), layouts: InstalledLayouts.read(dataDirectories: dataDirectories))
    }

    /// Returns the installed layouts it skipped, each named with why.
    func reload() async throws(VarlinkError) -> [InstalledLayouts.Skipped] {
        ServiceNotifier.reloading()
        defer { ServiceNotifier.ready(status: "Reloaded") }
        let (mainFile, dataDirectories) = (mainFile, dataDirectories)
        let (loaded, scan) = await files.run { () -> (Result<IslandConfiguration, InvalidConfiguration>, Scan) in
            let loaded = Result { () throws(InvalidConfiguration) in
                do {
                    return try ConfigurationLoader.load(mainFile: mainFile)
                } catch {
                    throw InvalidConfiguration(error, mainFile: mainFile)
                }
            }
            return (loaded, Self.scan(dataDirectories: dataDirectories))
        }
        let configuration: IslandConfiguration
        switch loaded {
        case .success(let valid):
            configuration = valid
        case .failure(let invalid):
            logger.error("reload refused: the configuration is invalid; keeping the running one", metadata: ["error": "\(invalid.description)"])
            throw invalid.reply
        }
        idleExit.after = configuration.daemon.idleExit
        sandboxAllowance.update(configuration.daemon)
        await engine.timeExpansions(configuration.daemon)
        InstalledLayouts.log(scan.layouts.skipped, logger: logger)
        registry.value = scan.registry
        await engine.reload(
            registry: scan.registry, installedLayouts: scan.layouts.layouts,
            limits: configuration.limits, hideWhileSharing: configuration.daemon.hideWhileSharing,
            lockScreen: configuration.lockScreen)
        logger.info("reloaded configuration and manifests", metadata: ["apps": "\(scan.registry.manifests.count)"])
        return scan.layouts.skipped
    }

    /// Re-reads the manifests and installed layouts alone, for `ManifestWatcherService`: a
    /// desktop entry or a layout changed, the configuration did not.
    func reloadManifests() async {
        let dataDirectories = dataDirectories
        let scan = await files.run { Self.scan(dataDirectories: dataDirectories) }
        InstalledLayouts.log(scan.layouts.skipped, logger: logger)
        registry.value = scan.registry
        await engine.reload(registry: scan.registry, installedLayouts: scan.layouts.layouts, limits: nil, hideWhileSharing: nil, lockScreen: nil)
        logger.info("reloaded the manifests and layouts after a change in a data directory", metadata: ["apps": "\(scan.registry.manifests.count)"])
    }
}

/// Why a reloaded configuration was refused: for the log, and as `InvalidConfiguration`'s reply.
struct InvalidConfiguration: Error, Sendable {
    let description: String
    let reply: VarlinkError

    init(_ error: any Error, mainFile: String) {
        typealias Invalid = IslandErrorNames.InvalidConfiguration
        description = "\(error)"
        if let error = error as? ConfigurationError {
            reply = VarlinkError(
                Invalid.error, [Invalid.path: .string(error.path), Invalid.line: .int(error.line), Invalid.message: .string(error.message)])
        } else {
            reply = VarlinkError(Invalid.error, [Invalid.path: .string(mainFile), Invalid.line: 0, Invalid.message: .string(description)])
        }
    }
}
