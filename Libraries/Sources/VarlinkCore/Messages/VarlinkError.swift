public import OrderedJSON
public import OrderedCollections

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

    // org.varlink.service: the errors every service may send.
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
    /// The same, saying what the interface expects there (an addition to the standard
    /// error's `parameter`, which clients that do not know it ignore).
    public static func invalidParameter(_ parameter: some StringProtocol, expected: String) -> VarlinkError {
        VarlinkError("org.varlink.service.InvalidParameter", ["parameter": .string(String(parameter)), "expected": .string(expected)])
    }
    public static let permissionDenied = VarlinkError("org.varlink.service.PermissionDenied")
    public static let expectedMore = VarlinkError("org.varlink.service.ExpectedMore")
}
