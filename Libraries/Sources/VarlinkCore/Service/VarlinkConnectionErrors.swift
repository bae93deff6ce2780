import OrderedJSON
import OrderedCollections

/// What a server tells a peer before it ends or refuses its connection for a reason of the
/// connection's own rather than of a call. The conditions are the transport's; the errors
/// that name them belong to the service, which serves the interface declaring them like its
/// others. Each condition is the error of its name (`MessageTooLarge`, `InvalidMessage`,
/// `TooManyConnections`, `ShuttingDown`) in that interface; a condition the interface does
/// not declare ends the connection without a word.
public struct VarlinkConnectionErrors: Sendable {
    public enum Condition: Sendable, Hashable {
        /// A message grew past the server's limit (in bytes, NUL excluded) before its end.
        case messageTooLarge(limit: Int)
        /// A message that is not a Varlink call: not UTF-8, not JSON, not an object, or a
        /// `method` that is missing or not a string.
        case invalidMessage(reason: String)
        /// The server already serves as many connections as it allows, in total or for the
        /// connecting user.
        case tooManyConnections(limit: Int, scope: ConnectionLimitScope)
        /// The server is shutting down: calls not yet started, and streams, end with this.
        case shuttingDown
    }

    public enum ConnectionLimitScope: String, Sendable { case total, user }

    /// The interface declaring the errors; nil when there are none.
    public let interface: VarlinkInterface?
    /// The full names of the errors `interface` declares, by the name of their condition.
    private let names: [String: String]

    /// Each condition as the error of its name that `interface` declares, with the parameters
    /// `MessageTooLarge (limit: int)`, `InvalidMessage (reason: string)`,
    /// `TooManyConnections (limit: int, scope: (total, user))` and `ShuttingDown ()`.
    public init(declaredBy interface: VarlinkInterface) {
        var names: [String: String] = [:]
        for condition in Self.everyKind {
            guard let fields = interface.errors[condition.errorName] else { continue }
            let mismatch = interface.firstInvalidField(in: condition.parameters, of: fields)
            precondition(mismatch == nil, "\(interface.name).\(condition.errorName) does not declare '\(mismatch ?? "")' as \(condition) sends it")
            names[condition.errorName] = interface.name + "." + condition.errorName
        }
        self.interface = interface
        self.names = names
    }

    private init() {
        self.interface = nil
        self.names = [:]
    }

    /// No errors: every condition ends the connection without a word.
    public static let silent = VarlinkConnectionErrors()

    /// The error that tells the peer of `condition`, or nil when it is told nothing.
    public func error(for condition: Condition) -> VarlinkError? {
        names[condition.errorName].map { VarlinkError($0, condition.parameters) }
    }

    /// One of each condition, and of each value that changes what its error carries.
    private static let everyKind: [Condition] = [
        .messageTooLarge(limit: 0), .invalidMessage(reason: ""),
        .tooManyConnections(limit: 0, scope: .total), .tooManyConnections(limit: 0, scope: .user), .shuttingDown,
    ]
}

extension VarlinkConnectionErrors.Condition {
    var errorName: String {
        switch self {
        case .messageTooLarge: "MessageTooLarge"
        case .invalidMessage: "InvalidMessage"
        case .tooManyConnections: "TooManyConnections"
        case .shuttingDown: "ShuttingDown"
        }
    }

    var parameters: JSONObject {
        switch self {
        case .messageTooLarge(let limit): ["limit": .int(limit)]
        case .invalidMessage(let reason): ["reason": .string(reason)]
        case .tooManyConnections(let limit, let scope): ["limit": .int(limit), "scope": .string(scope.rawValue)]
        case .shuttingDown: [:]
        }
    }
}
