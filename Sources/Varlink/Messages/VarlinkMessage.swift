import IslandJSON
import NIOCore

/// A method call as it arrives on the wire.
public struct VarlinkCall: Sendable {
    /// The fully qualified method name, `interface.Method`.
    public var method: String
    public var parameters: JSONObject
    /// The caller accepts several replies, each but the last with `continues`.
    public var more: Bool
    /// The caller wants no reply at all.
    public var oneway: Bool
    /// The caller asks to leave Varlink for another protocol after the reply.
    public var upgrade: Bool
    /// The text of the member of the parameters that the service names
    /// (`VarlinkService.canonicalTextPath`), when the caller wrote it exactly as
    /// `JSON.serialized()` would: its receiver need not write it again. `parameters` then
    /// holds an empty value of its kind in its place; its tree is made from this text, if at all.
    public var canonicalText: [UInt8]?

    public init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of `method`: everything before the last dot.
    public var interfaceName: Substring {
        guard let dot = lastDot else { return "" }
        return method[..<dot]
    }

    /// The member part of `method`: everything after the last dot.
    public var methodName: Substring {
        guard let dot = lastDot else { return Substring(method) }
        return method[method.utf8.index(after: dot)...]
    }

    /// Searched for as a byte: as a `Character` it costs grapheme breaking, on every call.
    private var lastDot: String.Index? { method.utf8.lastIndex(of: UInt8(ascii: ".")) }

    /// Decodes one frame (without its NUL). Flags other than the three of the spec are ignored.
    /// `canonicalTextAt`: a path from the top of the message (`parameters` first) whose text
    /// to keep in `canonicalText`.
    public init(frame: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth,
                canonicalTextAt path: [String] = []) throws(VarlinkMessageError) {
        let json: JSON
        do {
            (json, canonicalText) = try JSONParser.parse(frame, maximumDepth: maximumDepth, canonicalTextAt: path)
        } catch {
            throw VarlinkMessageError(reason: "invalid JSON: \(error)")
        }
        guard case .object(let message) = json else { throw VarlinkMessageError(reason: "the message is not a JSON object") }
        guard case .string(let method)? = message["method"] else {
            throw VarlinkMessageError(reason: "the message has no \"method\" string")
        }
        self.method = method
        switch message["parameters"] {
        case nil, .null?: self.parameters = [:]
        case .object(let p)?: self.parameters = p
        default: throw VarlinkMessageError(reason: "\"parameters\" is not an object")
        }
        func flag(_ name: String) throws(VarlinkMessageError) -> Bool {
            switch message[name] {
            case nil, .null?: return false
            case .bool(let b)?: return b
            default: throw VarlinkMessageError(reason: "\"\(name)\" is not a boolean")
            }
        }
        self.more = try flag("more")
        self.oneway = try flag("oneway")
        self.upgrade = try flag("upgrade")
    }

    /// The wire form, without the terminating NUL. Flags that are false are left out, as
    /// the reference implementations do.
    public func encoded() -> [UInt8] {
        var message: JSONObject = ["method": .string(method)]
        if !parameters.isEmpty { message["parameters"] = .object(parameters) }
        if more { message["more"] = true }
        if oneway { message["oneway"] = true }
        if upgrade { message["upgrade"] = true }
        return JSON.object(message).serialized()
    }
}

/// Reply parameters already serialized: a stream that sends the same update to many peers
/// encodes it once. A small one is copied into each peer's output with the replies around
/// it; a large one (`sharedSizeThreshold`) is written to every peer's socket from this same
/// buffer — with many presenters, one copy of a large update in memory instead of one each.
public struct VarlinkEncodedParameters: Sendable {
    /// The bytes of one JSON object.
    public let buffer: ByteBuffer

    public init(_ parameters: JSONObject) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        JSON.writeObject(parameters, to: &bytes)
        self.buffer = ByteBuffer(bytes: bytes)
    }

    /// Parameters written as text; `text` must hold one JSON object.
    public init(_ text: JSONText) {
        self.buffer = ByteBuffer(bytes: text.bytes)
    }

    /// Replies this large go out from the shared buffer itself, between a head and a tail,
    /// rather than copied into each connection's output: a snapshot of many activities for
    /// many presenters stays one copy in memory.
    static let sharedSizeThreshold = 4096
}

/// A reply: parameters, or a named error with parameters.
public struct VarlinkReply: Sendable {
    private enum Body: Sendable {
        case object(JSONObject)
        case encoded(VarlinkEncodedParameters)
    }

    private var body: Body
    public var continues: Bool
    /// The error name, for an error reply.
    public var error: String?

