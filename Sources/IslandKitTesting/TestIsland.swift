import Foundation
import IslandDaemon
public import IslandKit
public import OrderedJSON
public import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkInProcess

/// Island's daemon in your tests' own process, for testing an app's activity code without
/// `islandd`, a socket or a desktop entry installed: the daemon's own rules, budgets,
/// refusals and streams, over an in-memory connection. Like hummingbird's
/// `HummingbirdTesting`, it is a library of its own: only a test target pays for the daemon.
///
/// ```swift
/// import IslandKit
/// import IslandKitTesting
/// import Testing
///
/// @Test func pausingShowsPaused() async throws {
///     try await TestIsland.withIsland { island in
///         let connection = island.connection()
///         let player = Player(connection: connection)   // your code, handed the connection
///         let activity = try await player.startActivity()  // registers a layout with a "pause" button
///         try await island.press(button: "pause", on: activity.id)
///         // … then check what your code did, e.g. `activity.content.state.paused`.
///     }
/// }
/// ```
///
/// Code under test reaches this daemon through the `IslandConnection` it is given (every
/// IslandKit call takes a `connection:`); the process-wide default (`IslandConnection.shared()`)
/// still points at the real daemon's socket, so tests running in parallel never share a
/// daemon.
public final class TestIsland: Sendable {
    /// The app `withIsland` installs by default.
    public static let defaultApp = "org.example.App"

    /// The daemon's directory: its state, configuration and the apps' desktop entries.
    public let directory: String
    private let daemon: InProcessDaemon
    private let connections = Mutex<[IslandConnection]>([])

    /// Runs `body` with a new daemon, in which each of `apps` has a desktop entry declaring
    /// Live Activities (and frequent updates, for those in `frequentUpdates`), configured by
    /// `configuration` (islandd.conf(5), e.g. `"[Limits]\nmax-activities-per-app = 1\n"`).
    /// Afterwards closes the connections made with `connection(app:)` and removes the daemon,
    /// whether `body` returned or threw.
    public static func withIsland<T>(apps: [String] = [defaultApp], frequentUpdates: Set<String> = [], configuration: String = "",
                                     _ body: (TestIsland) async throws -> T) async throws -> T {
        let island = try await TestIsland(apps: apps, frequentUpdates: frequentUpdates, configuration: configuration)
        defer { try? FileManager.default.removeItem(atPath: island.directory) }
        do {
            let result = try await body(island)
            await island.stop()
            return result
        } catch {
            await island.stop()
            throw error
        }
    }

    private init(apps: [String], frequentUpdates: Set<String>, configuration: String) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("island-test-\(UUID().uuidString)").path
        let applications = directory + "/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        for app in apps {
            let frequent = frequentUpdates.contains(app) ? "X-Island-FrequentUpdates=true\n" : ""
            try "[Desktop Entry]\nType=Application\nName=\(app)\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n\(frequent)"
                .write(toFile: "\(applications)/\(app).desktop", atomically: true, encoding: .utf8)
        }
        try configuration.write(toFile: directory + "/islandd.conf", atomically: true, encoding: .utf8)
        daemon = try await InProcessDaemon(stateDirectory: directory + "/state", dataDirectories: [directory + "/share"],
                                           configurationFile: directory + "/islandd.conf")
    }

    private func stop() async {
        let open = connections.withLock { connections in
            defer { connections = [] }
            return connections
        }
        for connection in open { await connection.close() }
        daemon.stop()
    }

    /// A connection acting for `app`, as the app's code would hold one: pass it to the code
    /// under test. Closed when `withIsland` returns.
    public func connection(app: String = TestIsland.defaultApp) -> IslandConnection {
        let service = daemon.service
        let connection = IslandConnection(configuration: IslandKit.Configuration(appID: app, socketPath: "in-process:" + directory),
                                          connector: { VarlinkClient.inProcess(service) })
        connections.withLock { $0.append(connection) }
        return connection
    }

    // MARK: What the user does

    /// Taps the activity, as in a presenter; answers the layout's URL for it, which the app
    /// also receives (`ActivityInteraction.tap`).
    @discardableResult
    public func tap(_ activityID: String) async throws -> String? {
        try await interact("tap", activityID)["url"]?.stringValue
    }

    /// Presses the layout button whose action is `action`, as in a presenter: the app
    /// receives `ActivityInteraction.button(action:)`.
    public func press(button action: String, on activityID: String) async throws {
        _ = try await interact("button", activityID, button: action)
    }

    /// Removes the activity from the lock screen, as the user does: it is dismissed (reason
    /// `user`).
    public func dismiss(_ activityID: String) async throws {
        _ = try await interact("dismiss", activityID)
    }

    /// Turns Live Activities on or off for `app` (all apps when nil), as the user does in the
    /// settings; turning them off ends the app's activities.
    public func setActivitiesEnabled(_ enabled: Bool, app: String? = TestIsland.defaultApp) async throws {
        var parameters: JSONObject = ["enabled": .bool(enabled)]
        if let app { parameters["app"] = .string(app) }
        _ = try await call("org.island.Admin.SetEnabled", parameters)
    }

    /// Turns frequent updates on or off for `app`, which must be among `frequentUpdates`.
    public func setFrequentUpdates(_ enabled: Bool, app: String = TestIsland.defaultApp) async throws {
        _ = try await call("org.island.Admin.SetFrequentUpdates", ["app": .string(app), "enabled": .bool(enabled)])
    }

    /// The layouts `app` registered, by activity type.
    public func layouts(app: String = TestIsland.defaultApp) async throws -> [String: JSONObject] {
        let reply = try await call("org.island.Extension.ListLayouts", ["app": .string(app)])
        var layouts: [String: JSONObject] = [:]
        for entry in reply["layouts"]?.arrayValue ?? [] {
            if let type = entry["type"]?.stringValue, let layout = entry["layout"]?.objectValue { layouts[type] = layout }
        }
        return layouts
    }

    private func interact(_ action: String, _ id: String, button: String? = nil) async throws -> JSONObject {
        var parameters: JSONObject = ["action": .string(action), "id": .string(id)]
        if let button { parameters["button"] = .string(button) }
        return try await call("org.island.Presenter.Interact", parameters)
    }

    /// One call on a connection of its own (each role binds its connection), refusals as
    /// `ActivityAuthorizationError`.
    private func call(_ method: String, _ parameters: JSONObject) async throws -> JSONObject {
        let client = VarlinkClient.inProcess(daemon.service)
        do {
            let reply = try await client.call(method, parameters)
            await client.close()
            return reply
        } catch let error as VarlinkError {
            await client.close()
            throw ActivityAuthorizationError(error)
        } catch {
            await client.close()
            throw error
        }
    }
}
