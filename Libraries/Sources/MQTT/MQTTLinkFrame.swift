/// One MQTT session, whichever process its libmosquitto client runs in: `MQTTClient` in this
/// one, `MQTTLinkProcess.Session` in a link process of its own (`MQTTLinkChild`).
public protocol MQTTSession: AnyObject, Sendable {
    /// Connects, and keeps connecting, until `shutdown()`.
    func start()
    func shutdown(timeout: Duration) async
    /// QoS 1, now if connected and on every later connection.
    func subscribe(_ topic: String) throws(MQTTError)
    func unsubscribe(_ topic: String) throws(MQTTError)
    /// Never waits: refused while disconnected or while the backlog is full.
    func publish(_ topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError)
    var isConnected: Bool { get }
    var clientID: String { get }
    var broker: MQTTBrokerAddress { get }
}

/// What the daemon and its link process (`MQTTLinkChild`) say to each other over their
/// socket pair: a 4-byte big-endian length, then that many bytes — a tag and the frame's
/// fields. Every frame names its session (the client id). Pure: bytes in, bytes out.
///
/// The reader bounds every frame before it allocates it (`MQTTLinkFrame.read`): the daemon
/// takes at most a push's largest packet and its topic, whatever the link process (and so
/// whatever the broker) sends.
public enum MQTTLinkFrame: Sendable, Hashable {
    // The daemon to the link process.
    /// Opens a session with this configuration (JSON), or replaces a closed one's.
    case open(session: String, configuration: [UInt8])
    case subscribe(session: String, topic: String)
    case unsubscribe(session: String, topic: String)
    /// `retain`: the broker keeps it for whoever subscribes later.
    case publish(session: String, topic: String, payload: [UInt8], retain: Bool = false)
    /// One message of the session is done: its slot in the link process's window is free.
    case done(session: String)
    // The link process to the daemon.
    case message(session: String, topic: String, payload: [UInt8])
    case connected(session: String, sessionPresent: Bool)
    case disconnected(session: String, reason: String, retryIn: Double)
    case takenOver(session: String, retryIn: Double)
    case packetTooLarge(session: String, retryIn: Double, discardingSession: Bool)
    /// The broker's answer to a subscription of the session (`MQTTSubscriptionEvent`).
    case subscription(session: String, event: MQTTSubscriptionEvent)

    /// Why bytes are no frame.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { "invalid link frame: \(reason)" }
    }

    /// Bytes of the length prefix.
    public static let headerBytes = 4

    /// The frame with its length prefix.
    public var encoded: [UInt8] {
        var body: [UInt8] = []
        func string(_ text: String) {
            let bytes = Array(text.utf8.prefix(Int(UInt16.max)))
            body.append(UInt8(bytes.count >> 8))
            body.append(UInt8(bytes.count & 0xFF))
            body += bytes
        }
        func double(_ value: Double) {
            let bits = value.bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        }
        switch self {
        case .open(let session, let configuration):
            body.append(1); string(session); body += configuration
        case .subscribe(let session, let topic):
            body.append(2); string(session); string(topic)
        case .unsubscribe(let session, let topic):
            body.append(3); string(session); string(topic)
        case .publish(let session, let topic, let payload, let retain):
            body.append(retain ? 5 : 4); string(session); string(topic); body += payload
        case .done(let session):
            body.append(6); string(session)
        case .message(let session, let topic, let payload):
            body.append(10); string(session); string(topic); body += payload
        case .connected(let session, let sessionPresent):
            body.append(11); string(session); body.append(sessionPresent ? 1 : 0)
        case .disconnected(let session, let reason, let retryIn):
            body.append(12); string(session); double(retryIn); string(reason)
        case .takenOver(let session, let retryIn):
            body.append(13); string(session); double(retryIn)
        case .packetTooLarge(let session, let retryIn, let discardingSession):
            body.append(14); string(session); double(retryIn); body.append(discardingSession ? 1 : 0)
        case .subscription(let session, .granted(let topic)):
            body.append(15); string(session); string(topic)
        case .subscription(let session, .refused(let topic, let code, let retryIn)):
            body.append(16); string(session); string(topic); body.append(UInt8(truncatingIfNeeded: code)); double(retryIn)
        }
        let count = UInt32(body.count)
        return [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)] + body
    }

    /// The body's length from a frame's first `headerBytes` bytes.
    public static func length(header: some Collection<UInt8>) -> Int {
        header.prefix(headerBytes).reduce(0) { $0 << 8 | Int($1) }
    }

    /// A frame from its body (the bytes after the length prefix).
    public init(body: [UInt8]) throws(Invalid) {
        var index = 0
        func byte() throws(Invalid) -> UInt8 {
            guard index < body.count else { throw Invalid(reason: "truncated") }
            defer { index += 1 }
            return body[index]
        }
        func string() throws(Invalid) -> String {
            let count = Int(try byte()) << 8 | Int(try byte())
            guard body.count - index >= count else { throw Invalid(reason: "truncated string") }
            defer { index += count }
            return String(decoding: body[index..<index + count], as: UTF8.self)
        }
        func double() throws(Invalid) -> Double {
            var bits: UInt64 = 0
            for _ in 0..<8 { bits = bits << 8 | UInt64(try byte()) }
            return Double(bitPattern: bits)
        }
        func rest() -> [UInt8] { Array(body[index...]) }
        switch try byte() {
        case 1: self = .open(session: try string(), configuration: rest())
        case 2: self = .subscribe(session: try string(), topic: try string())
        case 3: self = .unsubscribe(session: try string(), topic: try string())
        case 4: self = .publish(session: try string(), topic: try string(), payload: rest())
        case 5: self = .publish(session: try string(), topic: try string(), payload: rest(), retain: true)
        case 6: self = .done(session: try string())
        case 10: self = .message(session: try string(), topic: try string(), payload: rest())
        case 11: self = .connected(session: try string(), sessionPresent: try byte() != 0)
        case 12:
            let session = try string()
            let retryIn = try double()
            self = .disconnected(session: session, reason: try string(), retryIn: retryIn)
        case 13: self = .takenOver(session: try string(), retryIn: try double())
        case 14:
            let session = try string()
            let retryIn = try double()
            self = .packetTooLarge(session: session, retryIn: retryIn, discardingSession: try byte() != 0)
        case 15: self = .subscription(session: try string(), event: .granted(topic: try string()))
        case 16:
            let session = try string()
            let topic = try string()
            let code = Int(try byte())
            self = .subscription(session: session, event: .refused(topic: topic, code: code, retryIn: try double()))
        case let tag: throw Invalid(reason: "unknown tag \(tag)")
        }
    }

    /// Reads one frame through `read` (which fills the buffer it is given, whole, or returns
    /// false at the end of the stream); nil at the end of the stream before a frame. A frame
    /// whose body is longer than `limit` is refused before its body is read or allocated.
    public static func read(limit: Int, _ read: (UnsafeMutableRawBufferPointer) -> Bool) throws(Invalid) -> MQTTLinkFrame? {
        var header = [UInt8](repeating: 0, count: headerBytes)
        guard header.withUnsafeMutableBytes({ read($0) }) else { return nil }
        let count = length(header: header)
        guard count <= limit else { throw Invalid(reason: "a frame of \(count) bytes, over the limit of \(limit)") }
        guard count > 0 else { throw Invalid(reason: "an empty frame") }
        var body = [UInt8](repeating: 0, count: count)
        guard body.withUnsafeMutableBytes({ read($0) }) else { throw Invalid(reason: "the stream ended within a frame") }
        return try MQTTLinkFrame(body: body)
    }
}
