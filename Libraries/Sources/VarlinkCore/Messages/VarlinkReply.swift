public import OrderedJSON
public import OrderedCollections

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
            case .encoded(let encoded): return (try? JSONParser.parse(encoded.bytes))?.objectValue ?? [:]
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
        case .encoded(let encoded): out.append(contentsOf: encoded.bytes)
        }
        if continues { out.append(contentsOf: #","continues":true"#.utf8) }
        out.append(UInt8(ascii: "}"))
    }
}
