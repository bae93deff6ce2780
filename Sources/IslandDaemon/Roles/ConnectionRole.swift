/// What a connection is to the daemon. It is bound by the connection's first call to one of
/// the role interfaces and never changes (docs/design.md §4).
enum ConnectionRole: Sendable, Equatable {
    case producer(app: String)
    case extensionOf(app: String)
    case presenter(uid: UInt32)
    case admin

    var name: String {
        switch self {
        case .producer: "producer"
        case .extensionOf: "extension"
        case .presenter: "presenter"
        case .admin: "admin"
        }
    }

    var app: String? {
        switch self {
        case .producer(let app), .extensionOf(let app): app
        case .presenter, .admin: nil
        }
    }
}

/// The role a connection asks for with a call: which interface, and the app it claims.
enum RoleRequest: Sendable {
    case producer(claim: String?)
    case extensionOf(claim: String?)
    case presenter
    case admin

    var name: String {
        switch self {
        case .producer: "producer"
        case .extensionOf: "extension"
        case .presenter: "presenter"
        case .admin: "admin"
        }
    }

    func matches(_ role: ConnectionRole) -> Bool {
        switch (self, role) {
        case (.producer(let claim), .producer(let app)), (.extensionOf(let claim), .extensionOf(let app)):
            return claim == nil || claim == app
        case (.presenter, .presenter), (.admin, .admin): return true
        default: return false
        }
    }
}
