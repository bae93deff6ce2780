import ArgumentParser
import Foundation
import FreeDesktop
import IslandBridge
import IslandCore
import IslandKit
import Logging
import SDBus
import ServiceLifecycle
import SmallFiles
import Systemd
import UnixSignals

@main
struct IslandBridgeCommand: AsyncParsableCommand {
    static let version = "0.1.0"
    static let appID = "org.island.bridge"

    static let configuration = CommandConfiguration(
        commandName: "island-bridge",
        abstract: "Turns MPRIS players, progress notifications and KDE jobs into Live Activities.",
        discussion: """
            island-bridge is an ordinary Island app (org.island.bridge) that shows what the \
            desktop already emits on the session bus: a Now Playing activity per MPRIS player, \
            with previous / play-pause / next buttons and a tap that raises the player; a \
            Progress activity per notification carrying a `value` hint or a `transfer` category, \
            watched as a bus monitor without disturbing the notification daemon; and, outside \
            KDE Plasma, a Transfer activity per KDE job (it serves org.kde.JobViewServer), with \
            cancel and pause/resume buttons. It also follows the desktop's Do Not Disturb switch \
            into islandd's focus; screen casts (xdg-desktop-portal's and Mutter's ScreenCast \
            sessions, watched as a bus monitor) into islandd's sharing, which hides activity \
            content while the screen is shared; the session lock (logind's LockedHint, the \
            screensavers' ActiveChanged) into islandd's lock, which shows each activity only as \
            its lock-screen level allows while locked; and GNOME's per-app lock-screen \
            notification settings into islandd's lock-screen privacy.

            Configuration: $XDG_CONFIG_HOME/island/bridge.conf (optional; see island-bridge(1)).
            SIGHUP re-reads it; SIGTERM and SIGINT end the bridge's activities and stop it.

            Exit status: 0 after SIGTERM or SIGINT; 64 for invalid options; 78 for an invalid \
            configuration; 1 otherwise.
            """,
        version: version)

    @Option(help: ArgumentHelp("islandd's socket (default: $ISLAND_SOCKET, else the user instance's).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("Read this configuration file instead of $XDG_CONFIG_HOME/island/bridge.conf.", valueName: "file"))
    var config: String?

    @Option(name: .customLong("bus"), help: ArgumentHelp("The D-Bus address of the bus to bridge (default: the session bus).", valueName: "address"))
    var busAddress: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("unknown --log-level '\(logLevel)': trace, debug, info, notice, warning, error or critical")
        }
    }

    func run() async throws {
        JournalLogHandler.bootstrap(level: Logger.Level(rawValue: logLevel) ?? .info)
        let logger = Logger(label: "island-bridge")
        let environment = ProcessInfo.processInfo.environment
        let path = config ?? Self.defaultConfigurationPath(environment: environment)
        let configuration: BridgeConfiguration
        do {
            configuration = try Self.loadConfiguration(path: path)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(78)
        }
        let loop = try BusLoop(name: "sd-bus")
        defer { loop.shutdown() }
        // A call waits this long for a daemon that went away before the book holds it and
        // retries later, so a stopping bridge never waits long for a daemon that is gone.
        let connection = IslandConnection(
            configuration: IslandKit.Configuration(
                appID: Self.appID, socketPath: socket,
                reconnectTimeout: .seconds(3)))
        let bridge = Bridge(
            loop: loop, configuration: configuration, connection: connection, busAddress: busAddress,
            environment: environment, logger: logger)
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: BridgeService(bridge: bridge)),
                    .init(service: ConfigurationReloads(hangups: hangups, path: path, bridge: bridge, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    static func defaultConfigurationPath(environment: [String: String]) -> String {
        BaseDirectories(environment: environment).configHome + "/island/bridge.conf"
    }

    /// A few lines of INI; anything larger is a mistake, not a file to hold in memory.
    static let maximumConfigurationBytes = 1 << 20

    /// The file's configuration; the defaults when there is no file. Any program of the user's
    /// can write the configuration folder: only a regular file is read (`readRegularFile`), so
    /// a FIFO there (which once blocked the start, and a SIGHUP, for good) or a link to an
    /// endless device is refused by name, never opened for reading.
    static func loadConfiguration(path: String) throws -> BridgeConfiguration {
        let text: String
        do {
            text = try readRegularText(path, limit: maximumConfigurationBytes, followingLinks: true)
        } catch .system(errno: ENOENT) {
            return BridgeConfiguration()
        } catch {
            throw UnreadableConfiguration(path: path, reason: error.description)
        }
        return try BridgeConfiguration.parse(text, path: path)
    }
}

/// A configuration file that could not be read, named with why.
struct UnreadableConfiguration: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "\(path): \(reason)" }
}

/// The bridge for as long as the process runs: started, then stopped on the group's graceful
/// shutdown, which ends its activities first.
struct BridgeService: Service {
    let bridge: Bridge

    func run() async throws {
        await bridge.start()
        try? await gracefulShutdown()
        await bridge.stop()
    }
}

/// SIGHUP re-reads bridge.conf; an invalid file is refused and the running configuration kept.
struct ConfigurationReloads: Service {
    let hangups: UnixSignalsSequence
    let path: String
    let bridge: Bridge
    let logger: Logger

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                let configuration = try IslandBridgeCommand.loadConfiguration(path: path)
                await bridge.reconfigure(configuration)
            } catch {
                logger.error("reload refused: the configuration is invalid; keeping the running one", metadata: ["error": "\(error)"])
            }
        }
    }
}
