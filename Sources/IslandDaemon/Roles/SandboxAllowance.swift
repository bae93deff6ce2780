import IslandCore
import Synchronization

/// The apps the user lets present or administer from inside a sandbox (`SandboxedPresenters=`,
/// `SandboxedAdmins=` in `[Daemon]`); replaced when the configuration is reloaded.
final class SandboxAllowance: Sendable {
    private let settings: Mutex<(presenters: Set<String>, admins: Set<String>)>

    init(_ settings: DaemonSettings = DaemonSettings()) {
        self.settings = Mutex((settings.sandboxedPresenters, settings.sandboxedAdmins))
    }

    func update(_ settings: DaemonSettings) {
        self.settings.withLock { $0 = (settings.sandboxedPresenters, settings.sandboxedAdmins) }
    }

    /// Whether `app`, sandboxed, may take `role` (the presenter or the admin role).
    func allows(_ app: String, as role: RoleRequest) -> Bool {
        settings.withLock { allowed in
            switch role {
            case .presenter: allowed.presenters.contains(app)
            case .admin: allowed.admins.contains(app)
            case .producer, .extensionOf: false
            }
        }
    }

    /// The configuration key that allows `role`.
    static func key(for role: RoleRequest) -> String {
        if case .admin = role { return "SandboxedAdmins" }
        return "SandboxedPresenters"
    }
}
