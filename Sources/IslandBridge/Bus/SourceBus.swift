package import SDBus

/// The session bus as the bridge's sources use it: the few `SDBus` calls they make, so that
/// each source can be driven by a fake bus in its tests. `SDBusSourceBus` (island-bridge) is
/// the real one, one per bus connection.
///
/// Like `SDBus.Bus`, it belongs to one thread (the bus loop), and so do the callbacks it
/// makes: a source and its bus are used from there only.
package protocol SourceBus: AnyObject {
    /// Calls `handler` with every message matching `rule` (D-Bus match rule syntax) for as
    /// long as the returned subscription is held.
    func addMatch(_ rule: String, _ handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription

    /// Calls a method; `reply` gets the reply or the error, later, never from inside the call.
    func call(
        destination: String, path: String, interface: String, member: String, arguments: [BusValue],
        timeout: Duration, reply: @escaping (Result<any IncomingMessage, BusError>) -> Void) throws(BusError)

    /// Serves `interface` at `path` for as long as the returned subscription is held.
    func export(
        _ interface: ExportedInterface, at path: String,
        handler: @escaping (any IncomingMessage) -> MethodResult
    ) throws(BusError) -> BusSubscription

    /// Asks for a well-known name (`Bus.requestName`).
    func requestName(
        _ name: String, allowReplacement: Bool, queue: Bool,
        completion: @escaping (Result<Bus.NameOwnership, BusError>) -> Void) throws(BusError)

    func emitSignal(path: String, interface: String, member: String) throws(BusError)

    /// Calls `whenGone` once connection `name` has left the bus, while the subscription is held.
    func track(_ name: String, whenGone: @escaping () -> Void) throws(BusError) -> BusSubscription

    /// A monitor connection (`BecomeMonitor`) to the same bus: `handler` sees every message
    /// between other peers that matches `rules`, while the subscription is held.
    func monitor(rules: [String], handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription

    /// Finds out who is behind connection `sender` (`SenderIdentity`), from the bus's
    /// credentials for that very connection; `answer` gets it later, `.unknown` on any doubt.
    func identify(_ sender: String, answer: @escaping (SenderIdentity) -> Void)

    /// Runs `body` on the loop once the current dispatch is over: a subscription may not be
    /// dropped from inside its own callback.
    func afterDispatch(_ body: @escaping () -> Void)
}

/// A match, a served object, a tracker or a monitor: in force while held.
package typealias BusSubscription = AnyObject

/// What a source reads of a message it receives: `SDBus.BusMessage`, or a test's message.
package protocol IncomingMessage {
    var kind: BusMessage.Kind { get }
    var sender: String? { get }
    var destination: String? { get }
    /// The object a call is made on or a signal comes from.
    var path: String? { get }
    var interface: String? { get }
    var member: String? { get }
    var signature: String { get }
    var serial: UInt64 { get }
    var replySerial: UInt64? { get }
    /// The body's values, read within `limits` (a peer's message may be any size).
    func arguments(limits: DecodingLimits) throws(BusError) -> [BusValue]
}

extension BusMessage: IncomingMessage {}

extension IncomingMessage {
    package func arguments() throws(BusError) -> [BusValue] { try arguments(limits: DecodingLimits()) }
}

/// The bus driver (`org.freedesktop.DBus`), which every source asks about names.
extension SourceBus {
    package func callDriver(
        _ member: String, _ arguments: [BusValue] = [],
        reply: @escaping (Result<any IncomingMessage, BusError>) -> Void
    ) throws(BusError) {
        try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: member, arguments: arguments, timeout: .seconds(25), reply: reply)
    }

    /// Follows the owner of `name` for as long as the returned subscription is held: `changed`
    /// gets its unique name once the driver answers, then at every change (nil: no owner). A
    /// `NameOwnerChanged` that comes before the driver's answer is the newer news: the answer
    /// is then dropped.
    package func followOwner(of name: String, _ changed: @escaping (String?) -> Void) throws(BusError) -> BusSubscription {
        let heard = OwnerChangeHeard()
        let subscription = try addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        ) { message in
            guard case let arguments = (try? message.arguments()) ?? [], arguments.count == 3, let new = arguments[2].string else { return }
            heard.change = true
            changed(new.isEmpty ? nil : new)
        }
        owner(of: name) { owner in
            guard !heard.change, let owner else { return }
            changed(owner)
        }
        return subscription
    }

    /// The unique name of the connection that owns `name`, or nil (none, or the call failed).
    package func owner(of name: String, _ body: @escaping (String?) -> Void) {
        do {
            try callDriver("GetNameOwner", [.string(name)]) { result in
                guard case .success(let reply) = result else { return body(nil) }
                body((try? reply.arguments())?.first?.string)
            }
        } catch {
            body(nil)
        }
    }
}

/// Whether `followOwner` has heard a `NameOwnerChanged` yet.
private final class OwnerChangeHeard {
    var change = false
}
