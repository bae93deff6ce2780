/// The topics a client wants, and what to tell the broker when, whether or not it is connected.
///
/// The broker of a persistent session remembers subscriptions across disconnections, so a
/// topic dropped while disconnected may still be subscribed there: it is unsubscribed on the
/// next connection. Every topic wanted is subscribed again on each connection, session kept or
/// not — a broker that lost its state (a restart without persistence, a cluster node that took
/// over) would otherwise send nothing, silently. Pure: the client applies what it returns.
public struct SubscriptionSet: Sendable, Hashable {
    public private(set) var wanted: Set<String> = []
    /// Dropped while disconnected: perhaps still subscribed at the broker.
    public private(set) var unsubscribeOnConnect: Set<String> = []
    public private(set) var connected = false

    public init() {}

    /// Wants `topic`; true when SUBSCRIBE should be sent now.
    public mutating func add(_ topic: String) -> Bool {
        unsubscribeOnConnect.remove(topic)
        let inserted = wanted.insert(topic).inserted
        return inserted && connected
    }

    /// Stops wanting `topic`; true when UNSUBSCRIBE should be sent now. A topic that was never
    /// wanted is unsubscribed too: a persistent session may hold it from before a restart.
    public mutating func remove(_ topic: String) -> Bool {
        wanted.remove(topic)
        guard connected else {
            unsubscribeOnConnect.insert(topic)
            return false
        }
        return true
    }

    /// A connection was made: what to subscribe and to unsubscribe, in that order. Without a
    /// session the broker holds no subscription, so there is nothing to unsubscribe.
    public mutating func connect(sessionPresent: Bool) -> (subscribe: [String], unsubscribe: [String]) {
        connected = true
        let unsubscribe = sessionPresent ? unsubscribeOnConnect.sorted() : []
        unsubscribeOnConnect = []
        return (wanted.sorted(), unsubscribe)
    }

    public mutating func disconnect() {
        connected = false
    }
}
