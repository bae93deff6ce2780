import Foundation
import FreeDesktop
import OrderedJSON
import IslandProtocol
import Logging
import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkNIO

// MARK: The supervisor

extension IslandConnection {
    /// Connects, follows the watch stream until it ends, and connects again, for as long as
    /// `reconnection` says.
    func supervise() async {
        while !closed, !Task.isCancelled {
            let wait: Duration
            do {
                let stream = try await connect()
                do {
                    for try await reply in stream {
                        // An event that is not what the interface says is the daemon's to fix; the
                        // stream goes on, as its next events may be read.
                        do throws(UnexpectedReply) {
                            handle(try ProducerReplies.Watch(reply).event)
                        } catch {
                            logger.warning("an event of the watch stream was not read", metadata: ["error": "\(error)"])
                        }
                    }
                } catch {
                    logger.debug("the watch stream ended", metadata: ["error": "\(describe(error))"])
                }
                await disconnect()
                guard case .retry(let after) = reconnection.next(after: .lost) else { break }
                wait = after
            } catch {
                await disconnect()
                let outcome = ReconnectionSupervisor.Outcome(error)
                switch reconnection.next(after: outcome) {
                case .giveUp:
                    if outcome == .refused, let refusal = error as? VarlinkError {
                        failWaiters(ActivityAuthorizationError(refusal))
                    } else {
                        failWaiters(unavailable(describe(error)))
                    }
                    supervisor = nil
                    return
                case .retry(let after):
                    logger.debug("reconnecting", metadata: ["error": "\(describe(error))", "delay": "\(after)"])
                    wait = after
                }
            }
            if closed || Task.isCancelled { break }
            try? await Task.sleep(for: wait)
        }
        supervisor = nil
    }

    func disconnect() async {
        let (call, watch) = (client, watchClient)
        client = nil
        watchClient = nil
        await call?.close()
        await watch?.close()
    }

    /// Connects both connections, starts the watch stream, binds the app, re-reads its
    /// activities; then releases the waiting calls.
    func connect() async throws -> AsyncThrowingStream<JSONObject, any Error> {
        let path = configuration.socketPath
        let call = try await connector()
        let watch: VarlinkClient
        do {
            watch = try await connector()
        } catch {
            await call.close()
            throw error
        }
        watchClient = watch
        let stream = watch.stream(ProducerNames.Watch.method, appParameter)
        let info: AuthorizationSnapshot
        let activities: [ActivitySnapshot]
        do {
            // The round trips also give the daemon time to register the watch before any
            // call of ours can change an activity.
            info = AuthorizationSnapshot(
                try read(await call.call(ProducerNames.Authorization.method, appParameter), as: ProducerReplies.Authorization.init).authorization)
            activities = try read(await call.call(ProducerNames.List.method, appParameter), as: ProducerReplies.List.init).activities
                .map(ActivitySnapshot.init)
        } catch {
            await call.close()
            await watch.close()
            watchClient = nil
            throw error
        }
        let reconnected = reconnection.everConnected
        // What runs when we first connect has not started now: `activityUpdates` tells of
        // activities that start after it.
        if !reconnected { known.formUnion(activities.filter { $0.state != .dismissed }.map(\.id)) }
        reconnection.connected()
        client = call
        apply(info)
        if reconnected {
            logger.debug("reconnected to the daemon", metadata: ["socket": "\(path)"])
            let listed = Set(activities.map(\.id))
            // Those that started while the daemon was away (by push, say) start now for us.
            known.formIntersection(listed)
            for activity in activities {
                sighted(activity)
                channels[activity.id]?.receive(activity, force: true)
                for listener in eventListeners.values { listener.yield(ActivityEvent(resync: activity)) }
            }
            // Activities that are gone were dismissed while the daemon was away.
            for (id, channel) in channels where !listed.contains(id) {
                var gone = channel.latest
                gone.state = .dismissed
                channel.receive(gone, force: false)
                channels[id] = nil
            }
        }
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(returning: call) }
        return stream
    }

    func handle(_ event: ProducerReplies.Event) {
        guard let event = ActivityEvent(event) else { return }
        switch event.kind {
        case .state, .content:
            if let activity = event.activity {
                sighted(activity)
                channels[activity.id]?.receive(activity, force: false)
                if activity.state == .dismissed { channels[activity.id] = nil }
            }
        case .authorization:
            if let info = event.authorization { apply(info) }
        case .pushToken:
            if let id = event.activity?.id, let token = event.pushToken { channels[id]?.receive(pushToken: token) }
        case .pushToStartToken:
            if let type = event.type, let token = event.pushToken {
                pushToStartListeners[type]?.values.forEach { $0.yield(token) }
            }
        case .tap:
            if let id = event.activity?.id { channels[id]?.receive(.tap(url: event.url.flatMap { URL(string: $0) })) }
        case .button:
            if let id = event.activity?.id, let action = event.action { channels[id]?.receive(.button(action: action)) }
        case .resync, .focus:
            break
        }
        for listener in eventListeners.values { listener.yield(event) }
    }
}
