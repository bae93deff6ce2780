public import OrderedJSON
public import OrderedCollections

/// A method call as it arrives on the wire.
public struct VarlinkCall: Sendable {
    /// The fully qualified method name, `interface.Method`.
    public var method: String
    /// The parameters as a tree. For a call whose parameters were read straight into the
    /// method's own type (`readParameters`), the tree is made from the frame when asked for:
    /// its handler reads them with `VarlinkRequest.parameters(as:)` and never needs it.
    public var parameters: JSONObject {
        get {
            guard let frame else { return tree }
            // The frame was read in full once already: it is an object with these parameters.
            return (try? JSONParser.parse(frame))?["parameters"]?.objectValue ?? [:]
        }
        set {
            tree = newValue
            frame = nil
            route = nil
            readParameters = nil
        }
    }
    private var tree: JSONObject
    // The optionals below are spelled `Optional<…>`, which gives them no implicit initial
    // nil: with it, every init stored nil in them first and then the value, and the
    // optimizer built the call twice and copied one into the other (six references retained
    // and released again, ~380 instructions per call read).
    /// The frame of a call whose parameters were read without a tree.
    private var frame: Optional<[UInt8]>
    /// The method of a call read from its text, found as it was read.
    package private(set) var route: Optional<VarlinkRoute>
    /// The parameters as the method's `VarlinkReadableParameters` read them from the frame.
    @usableFromInline package private(set) var readParameters: Optional<VarlinkReadParameters>
    /// The caller accepts several replies, each but the last with `continues`.
    public var more: Bool
    /// The caller wants no reply at all.
    public var oneway: Bool
    /// The caller asks to leave Varlink for another protocol after the reply.
    public var upgrade: Bool

    public init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.tree = parameters
        self.frame = nil
        self.route = nil
        self.readParameters = nil
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// A call to `route` whose parameters its reader has read from `frame`.
    init(route: VarlinkRoute, readParameters: VarlinkReadParameters, frame: [UInt8], more: Bool, oneway: Bool, upgrade: Bool) {
        method = route.method
        tree = [:]
        self.frame = frame
        self.route = route
        self.readParameters = readParameters
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

    /// Decodes one frame (without its NUL) into a tree. Flags other than the three of the spec
    /// are ignored.
    public init(frame: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(VarlinkMessageError) {
        let json: JSON
        do {
            json = try JSONParser.parse(frame, maximumDepth: maximumDepth)
        } catch {
            throw VarlinkMessageError(reason: "invalid JSON: \(error)")
        }
        guard case .object(let message) = json else { throw VarlinkMessageError(reason: "the message is not a JSON object") }
        guard case .string(let method)? = message["method"] else {
            throw VarlinkMessageError(reason: "the message has no \"method\" string")
        }
        self.method = method
        (self.frame, self.route, self.readParameters) = (nil, nil, nil)
        switch message["parameters"] {
        case nil, .null?: self.tree = [:]
        case .object(let p)?: self.tree = p
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
        let parameters = parameters
        if !parameters.isEmpty { message["parameters"] = .object(parameters) }
        if more { message["more"] = true }
        if oneway { message["oneway"] = true }
        if upgrade { message["upgrade"] = true }
        return JSON.object(message).serialized()
    }
}
