import IslandBridge
import SDBus

/// A message as a test writes it: headers and a body.
struct FakeMessage: IncomingMessage {
    var kind: BusMessage.Kind
    var sender: String?
    var destination: String? = nil
    var path: String? = nil
    var interface: String? = nil
    var member: String? = nil
    var serial: UInt64 = 0
    var replySerial: UInt64? = nil
    var body: [BusValue] = []

    var signature: String { body.map(\.signature).joined() }

    /// The body as `BusMessage.arguments(limits:)` reads it off the wire: a container nested
    /// `maximumDepth` deep or deeper is skipped, and a variant or dictionary entry that lost
    /// its content with it; values past `maximumValues` are skipped; strings are cut. A test
    /// of a source's limits then sees what the source would.
    func arguments(limits: DecodingLimits) throws(BusError) -> [BusValue] {
        var remaining = limits.maximumValues
        return body.compactMap { Self.read($0, depth: 0, limits: limits, remaining: &remaining) }
    }

    private static func read(_ value: BusValue, depth: Int, limits: DecodingLimits, remaining: inout Int) -> BusValue? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        func children(_ values: [BusValue], remaining: inout Int) -> [BusValue] {
            values.compactMap { read($0, depth: depth + 1, limits: limits, remaining: &remaining) }
        }
        switch value {
        case .array, .dictEntry, .structure, .variant:
            guard depth < limits.maximumDepth else { return nil }
        default: break
        }
        switch value {
        case .array(let element, let values): return .array(elementSignature: element, children(values, remaining: &remaining))
        case .structure(let fields): return .structure(children(fields, remaining: &remaining))
        case .variant(let inner):
            return children([inner], remaining: &remaining).first.map(BusValue.variant)
        case .dictEntry(let key, let entryValue):
            let pair = children([key, entryValue], remaining: &remaining)
            return pair.count == 2 ? .dictEntry(pair[0], pair[1]) : nil
        case .string(let text): return .string(cut(text, limits.maximumStringBytes))
        case .objectPath(let text): return .objectPath(cut(text, limits.maximumStringBytes))
        case .signature(let text): return .signature(cut(text, limits.maximumStringBytes))
        default: return value
        }
    }

    private static func cut(_ text: String, _ maximumBytes: Int) -> String {
        var bytes = 0
        return String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix { scalar in
                    bytes += UTF8.width(scalar)
                    return bytes <= maximumBytes
                }))
    }

    static func signal(from sender: String, path: String, interface: String, member: String, _ body: [BusValue]) -> FakeMessage {
        FakeMessage(kind: .signal, sender: sender, path: path, interface: interface, member: member, body: body)
    }

    static func reply(_ body: [BusValue], from sender: String = "org.freedesktop.DBus") -> FakeMessage {
        FakeMessage(kind: .methodReturn, sender: sender, body: body)
    }
}

/// A session bus in memory, for the sources' tests: it keeps what a source subscribed to,
/// delivers what the test sends through the source's own match rules, and answers calls from
/// `answer` when the test says (`run()`), never from inside the call, as a real bus would not.
final class FakeBus: SourceBus {
    struct Call {
        var destination: String
        var path: String
        var interface: String
        var member: String
        var arguments: [BusValue]
    }

    /// What a call gets back; nil keeps it waiting (a peer that does not answer yet).
    var answer: (Call) -> Result<FakeMessage, BusError>? = { _ in .failure(BusError(name: BusError.serviceUnknown, message: "")) }
    /// Who each sender is; `.unknown` for one not listed.
    var identities: [String: SenderIdentity] = [:]
    /// Every call made, in order.
    private(set) var calls: [Call] = []
    private(set) var emitted: [(path: String, interface: String, member: String)] = []
    private(set) var requestedNames: [String] = []
    private(set) var identified: [String] = []

    private var waitingCalls: [(Call, (Result<any IncomingMessage, BusError>) -> Void)] = []
    private var waitingIdentities: [(String, (SenderIdentity) -> Void)] = []
    private var nextTurn: [() -> Void] = []
    private var matches: [(token: Weak, rule: [String: String], handler: (any IncomingMessage) -> Void)] = []
    private var monitors: [(token: Weak, handler: (any IncomingMessage) -> Void)] = []
    private var objects: [(token: Weak, path: String, interface: ExportedInterface, handler: (any IncomingMessage) -> MethodResult)] = []
    private var trackers: [(token: Weak, name: String, whenGone: () -> Void)] = []
    private var serial: UInt64 = 100

    final class Token {}
    struct Weak {
        weak var token: Token?
        var isHeld: Bool { token != nil }
    }

    // MARK: SourceBus

