import Foundation

/// Whether this app may show Live Activities, as in ActivityKit, with Island's budgets.
public struct ActivityAuthorizationInfo: Sendable {
    /// Live Activities are on for this app and globally.
    public var areActivitiesEnabled: Bool
    /// Frequent updates are allowed by the manifest and enabled by the user.
    public var frequentPushesEnabled: Bool
    /// The app as the daemon identified it.
    public var app: String
    public var remainingStarts: Int
    public var remainingAlerts: Int
    /// Live activities of this app, and of all apps.
    public var activities: Int
    public var globalActivities: Int

    private let connection: IslandConnection

    /// Asks the daemon.
    public init() async throws {
        try await self.init(connection: IslandConnection.shared())
    }

    /// Asks the daemon through `connection`.
    public init(connection: IslandConnection) async throws {
        let info = try await connection.authorizationInfo()
        self.connection = connection
        areActivitiesEnabled = info.enabled
        frequentPushesEnabled = info.frequentUpdates
        app = info.app
        remainingStarts = info.remainingStarts
        remainingAlerts = info.remainingAlerts
        activities = info.activities
        globalActivities = info.globalActivities
    }

    /// `areActivitiesEnabled` each time the user changes it (a change since this value was
    /// read is reported at once). Survives daemon restarts.
    public func activityEnablementUpdates() -> AsyncStream<Bool> {
        updates(of: .activities, baseline: areActivitiesEnabled)
    }

    /// `frequentPushesEnabled` each time the user changes it (`island admin frequent-updates`
    /// or a settings app; a change since this value was read is reported at once), as
    /// ActivityKit's `frequentPushEnablementUpdates`: with it off, the app's updates are held
    /// to the normal rate. Survives daemon restarts.
    public func frequentPushEnablementUpdates() -> AsyncStream<Bool> {
        updates(of: .frequentPushes, baseline: frequentPushesEnabled)
    }

    private func updates(of setting: IslandConnection.AuthorizationSetting, baseline: Bool) -> AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream<Bool>.makeStream()
        let connection = self.connection
        Task { await connection.addEnablementListener(setting, baseline: baseline, continuation) }
        return stream
    }
}
