import Foundation
import FreeDesktop
import IslandPaths
package import OrderedJSON
import IslandProtocol
import Logging
import OrderedCollections
import Synchronization
package import VarlinkCore
import VarlinkNIO

// MARK: Calls

extension IslandConnection {
    /// `reply` read as its interface says (`ProducerReplies.Update.init`); a reply that is not
    /// is refused as `org.island.InvalidReply`, its `reason` saying what differs.
    func read<Reply>(_ reply: JSONObject, as read: (JSONObject) throws(UnexpectedReply) -> Reply) throws(ActivityAuthorizationError) -> Reply {
        do {
            return try read(reply)
        } catch {
            throw .other(name: "org.island.InvalidReply", parameters: ["reason": .string(error.description)])
        }
    }

    /// Calls `method`, waiting for the daemon while it reconnects. A call whose connection
    /// is lost is sent once more after the reconnect when `retry` (it is idempotent).
    func perform(_ method: String, _ parameters: JSONObject, retry: Bool) async throws -> JSONObject {
        var attempt = 0
        while true {
            attempt += 1
            let client = try await readyClient()
            do {
                return try await client.call(method, parameters)
            } catch let error as VarlinkError where !error.name.hasPrefix(ConnectionNames.interface + ".") {
                throw ActivityAuthorizationError(error)
            } catch {
                await connectionLost(client)
                if !retry || attempt >= 2 { throw unavailable(describe(error)) }
            }
        }
    }

    func connectionLost(_ lost: VarlinkClient) async {
        guard client === lost else { return }
        client = nil
        // Ending the watch stream makes the supervisor reconnect.
        await watchClient?.close()
    }

    /// The call connection once it is bound and the watch stream runs.
    func readyClient() async throws -> VarlinkClient {
        if let client { return client }
        if closed { throw unavailable("the connection was closed") }
        if supervisor == nil {
            supervisor = Task { await self.supervise() }
        }
        nextID += 1
        let id = nextID
        let timeout = configuration.reconnectTimeout
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = continuation
            Task {
                try? await Task.sleep(for: timeout)
                self.expireWaiter(id)
            }
        }
    }

    func expireWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: unavailable("no answer within \(configuration.reconnectTimeout)"))
    }

    func failWaiters(_ error: any Error) {
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(throwing: error) }
    }

    nonisolated func unavailable(_ reason: String) -> ActivityAuthorizationError {
        .daemonUnavailable(socketPath: configuration.socketPath, reason: reason)
    }

    /// One call on a connection of its own (each role binds its connection), closed after
    /// whatever happens. The daemon's errors are thrown as `ActivityAuthorizationError`, as
    /// every IslandKit call throws them, and IslandKitTesting's `TestIsland` with them; others
    /// (the connection's) as `lost` makes them.
    package static func callAlone(
        _ client: VarlinkClient, _ method: String, _ parameters: JSONObject,
        lost: @Sendable (any Error) -> any Error = { $0 }
    ) async throws -> JSONObject {
        do {
            let reply = try await client.call(method, parameters)
            await client.close()
            return reply
        } catch let error as VarlinkError {
            await client.close()
            throw ActivityAuthorizationError(error)
        } catch {
            await client.close()
            throw lost(error)
        }
    }

    nonisolated func describe(_ error: any Error) -> String {
        switch error {
        case VarlinkClientError.connectionClosed: "the connection closed"
        case let error as VarlinkError: error.description
        default: ConnectFailure.describe("\(error)", socket: configuration.socketPath)
        }
    }

    /// SwiftNIO's connect errors read `connect(descriptor:addr:size:): … (errno: 2)`; say it plainly.
    public static func describeSystemError(_ text: String) -> String {
        ConnectFailure.describe(text)
    }
}
