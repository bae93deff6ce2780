/// A type in the Varlink interface definition language.
public indirect enum VarlinkType: Sendable, Hashable {
    case bool, int, float, string
    /// Any JSON object (`object`).
    case object
    /// A reference to a `type` declared in the same interface.
    case named(String)
    case `enum`([String])
    case `struct`([VarlinkField])
    /// `[]T`
    case array(VarlinkType)
    /// `[string]T`; a set is `[string]()`, a map to empty structs.
    case dictionary(VarlinkType)
    /// `?T`: the value may be null or absent.
    case nullable(VarlinkType)
}

public struct VarlinkField: Sendable, Hashable {
    public var name: String
    public var type: VarlinkType

    public init(_ name: String, _ type: VarlinkType) {
        self.name = name
        self.type = type
    }
}

public struct VarlinkMethodSignature: Sendable, Hashable {
    public var name: String
    public var input: [VarlinkField]
    public var output: [VarlinkField]
}

/// A parsed interface. `description` keeps the exact source text, which is what
/// `org.varlink.service.GetInterfaceDescription` serves.
public struct VarlinkInterface: Sendable {
    public var name: String
    public var types: [String: VarlinkType]
    public var methods: [String: VarlinkMethodSignature]
    public var errors: [String: [VarlinkField]]
    public var description: String

    /// Parses and checks an interface: the grammar of varlink.org, plus what the grammar
    /// alone lets through (duplicate members or fields, references to undeclared types).
    public init(parsing text: String) throws(VarlinkIDLError) {
        var parser = VarlinkIDLParser(text)
        self = try parser.parseInterface()
    }

    init(
        name: String, types: [String: VarlinkType], methods: [String: VarlinkMethodSignature],
        errors: [String: [VarlinkField]], description: String
    ) {
        self.name = name
        self.types = types
        self.methods = methods
        self.errors = errors
        self.description = description
    }
}

public struct VarlinkIDLError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int

    public var description: String { "\(line):\(column): \(message)" }
}
