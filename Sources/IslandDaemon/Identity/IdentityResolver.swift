import Systemd
import Varlink

/// Decides which app a connection acts for, from what the kernel says about the peer and
/// what it claims (DESIGN.md §4). A flatpak sandbox identity cannot be overridden; in the
/// user scope, where every client already runs as the user, a claimed app with a manifest
/// is accepted; in the system scope only verified identities count.
public struct IdentityResolver: Sendable {
    public var scope: DaemonScope
    public var registry: AppRegistry
    /// Looks up facts about a pid; replaceable in tests.
    public var lookup: ProcessLookup

    public struct ProcessLookup: Sendable {
        public var flatpakAppID: @Sendable (Int32) -> String?
        public var systemdUnit: @Sendable (Int32) -> String?
        public var executable: @Sendable (Int32) -> String?

        public init(flatpakAppID: @escaping @Sendable (Int32) -> String?, systemdUnit: @escaping @Sendable (Int32) -> String?,
                    executable: @escaping @Sendable (Int32) -> String?) {
            self.flatpakAppID = flatpakAppID
            self.systemdUnit = systemdUnit
            self.executable = executable
        }

        public static let live = ProcessLookup(
            flatpakAppID: { ProcessIdentity.flatpakAppID(pid: $0) },
            systemdUnit: { ProcessIdentity.systemdUnit(pid: $0) },
            executable: { ProcessIdentity.executablePath(pid: $0) })
    }

    public enum Refusal: Error, Equatable {
        /// No identity could be established; the reason says what was tried.
        case unidentified(app: String, reason: String)
        /// The peer claimed an app it verifiably is not.
        case impersonation(claimed: String, actual: String)
    }

    public init(scope: DaemonScope, registry: AppRegistry, lookup: ProcessLookup = .live) {
        self.scope = scope
        self.registry = registry
        self.lookup = lookup
    }

    public func resolve(peer: PeerCredentials?, claim: String?) -> Result<String, Refusal> {
        let pid = peer?.pid ?? 0
        if pid > 0, let flatpak = lookup.flatpakAppID(pid) {
            if let claim, claim != flatpak { return .failure(.impersonation(claimed: claim, actual: flatpak)) }
            return .success(flatpak)
        }
        if let claim, scope == .user {
            guard registry.manifest(for: claim) != nil else {
                return .failure(.unidentified(app: claim, reason: "no desktop entry \(claim).desktop in the XDG data directories"))
            }
            return .success(claim)
        }
        if let verified = verifiedIdentity(pid: pid) {
            // In the system scope a claim is only ever a repetition of the verified identity:
            // clients that always name their app keep working, and no one becomes another app.
            if let claim, claim != verified { return .failure(.impersonation(claimed: claim, actual: verified)) }
            return .success(verified)
        }
        if let claim {
            return .failure(.unidentified(app: claim, reason: "the system scope accepts no claimed identity; run the app as its own systemd unit or flatpak"))
        }
        return .failure(.unidentified(app: "", reason: "no flatpak id, app unit or known executable identifies the caller; pass the app id"))
    }

    /// The app of the caller's systemd unit, or else of its executable.
    private func verifiedIdentity(pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        if let unit = lookup.systemdUnit(pid), let app = ProcessIdentity.appID(fromUnit: unit) { return app }
        if let executable = lookup.executable(pid), let app = registry.app(forExecutable: executable) { return app }
        return nil
    }
}
