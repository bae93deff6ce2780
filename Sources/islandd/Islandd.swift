import ArgumentParser
import Foundation
import IslandDaemon
import Logging
import Systemd

@main
struct Islandd: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "islandd",
        abstract: "The Island daemon: Live Activities and the Dynamic Island for Linux.",
        discussion: """
            islandd owns every live activity, arbitrates the island among apps, enforces \
            authorization and limits, and persists everything in SQLite. Clients talk to it over \
            Varlink on a Unix socket (see PROTOCOL.md, installed as \
            /usr/share/doc/island/PROTOCOL.md.gz; Protocol/PROTOCOL.md in the source).

            With no options it runs the user instance on its defaults:
              socket  $XDG_RUNTIME_DIR/island/islandd.sock (mode 0600)
              state   $XDG_STATE_HOME/island/islandd.sqlite3
              config  $XDG_CONFIG_HOME/island/islandd.conf and islandd.conf.d/*.conf
                      (optional)
            The system instance (--system) uses /run/island/islandd.sock, /var/lib/island and \
            /etc/island/islandd.conf. Under systemd it takes its socket by socket activation and \
            reports readiness, status and watchdog pings; SIGHUP reloads configuration and manifests.

            Exit status: 0 after SIGTERM or SIGINT, or an idle exit (IdleExitSec=); 64 for invalid \
            options; 78 for an invalid configuration; 1 otherwise.
            """,
        version: version)

    @Flag(name: .customLong("user"), help: "Run the per-user instance (the default).")
    var userScope = false

    @Flag(name: .customLong("system"), help: "Run the system instance.")
    var systemScope = false

    @Option(help: ArgumentHelp("Serve this socket instead of the scope's default.", valueName: "path"))
    var socket: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Keep the database in this directory.", valueName: "dir"))
    var stateDirectory: String?

    @Option(help: ArgumentHelp("Read this configuration file (and its .d/ drop-ins).", valueName: "file"))
    var config: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    /// The daemon's MQTT link process (`PushLinkProcess`), with its data headroom in bytes.
    @Option(name: .customLong("mqtt-link"), help: .hidden)
    var mqttLink: Int?

    func validate() throws {
        if userScope && systemScope { throw ValidationError("--user and --system exclude each other") }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("unknown --log-level '\(logLevel)': trace, debug, info, notice, warning, error or critical")
        }
        if let socket, socket.utf8.count > 107 { throw ValidationError("--socket path is longer than 107 bytes") }
    }

    func run() async throws {
        if let mqttLink { PushLinkProcess.run(headroom: mqttLink) }
        // The running file itself, even once a package upgrade replaced it on disk. Under a
        // profiler that runs islandd (valgrind) /proc/self/exe is the profiler's own tool:
        // Benchmarks/profile.py names the file instead.
        PushLinkProcess.use(executable: ProcessInfo.processInfo.environment["ISLAND_MQTT_LINK_EXECUTABLE"] ?? "/proc/self/exe")
        JournalLogHandler.bootstrap(level: Logger.Level(rawValue: logLevel) ?? .info)
        let logger = Logger(label: "islandd")
        let scope: DaemonScope = systemScope ? .system : .user
        var paths = DaemonPaths.defaults(for: scope, environment: ProcessInfo.processInfo.environment)
        if let socket {
            paths.socket = socket
            paths.runtimeDirectory = nil
        }
        if let stateDirectory { paths.stateDirectory = stateDirectory }
        if let config { paths.configurationFile = config }
        do {
            try await IslandDaemon(options: .init(scope: scope, paths: paths, version: Self.version), logger: logger).run()
        } catch let error as IslandDaemon.StartError {
            logger.critical("cannot start: \(error)")
            if case .configuration = error { throw ExitCode(78) }
            throw ExitCode.failure
        }
    }
}
