import Foundation

/// Whether this app may show Live Activities, as ActivityKit's. Made at once, like
/// ActivityKit's; each value is asked of the daemon when it is read (hence `await`), and
/// `details()` has Island's budgets.
///
/// ```swift
/// let info = ActivityAuthorizationInfo()
/// guard await info.areActivitiesEnabled else { return }
/// for await enabled in info.activityEnablementUpdates { … }
/// ```
public struct ActivityAuthorizationInfo: Sendable {
    /// `areActivitiesEnabled` each time the user changes it.
    public typealias ActivityEnablementUpdates = AsyncStream<Bool>
    /// `frequentPushesEnabled` each time the user changes it.
    public typealias FrequentPushEnablementUpdates = AsyncStream<Bool>

    private let connection: IslandConnection

    /// Through the connection `IslandKit.configure` set up.
    public init() {
        self.init(connection: IslandConnection.shared())
    }

    /// Through `connection`.
    public init(connection: IslandConnection) {
        self.connection = connection
    }

    /// Live Activities are on for this app and globally; false when the daemon cannot be
    /// reached (`details()` says why).
    public var areActivitiesEnabled: Bool {
        get async { (try? await connection.authorizationInfo())?.enabled ?? false }
    }

    /// Frequent updates are allowed by the app's desktop entry and enabled by the user; false
    /// when the daemon cannot be reached.
    public var frequentPushesEnabled: Bool {
        get async { (try? await connection.authorizationInfo())?.frequentUpdates ?? false }
    }

    /// Everything the daemon says of the app: whether it is enabled, the app as the daemon
    /// identified it, its remaining starts and alerts, its live activities, the limits.
    public func details() async throws -> AuthorizationSnapshot {
        try await connection.authorizationInfo()
    }

    /// `areActivitiesEnabled` each time the user changes it, from when this is read. Survives
    /// daemon restarts.
    public var activityEnablementUpdates: ActivityEnablementUpdates {
        updates(of: .activities)
    }

    /// `frequentPushesEnabled` each time the user changes it (`island admin frequent-updates`
    /// or a settings app), from when this is read: with it off, the app's updates are held to
    /// the normal rate. Survives daemon restarts.
    public var frequentPushEnablementUpdates: FrequentPushEnablementUpdates {
        updates(of: .frequentPushes)
    }

    private func updates(of setting: IslandConnection.AuthorizationSetting) -> AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream<Bool>.makeStream()
        let connection = self.connection
        let baseline = connection.known(setting)
        Task { await connection.addEnablementListener(setting, baseline: baseline, continuation) }
        return stream
    }
}
