import Foundation
import FreeDesktop
import OrderedJSON
import IslandProtocol
import Logging
import OrderedCollections
import Synchronization
package import VarlinkCore
import VarlinkNIO

/// The app's link to the daemon: one producer connection for calls and one for the Watch
/// stream (a streaming call occupies its connection), shared by every `Activity` of the
/// process for one configuration.
///
/// When the daemon goes away (a restart, an upgrade), the connection comes back by itself:
/// it retries with a bounded backoff (50 ms doubling to 2 s), binds the app again, re-reads
/// its activities and re-emits their current state and content, so `for await` loops over
/// `contentUpdates` and `activityStateUpdates` carry on. Calls made meanwhile wait for the
/// daemon up to `reconnectTimeout`, then fail with `daemonUnavailable`.
public actor IslandConnection {
    public nonisolated let configuration: IslandKit.Configuration
    let logger = Logger(label: "org.island.kit")

    var client: VarlinkClient?
    var watchClient: VarlinkClient?
    var supervisor: Task<Void, Never>?
    /// The supervisor's decisions: when to connect again, and when to give up.
    var reconnection = ReconnectionSupervisor()
    var closed = false
    var waiters: [UInt64: CheckedContinuation<VarlinkClient, any Error>] = [:]
    var nextID: UInt64 = 0

    var channels: [String: ActivityChannel] = [:]
    /// The app's activities not yet dismissed, as far as this connection has heard: one it
    /// hears of that is not among them has just started (`startedActivities`).
    var known: Set<String> = []
    /// Followers of the activities that start, by activity type; registered without waiting
    /// for the actor, so that `Activity.activityUpdates` misses none started after it was read.
    nonisolated let startListeners = Mutex<[UInt64: (type: String, continuation: AsyncStream<ActivitySnapshot>.Continuation)]>([:])
    nonisolated let nextStartListener = Atomic<UInt64>(0)
    var eventListeners: [UInt64: AsyncStream<ActivityEvent>.Continuation] = [:]
    var authorization: AuthorizationSnapshot?
    /// `authorization`, readable without waiting for the actor: the baseline of an
    /// enablement stream is what was known when it was made.
    nonisolated let knownAuthorization = Mutex<AuthorizationSnapshot?>(nil)
    var enablementListeners: [UInt64: (setting: AuthorizationSetting, last: Bool?, continuation: AsyncStream<Bool>.Continuation)] = [:]
    /// Followers of the push-to-start token of each activity type.
    var pushToStartListeners: [String: [UInt64: AsyncStream<String>.Continuation]] = [:]

    private static let registry = Mutex<[IslandKit.Configuration: IslandConnection]>([:])

    /// Opens one connection to the daemon: its socket, or (IslandKitTesting) a daemon in this
    /// process.
    package typealias Connector = @Sendable () async throws -> VarlinkClient
    let connector: Connector

    /// The connection for `configuration` (by default, the one set with `IslandKit.configure`);
    /// inside IslandKitTesting's `TestIsland.withIsland`, one to the test's daemon.
    public static func shared(_ configuration: IslandKit.Configuration = IslandKit.configuration) -> IslandConnection {
        if let standIn { return standIn(configuration) }
        return registry.withLock { connections in
            if let existing = connections[configuration] { return existing }
            let connection = IslandConnection(configuration: configuration)
            connections[configuration] = connection
            return connection
        }
    }

    /// A connection of its own, not shared with `Activity` objects.
    public init(configuration: IslandKit.Configuration) {
        self.init(configuration: configuration, connector: { try await VarlinkClient.connect(unixPath: configuration.socketPath) })
    }

    /// What `shared()` answers instead, for the task it is bound in and its child tasks.
    @TaskLocal package static var standIn: (@Sendable (IslandKit.Configuration) -> IslandConnection)?

    package init(configuration: IslandKit.Configuration, connector: @escaping Connector) {
        self.configuration = configuration
        self.connector = connector
    }

    /// Closes both connections and stops reconnecting; pending calls fail.
    public func close() async {
        closed = true
        supervisor?.cancel()
        supervisor = nil
        await disconnect()
        failWaiters(unavailable("the connection was closed"))
        for listener in eventListeners.values { listener.finish() }
        eventListeners = [:]
        for listener in enablementListeners.values { listener.continuation.finish() }
        enablementListeners = [:]
        for listeners in pushToStartListeners.values { listeners.values.forEach { $0.finish() } }
        pushToStartListeners = [:]
        let starts = startListeners.withLock { listeners in
            defer { listeners = [:] }
            return listeners.values.map(\.continuation)
        }
        starts.forEach { $0.finish() }
    }
}
