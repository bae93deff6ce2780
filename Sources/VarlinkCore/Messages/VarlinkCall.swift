public import IslandJSON
public import OrderedCollections

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
