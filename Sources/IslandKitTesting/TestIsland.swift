import Foundation
import IslandDaemon
public import IslandKit
public import OrderedJSON
public import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkInProcess
import IslandProtocol

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
///         let activity = try await Player().startActivity()  // your code: registers a layout with a "pause" button
///         try await island.press(button: "pause", on: activity.id)
///         // … then check what your code did, e.g. `activity.content.state.paused`.
///     }
/// }
/// ```
///
/// Inside `withIsland`, code under test reaches this daemon through the connection IslandKit
/// calls use by default (`IslandConnection.shared()`, for the app `IslandKit.configure` named,
/// else `defaultApp`), in the task that runs `body` and the tasks it starts (not in detached
/// tasks): each test has a daemon of its own, also when tests run in parallel. Or hand the
/// code a connection from `connection(app:)`.
///
/// When `withIsland` returns, whatever is still live is torn down in order: the app's
/// connections close (so `ownerGone` policies apply), the daemon commits what that decided and
/// closes its store, and only then is its directory removed.
public final class TestIsland: Sendable {
    /// The app `withIsland` installs by default.
    public static let defaultApp = "org.example.App"

    /// The daemon's directory: its state, configuration and the apps' desktop entries.
    public let directory: String
    private let daemon: InProcessDaemon
    private let connections = Mutex<[IslandConnection]>([])
    /// What `IslandConnection.shared()` answers during `withIsland`, one per app.
    private let shared = Mutex<[String: IslandConnection]>([:])

    /// Runs `body` with a new daemon, in which each of `apps` has a desktop entry declaring
    /// Live Activities (and frequent updates, for those in `frequentUpdates`), configured by
    /// `configuration` (islandd.conf(5), e.g. `"[Limits]\nMaxActivitiesPerApp=1\n"`).
    /// Afterwards, whether `body` returned or threw, closes the connections to it (those of
    /// `connection(app:)` and `IslandConnection.shared()`), stops the daemon once it has
    /// committed what their closing set off, and removes its directory.
    public static func withIsland<T>(
        apps: [String] = [defaultApp], frequentUpdates: Set<String> = [], configuration: String = "",
        _ body: (TestIsland) async throws -> T
    ) async throws -> T {
        let island = try await TestIsland(apps: apps, frequentUpdates: frequentUpdates, configuration: configuration)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(
                try await IslandConnection.$standIn.withValue({ island.sharedConnection(for: $0) }) {
                    try await body(island)
                })
        } catch {
            outcome = .failure(error)
        }
        await island.stop()
        try? FileManager.default.removeItem(atPath: island.directory)
        return try outcome.get()
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
        daemon = try await InProcessDaemon(
            stateDirectory: directory + "/state", dataDirectories: [directory + "/share"],
            configurationFile: directory + "/islandd.conf")
    }

    private func stop() async {
        let open = connections.withLock { connections in
            defer { connections = [] }
            return connections
        }
        for connection in open { await connection.close() }
        await daemon.stop()
    }

    /// `IslandConnection.shared(configuration)` during `withIsland`: one connection per app,
    /// made on first use.
    private func sharedConnection(for configuration: IslandKit.Configuration) -> IslandConnection {
        let app = configuration.appID ?? Self.defaultApp
        if let existing = shared.withLock({ $0[app] }) { return existing }
        let made = connection(app: app, dateEncoding: configuration.dateEncoding)
        return shared.withLock { connections in
            if let raced = connections[app] { return raced }
            connections[app] = made
            return made
        }
    }

    /// A connection acting for `app`, as the app's code would hold one: pass it to the code
    /// under test. Closed when `withIsland` returns.
    public func connection(app: String = TestIsland.defaultApp, dateEncoding: ContentDateEncoding = .unixSeconds) -> IslandConnection {
        let service = daemon.service
        let configuration = IslandKit.Configuration(appID: app, socketPath: "in-process:" + directory, dateEncoding: dateEncoding)
        let connection = IslandConnection(configuration: configuration, connector: { VarlinkClient.inProcess(service) })
        connections.withLock { $0.append(connection) }
        return connection
    }

    // MARK: What the user does

    /// Taps the activity, as in a presenter; answers the layout's URL for it, which the app
    /// also receives (`ActivityInteraction.tap`).
    @discardableResult
    public func tap(_ activityID: String) async throws -> String? {
        try PresenterReplies.Interact(await interact(PresenterNames.Interact.Action.tap, activityID)).url
    }

    /// Presses the layout button whose action is `action`, as in a presenter: the app
    /// receives `ActivityInteraction.button(action:)`.
    public func press(button action: String, on activityID: String) async throws {
        _ = try await interact(PresenterNames.Interact.Action.button, activityID, button: action)
    }

    /// Removes the activity from the lock screen, as the user does: it is dismissed (reason
    /// `user`).
    public func dismiss(_ activityID: String) async throws {
        _ = try await interact(PresenterNames.Interact.Action.dismiss, activityID)
    }

    /// Turns Live Activities on or off for `app` (all apps when nil), as the user does in the
    /// settings; turning them off ends the app's activities.
    public func setActivitiesEnabled(_ enabled: Bool, app: String? = TestIsland.defaultApp) async throws {
        var parameters: JSONObject = [AdminNames.SetEnabled.enabled: .bool(enabled)]
        if let app { parameters[AdminNames.SetEnabled.app] = .string(app) }
        _ = try await call(AdminNames.SetEnabled.method, parameters)
    }

    /// Turns frequent updates on or off for `app`, which must be among `frequentUpdates`.
    public func setFrequentUpdates(_ enabled: Bool, app: String = TestIsland.defaultApp) async throws {
        _ = try await call(
            AdminNames.SetFrequentUpdates.method,
            [
                AdminNames.SetFrequentUpdates.app: .string(app), AdminNames.SetFrequentUpdates.enabled: .bool(enabled),
            ])
    }

    /// The layouts `app` registered, by activity type.
    public func layouts(app: String = TestIsland.defaultApp) async throws -> [String: JSONObject] {
        let reply = try await call(ExtensionNames.ListLayouts.method, [ExtensionNames.ListLayouts.app: .string(app)])
        let registered = try ExtensionReplies.ListLayouts(reply).layouts
        return Dictionary(registered.map { ($0.type, $0.layout) }, uniquingKeysWith: { _, last in last })
    }

    private func interact(_ action: String, _ id: String, button: String? = nil) async throws -> JSONObject {
        var parameters: JSONObject = [PresenterNames.Interact.action: .string(action), PresenterNames.Interact.id: .string(id)]
        if let button { parameters[PresenterNames.Interact.button] = .string(button) }
        return try await call(PresenterNames.Interact.method, parameters)
    }

    /// One call on a connection of its own (each role binds its connection), refusals as
    /// `ActivityAuthorizationError`.
    private func call(_ method: String, _ parameters: JSONObject) async throws -> JSONObject {
        try await IslandConnection.callAlone(VarlinkClient.inProcess(daemon.service), method, parameters)
    }
}