    public var parameters: JSONObject {
        get {
            switch body {
            case .object(let parameters): return parameters
            case .encoded(let encoded): return (try? JSONParser.parse(encoded.buffer.readableBytesView))?.objectValue ?? [:]
            }
        }
        set { body = .object(newValue) }
    }

    public init(parameters: JSONObject = [:], continues: Bool = false, error: String? = nil) {
        self.body = .object(parameters)
        self.continues = continues
        self.error = error
    }

    /// The pre-encoded parameters of a successful reply, if that is what it carries.
    public var encodedParameters: VarlinkEncodedParameters? {
        if case .encoded(let encoded) = body { encoded } else { nil }
    }

    public init(encoded parameters: VarlinkEncodedParameters, continues: Bool = false) {
        self.body = .encoded(parameters)
        self.continues = continues
        self.error = nil
    }

    public init(error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    public init(frame: some Collection<UInt8>) throws(VarlinkMessageError) {
        let json: JSON
        do {
            json = try JSONParser.parse(frame)
        } catch {
            throw VarlinkMessageError(reason: "invalid JSON: \(error)")
        }
        guard case .object(let message) = json else { throw VarlinkMessageError(reason: "the reply is not a JSON object") }
        switch message["parameters"] {
        case nil, .null?: self.body = .object([:])
        case .object(let p)?: self.body = .object(p)
        default: throw VarlinkMessageError(reason: "\"parameters\" is not an object")
        }
        switch message["continues"] {
        case nil, .null?: self.continues = false
        case .bool(let b)?: self.continues = b
        default: throw VarlinkMessageError(reason: "\"continues\" is not a boolean")
        }
        switch message["error"] {
        case nil, .null?: self.error = nil
        case .string(let e)?: self.error = e
        default: throw VarlinkMessageError(reason: "\"error\" is not a string")
        }
    }

    /// The wire form, without the terminating NUL.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if let error {
            out.append(contentsOf: #""error":"#.utf8)
            JSON.writeString(error, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""parameters":"#.utf8)
        switch body {
        case .object(let parameters): JSON.writeObject(parameters, to: &out)
        case .encoded(let encoded): out.append(contentsOf: encoded.buffer.readableBytesView)
        }
        if continues { out.append(contentsOf: #","continues":true"#.utf8) }
        out.append(UInt8(ascii: "}"))
    }
}

/// A frame that is not a valid Varlink message.
public struct VarlinkMessageError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// A named Varlink error: what a method handler throws to refuse a call, and what a
/// client receives for an error reply.
public struct VarlinkError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var parameters: JSONObject

    public init(_ name: String, _ parameters: JSONObject = [:]) {
        self.name = name
        self.parameters = parameters
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSON.object(parameters))"
    }

    // org.varlink.service
    public static func interfaceNotFound(_ interface: some StringProtocol) -> VarlinkError {
        VarlinkError("org.varlink.service.InterfaceNotFound", ["interface": .string(String(interface))])
    }
    public static func methodNotFound(_ method: some StringProtocol) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotFound", ["method": .string(String(method))])
    }
    public static func methodNotImplemented(_ method: some StringProtocol) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotImplemented", ["method": .string(String(method))])
    }
    public static func invalidParameter(_ parameter: some StringProtocol) -> VarlinkError {
        VarlinkError("org.varlink.service.InvalidParameter", ["parameter": .string(String(parameter))])
    }
    public static let permissionDenied = VarlinkError("org.varlink.service.PermissionDenied")
    public static let expectedMore = VarlinkError("org.varlink.service.ExpectedMore")

    // org.island.Connection
    public static func messageTooLarge(limit: Int) -> VarlinkError {
        VarlinkError("org.island.Connection.MessageTooLarge", ["limit": .int(limit)])
    }
    public static func invalidMessage(_ reason: String) -> VarlinkError {
        VarlinkError("org.island.Connection.InvalidMessage", ["reason": .string(reason)])
    }
    public enum ConnectionLimitScope: String, Sendable { case total, user }
    public static func tooManyConnections(limit: Int, scope: ConnectionLimitScope) -> VarlinkError {
        VarlinkError("org.island.Connection.TooManyConnections", ["limit": .int(limit), "scope": .string(scope.rawValue)])
    }
    public static let shuttingDown = VarlinkError("org.island.Connection.ShuttingDown")
    public static func outputQueueFull(limit: Int) -> VarlinkError {
        VarlinkError("org.island.Connection.OutputQueueFull", ["limit": .int(limit)])
    }
}
