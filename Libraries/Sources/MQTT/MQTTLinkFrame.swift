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
    /// `broker`: the index of the node in the session's configured list.
    case connected(session: String, broker: Int, sessionPresent: Bool)
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

    /// The frame with its length prefix, written in one pass into an array of its size: the
    /// link process writes one of these for every message the broker sends (and the daemon a
    /// `done` for each), where growing the array field by field, copying strings byte by byte
    /// and the body once more behind its prefix cost ~7,800 instructions a message.
    public var encoded: [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(Self.headerBytes + bodyCount)
        // The length's place, written once the body is.
        for _ in 0..<Self.headerBytes { frame.append(0) }
        func string(_ text: String) {
            var text = text
            text.withUTF8 { Self.append(string: $0, to: &frame) }
        }
        func double(_ value: Double) {
            let bits = value.bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        }
        switch self {
        case .open(let session, let configuration):
            frame.append(1); string(session); frame += configuration
        case .subscribe(let session, let topic):
            frame.append(2); string(session); string(topic)
        case .unsubscribe(let session, let topic):
            frame.append(3); string(session); string(topic)
        case .publish(let session, let topic, let payload, let retain):
            frame.append(retain ? 5 : 4); string(session); string(topic); frame += payload
        case .done(let session):
            frame.append(6); string(session)
        case .message(let session, let topic, let payload):
            frame.append(10); string(session); string(topic); frame += payload
        case .connected(let session, let broker, let sessionPresent):
            frame.append(11); string(session); frame.append(UInt8(clamping: broker)); frame.append(sessionPresent ? 1 : 0)
        case .disconnected(let session, let reason, let retryIn):
            frame.append(12); string(session); double(retryIn); string(reason)
        case .takenOver(let session, let retryIn):
            frame.append(13); string(session); double(retryIn)
        case .packetTooLarge(let session, let retryIn, let discardingSession):
            frame.append(14); string(session); double(retryIn); frame.append(discardingSession ? 1 : 0)
        case .subscription(let session, .granted(let topic)):
            frame.append(15); string(session); string(topic)
        case .subscription(let session, .refused(let topic, let code, let retryIn)):
            frame.append(16); string(session); string(topic); frame.append(UInt8(truncatingIfNeeded: code)); double(retryIn)
        }
        Self.writeLength(&frame)
        return frame
    }

    /// `.message(session:topic:payload:).encoded`, written from the bytes where the caller
    /// holds them (libmosquitto's, in the link process): no `String` or array made of the
    /// topic and the payload first, for every message.
    package static func encodedMessage(session: String, topic: UnsafeBufferPointer<UInt8>, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(headerBytes + 1 + 2 + min(session.utf8.count, stringLimit) + 2 + min(topic.count, stringLimit) + payload.count)
        for _ in 0..<headerBytes { frame.append(0) }
        frame.append(10)
        var session = session
        session.withUTF8 { append(string: $0, to: &frame) }
        append(string: topic, to: &frame)
        frame.append(contentsOf: payload)
        writeLength(&frame)
        return frame
    }

    /// A string field: its length in two bytes, then at most that many of its bytes.
    private static func append(string bytes: UnsafeBufferPointer<UInt8>, to frame: inout [UInt8]) {
        let bytes = UnsafeBufferPointer(rebasing: bytes.prefix(stringLimit))
        frame.append(UInt8(bytes.count >> 8))
        frame.append(UInt8(bytes.count & 0xFF))
        frame.append(contentsOf: bytes)
    }

    /// The body's length into the frame's first `headerBytes`, its place.
    private static func writeLength(_ frame: inout [UInt8]) {
        let count = UInt32(frame.count - headerBytes)
        frame[0] = UInt8(count >> 24)
        frame[1] = UInt8((count >> 16) & 0xFF)
        frame[2] = UInt8((count >> 8) & 0xFF)
        frame[3] = UInt8(count & 0xFF)
    }

    /// A string field's bytes at most: its length is two bytes.
    static let stringLimit = Int(UInt16.max)

    /// The body's size as `encoded` writes it, so that it is allocated once.
    private var bodyCount: Int {
        func string(_ text: String) -> Int { 2 + min(text.utf8.count, Self.stringLimit) }
        return switch self {
        case .open(let session, let configuration): 1 + string(session) + configuration.count
        case .subscribe(let session, let topic), .unsubscribe(let session, let topic): 1 + string(session) + string(topic)
        case .publish(let session, let topic, let payload, _), .message(let session, let topic, let payload):
            1 + string(session) + string(topic) + payload.count
        case .done(let session): 1 + string(session)
        case .connected(let session, _, _): 1 + string(session) + 1 + 1
        case .disconnected(let session, let reason, _): 1 + string(session) + 8 + string(reason)
        case .takenOver(let session, _): 1 + string(session) + 8
        case .packetTooLarge(let session, _, _): 1 + string(session) + 8 + 1
        case .subscription(let session, .granted(let topic)): 1 + string(session) + string(topic)
        case .subscription(let session, .refused(let topic, _, _)): 1 + string(session) + string(topic) + 1 + 8
        }
    }

    /// The body's length from a frame's first `headerBytes` bytes.
    public static func length(header: some Collection<UInt8>) -> Int {
        header.prefix(headerBytes).reduce(0) { $0 << 8 | Int($1) }
    }

    /// A frame from its body (the bytes after the length prefix).
    public init(body: [UInt8]) throws(Invalid) {
        self = try body.withUnsafeBytes { bytes in Result { () throws(Invalid) in try MQTTLinkFrame(body: bytes) } }.get()
    }

    /// A frame from its body where it lies: the daemon's loop reads every message's frame
    /// from its socket's buffer, without copying the body into an array of its own first.
    package init(body: UnsafeRawBufferPointer) throws(Invalid) {
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
            return String(decoding: UnsafeRawBufferPointer(rebasing: body[index..<index + count]), as: UTF8.self)
        }
        func double() throws(Invalid) -> Double {
            var bits: UInt64 = 0
            for _ in 0..<8 { bits = bits << 8 | UInt64(try byte()) }
            return Double(bitPattern: bits)
        }
        func rest() -> [UInt8] { Array(UnsafeRawBufferPointer(rebasing: body[index...])) }
        switch try byte() {
        case 1: self = .open(session: try string(), configuration: rest())
        case 2: self = .subscribe(session: try string(), topic: try string())
        case 3: self = .unsubscribe(session: try string(), topic: try string())
        case 4: self = .publish(session: try string(), topic: try string(), payload: rest())
        case 5: self = .publish(session: try string(), topic: try string(), payload: rest(), retain: true)
        case 6: self = .done(session: try string())
        case 10: self = .message(session: try string(), topic: try string(), payload: rest())
        case 11: self = .connected(session: try string(), broker: Int(try byte()), sessionPresent: try byte() != 0)
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

    /// Where the session's name lies in a `done` frame's body (its UTF-8 bytes), read as
    /// `init(body:)` reads it; nil for any other frame or an invalid one. For the link process,
    /// which reads nothing else on the dones' socket, one for every message, and compares the
    /// bytes of one done with the next before it makes a `String` of them.
    static func doneSession(body: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard body.count >= 3, body[0] == 6 else { return nil }
        let count = Int(body[1]) << 8 | Int(body[2])
        guard body.count - 3 >= count else { return nil }
        return 3..<3 + count
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