    func addMatch(_ rule: String, _ handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription {
        let token = Token()
        matches.append((Weak(token: token), Self.parse(rule), handler))
        return token
    }

    func call(
        destination: String, path: String, interface: String, member: String, arguments: [BusValue], timeout: Duration,
        reply: @escaping (Result<any IncomingMessage, BusError>) -> Void
    ) throws(BusError) {
        let call = Call(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        calls.append(call)
        waitingCalls.append((call, reply))
    }

    func export(
        _ interface: ExportedInterface, at path: String,
        handler: @escaping (any IncomingMessage) -> MethodResult
    ) throws(BusError) -> BusSubscription {
        let token = Token()
        objects.append((Weak(token: token), path, interface, handler))
        return token
    }

    func requestName(
        _ name: String, allowReplacement: Bool, queue: Bool,
        completion: @escaping (Result<Bus.NameOwnership, BusError>) -> Void
    ) throws(BusError) {
        requestedNames.append(name)
        nextTurn.append { completion(.success(.owner)) }
    }

    func emitSignal(path: String, interface: String, member: String) throws(BusError) {
        emitted.append((path, interface, member))
    }

    func track(_ name: String, whenGone: @escaping () -> Void) throws(BusError) -> BusSubscription {
        let token = Token()
        trackers.append((Weak(token: token), name, whenGone))
        return token
    }

    func monitor(rules: [String], handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription {
        let token = Token()
        monitors.append((Weak(token: token), handler))
        return token
    }

    func identify(_ sender: String, answer: @escaping (SenderIdentity) -> Void) {
        identified.append(sender)
        waitingIdentities.append((sender, answer))
    }

    func afterDispatch(_ body: @escaping () -> Void) {
        nextTurn.append(body)
    }

    // MARK: What the test does

    /// Answers every call that `answer` has an answer for, every identity lookup and whatever
    /// waits for the next turn, until nothing more can go on.
    func run() {
        while true {
            if let index = waitingCalls.firstIndex(where: { answer($0.0) != nil }) {
                let (call, reply) = waitingCalls.remove(at: index)
                reply(answer(call)!.map { $0 as any IncomingMessage })
            } else if !waitingIdentities.isEmpty {
                let (sender, body) = waitingIdentities.removeFirst()
                body(identities[sender] ?? .unknown)
            } else if !nextTurn.isEmpty {
                nextTurn.removeFirst()()
            } else {
                return
            }
        }
    }

    /// Calls still waiting for their answer.
    var waiting: [Call] { waitingCalls.map(\.0) }

    /// Delivers a signal to the matches whose rules it meets.
    func send(_ message: FakeMessage) {
        for match in matches where match.token.isHeld && Self.matches(match.rule, message) { match.handler(message) }
    }

    /// What a monitor sees: a message between other peers.
    func monitored(_ message: FakeMessage) {
        var message = message
        if message.serial == 0 {
            serial += 1
            message.serial = serial
        }
        for monitor in monitors where monitor.token.isHeld { monitor.handler(message) }
    }

    /// A peer's call to an object a source serves; `UnknownObject` when none is served there.
    func callServed(path: String, interface: String, member: String, from sender: String, _ arguments: [BusValue]) -> MethodResult {
        guard let object = objects.last(where: { $0.token.isHeld && $0.path == path && $0.interface.name == interface }) else {
            return .failure(BusError(name: BusError.unknownObject, message: path))
        }
        return object.handler(
            FakeMessage(
                kind: .methodCall, sender: sender, destination: nil, path: path, interface: interface,
                member: member, body: arguments))
    }

    /// Connection `name` leaves the bus: the trackers following it fire.
    func disconnect(_ name: String) {
        for tracker in trackers where tracker.token.isHeld && tracker.name == name { tracker.whenGone() }
    }

    var servedPaths: Set<String> { Set(objects.filter(\.token.isHeld).map(\.path)) }
    var trackedNames: Set<String> { Set(trackers.filter(\.token.isHeld).map(\.name)) }
    var heldMatches: Int { matches.count(where: \.token.isHeld) }

    // MARK: Match rules

    static func parse(_ rule: String) -> [String: String] {
        var fields: [String: String] = [:]
        for part in rule.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            fields[String(pair[0])] = String(pair[1].dropFirst().dropLast())
        }
        return fields
    }

    static func matches(_ rule: [String: String], _ message: FakeMessage) -> Bool {
        let type: String =
            switch message.kind {
            case .signal: "signal"
            case .methodCall: "method_call"
            case .methodReturn: "method_return"
            case .error: "error"
            }
        let first = message.body.first?.string
        for (key, value) in rule {
            let field: String? =
                switch key {
                case "type": type
                case "sender": message.sender
                case "interface": message.interface
                case "member": message.member
                case "path": message.path
                case "arg0": first
                case "arg0namespace": first.flatMap { $0 == value || $0.hasPrefix(value + ".") ? value : $0 }
                default: nil
                }
            if field != value { return false }
        }
        return true
    }
}
