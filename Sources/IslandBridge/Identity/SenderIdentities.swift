package import Logging

/// What the sources established about the senders they met on one bus connection, and who
/// waits for a lookup under way: each sender is looked up once (`SourceBus.identify`), the
/// answer shared by every source. Bounded: the oldest answers are forgotten (and looked up
/// again should their sender come back).
///
/// One per bus connection, since a restarted dbus-daemon hands out the same unique names
/// again: answers about an old bus go with its connection.
package final class SenderIdentities {
    private let bus: any SourceBus
    private let logger: Logger
    private var answers: [String: SenderIdentity] = [:]
    private var order: [String] = []
    private var waiting: [String: [(SenderIdentity) -> Void]] = [:]
    package static let maximumKnown = 256

    package init(bus: any SourceBus, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    package func known(_ sender: String) -> SenderIdentity? { answers[sender] }

    /// Whether a lookup for `sender` is under way.
    package func isPending(_ sender: String) -> Bool { waiting[sender] != nil }

    /// Calls `body` with what the bus establishes about `sender`, at once if known.
    package func identify(_ sender: String, then body: @escaping (SenderIdentity) -> Void) {
        if let known = answers[sender] { return body(known) }
        if waiting[sender] != nil {
            waiting[sender]?.append(body)
            return
        }
        waiting[sender] = [body]
        bus.identify(sender) { [weak self] identity in self?.resolve(sender, identity) }
    }

    private func resolve(_ sender: String, _ identity: SenderIdentity) {
        if identity == .unknown {
            logger.debug("a sender is not identified as any app", metadata: ["sender": "\(sender)"])
        }
        if answers.updateValue(identity, forKey: sender) == nil {
            order.append(sender)
            if order.count > Self.maximumKnown { answers[order.removeFirst()] = nil }
        }
        for body in waiting.removeValue(forKey: sender) ?? [] { body(identity) }
    }
}
