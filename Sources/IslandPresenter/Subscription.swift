package import FreeDesktop
package import OrderedJSON
import IslandPaths
import IslandProtocol
import OrderedCollections
import VarlinkCore
import VarlinkNIO

/// A presenter subscription that survives the daemon: when the stream ends (the daemon says
/// `ShuttingDown`, the connection closes, or connecting fails) it reconnects with backoff and
/// subscribes again; the new subscription starts with a snapshot, which replaces the model.
package struct SubscriptionLoop: Sendable {
    package enum Event: Sendable {
        case update(JSONObject)
        /// The stream ended or could not start; `reason` says why. Reconnection follows.
        case disconnected(reason: String)
    }

    package let socketPath: String
    /// The reconnection delays; back to the first after an update arrived.
    package var backoff: Backoff

    /// 50 ms, doubling up to 2 s: a local daemon restarts in well under a second.
    package static let defaultBackoff = Backoff(first: .milliseconds(50), maximum: .seconds(2))

    package init(socketPath: String, backoff: Backoff = defaultBackoff) {
        self.socketPath = socketPath
        self.backoff = backoff
    }

    /// Runs until the task is cancelled.
    package func run(_ handle: @Sendable (Event) async -> Void) async {
        var attempt = 0
        while !Task.isCancelled {
            var reason = "the subscription ended"
            do {
                let client = try await VarlinkClient.connect(unixPath: socketPath)
                do {
                    for try await parameters in client.stream(PresenterNames.Subscribe.method) {
                        guard let update = parameters[PresenterNames.Subscribe.update]?.objectValue else { continue }
                        attempt = 0
                        await handle(.update(update))
                    }
                } catch {
                    reason = Self.describe(error)
                }
                await client.close()
            } catch {
                // As the CLI says it: NIO's own words name a syscall's parameters, not the problem.
                reason = "cannot connect to \(socketPath): \(ConnectFailure.describe(Self.describe(error), socket: socketPath))"
            }
            if Task.isCancelled { return }
            await handle(.disconnected(reason: reason))
            try? await Task.sleep(for: backoff.delay(attempt: attempt))
            attempt += 1
        }
    }

    /// `error` in words for a person (the TUI's status line, `click`'s stderr). A refusal that
    /// gives its reason is said as its short name and that reason: the JSON around it is for
    /// programs ("PermissionDenied: the session is locked: …", not `{"role":…}`).
    package static func describe(_ error: any Error) -> String {
        switch error {
        case let error as VarlinkError where error.name == ConnectionNames.ShuttingDown.error: "the daemon is shutting down"
        // PermissionDenied's member, the refusal a presenter gets; every org.island error that
        // gives a reason (Unentitled, PushUnavailable, …) names it the same.
        case let error as VarlinkError where error.parameters[IslandErrorNames.PermissionDenied.reason]?.stringValue != nil:
            "\(error.name.split(separator: ".").last.map(String.init) ?? error.name): "
                + (error.parameters[IslandErrorNames.PermissionDenied.reason]?.stringValue ?? "")
        case let error as VarlinkError: error.description
        case VarlinkClientError.connectionClosed: "the connection closed"
        default: String(describing: error)
        }
    }
}

/// A presenter connection for interactions (a subscription occupies its own connection).
/// Connects on first use and again after a failure.
package actor Interactor {
    private let socketPath: String
    private var client: VarlinkClient?

    package init(socketPath: String) { self.socketPath = socketPath }

    /// Sends `Interact`; returns the URL a tap opens. A connection kept from before a daemon
    /// restart is found closed only when used: the call then goes once more on a new
    /// connection (the daemon that closed it is gone and never answered it).
    package func interact(_ action: String, id: String?, button: String? = nil) async throws -> String? {
        typealias Names = PresenterNames.Interact
        var parameters: JSONObject = [Names.action: .string(action)]
        if let id { parameters[Names.id] = .string(id) }
        if let button { parameters[Names.button] = .string(button) }
        if let kept = client {
            do {
                return try await call(kept, parameters)
            } catch let error as VarlinkError {
                throw error
            } catch {
                // The kept connection is dead; a new one follows.
            }
        }
        return try await call(try await connect(), parameters)
    }

    private func connect() async throws -> VarlinkClient {
        let client = try await VarlinkClient.connect(unixPath: socketPath)
        self.client = client
        return client
    }

    private func call(_ client: VarlinkClient, _ parameters: JSONObject) async throws -> String? {
        do {
            let reply = try await client.call(PresenterNames.Interact.method, parameters)
            // The tap was taken; a reply not as the interface says only opens nothing.
            return (try? PresenterReplies.Interact(reply))?.url
        } catch let error as VarlinkError {
            throw error
        } catch {
            if self.client === client { self.client = nil }
            await client.close()
            throw error
        }
    }
}

/// Connects, subscribes and returns the model of the first snapshot.
package func fetchSnapshot(socketPath: String) async throws -> PresenterModel {
    var model = PresenterModel()
    for update in try await fetchSnapshotUpdates(socketPath: socketPath) { model.apply(update) }
    return model
}

/// The updates that make the daemon's current state: its snapshot, and any delta that came
/// with it (what `island-overlay --draw-svg` draws from).
package func fetchSnapshotUpdates(socketPath: String) async throws -> [JSONObject] {
    let client = try await VarlinkClient.connect(unixPath: socketPath)
    var model = PresenterModel()
    var updates: [JSONObject] = []
    do {
        for try await parameters in client.stream(PresenterNames.Subscribe.method) {
            if let update = parameters[PresenterNames.Subscribe.update]?.objectValue {
                // A later snapshot replaces all before it.
                if update[PresenterNames.Update.kind]?.stringValue == PresenterNames.Update.Kind.snapshot { updates.removeAll() }
                model.apply(update)
                updates.append(update)
            }
            if model.hasSnapshot { break }
        }
    } catch {
        await client.close()
        throw error
    }
    await client.close()
    guard model.hasSnapshot else { throw VarlinkClientError.connectionClosed }
    return updates
}
