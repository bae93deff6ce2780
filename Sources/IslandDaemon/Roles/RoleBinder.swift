#if canImport(Glibc)
import Glibc
#endif
import OrderedJSON
import OrderedCollections
import Systemd
import VarlinkCore
import IslandProtocol

/// Binds each connection to one role on its first role call and checks every later call
/// against it; decides who may be a presenter or an admin.
struct RoleBinder: Sendable {
    let scope: DaemonScope
    let resolver: @Sendable () -> IdentityResolver
    /// The uid the daemon runs as: in the user scope, only it may administer.
    let daemonUID: UInt32 = getuid()
    /// Members of the `island` group may present in the system scope.
    let presenterGroup: UInt32?
    /// The sandboxed apps the user lets present or administer.
    let sandboxAllowance: SandboxAllowance

    /// The connection's role for this call, binding it if this is its first role call.
    func bind(_ request: RoleRequest, connection: VarlinkConnectionContext) throws(VarlinkError) -> ConnectionRole {
        if let bound = connection.attachment(ConnectionRole.self) {
            guard request.matches(bound) else {
                let reason: String
                if bound.name == request.name {
                    reason = "this connection acts for \(bound.app ?? "another app"); open another connection for another app"
                } else {
                    reason =
                        "this connection is \(Self.article(bound.name)) \(bound.name); open another connection to act as \(Self.article(request.name)) \(request.name)"
                }
                throw permissionDenied(request.name, reason)
            }
            return bound
        }
        let role = try authorize(request, peer: connection.peer)
        let stored = connection.attachIfAbsent(role)
        guard stored == role else { return try bind(request, connection: connection) }
        return role
    }

    /// Whether the peer could act as a presenter or an admin: the connections the server
    /// keeps beyond its limits are for those only, so no app can lock them out.
    func mayPresentOrAdminister(_ peer: PeerCredentials) -> Bool {
        (try? authorize(.presenter, peer: peer)) != nil || (try? authorize(.admin, peer: peer)) != nil
    }

    private func authorize(_ request: RoleRequest, peer: PeerCredentials?) throws(VarlinkError) -> ConnectionRole {
        switch request {
        case .producer(let claim):
            return .producer(app: try identify(peer: peer, claim: claim, role: "producer"))
        case .extensionOf(let claim):
            return .extensionOf(app: try identify(peer: peer, claim: claim, role: "extension"))
        case .presenter:
            guard let peer else { throw permissionDenied("presenter", "the caller's credentials are unknown") }
            if scope == .user {
                guard peer.uid == daemonUID else { throw permissionDenied("presenter", "only uid \(daemonUID) may present this user's island") }
            } else if !(peer.uid == 0 || isInPresenterGroup(peer) || UserAccess.hasActiveLocalSession(uid: peer.uid)) {
                throw permissionDenied("presenter", "presenting the system island needs root, the island group, or an active local session")
            }
            try admitSandboxed(request, peer: peer)
            return .presenter(uid: peer.uid)
        case .admin:
            let allowed = scope == .user ? peer?.uid == daemonUID || peer?.uid == 0 : peer?.uid == 0
            guard allowed else {
                throw permissionDenied(
                    "admin", scope == .user ? "only uid \(daemonUID) may administer this daemon" : "administering the system daemon needs root")
            }
            try admitSandboxed(request, peer: peer)
            return .admin
        }
    }

    /// A presenter reads every app's activities and presses their buttons; an admin turns
    /// apps off and reloads the daemon. A sandboxed app running as the user must get
    /// neither from its uid alone (docs/design.md §4, "Sandboxed peers"): only the user's
    /// configuration names the ones that may. A sandbox that cannot be ruled out counts.
    private func admitSandboxed(_ request: RoleRequest, peer: PeerCredentials?) throws(VarlinkError) {
        let sandbox = resolver().sandbox(of: peer)
        if sandbox == .none { return }
        // Only a Flatpak names its app; a forged .flatpak-info cannot gain anything here, as
        // whoever could write one was not confined in the first place.
        if case .flatpak(let app?, _) = sandbox, sandboxAllowance.allows(app, as: request) { return }
        let key = SandboxAllowance.key(for: request)
        let remedy: String
        if case .flatpak(let app?, _) = sandbox {
            remedy = "the user can allow it with \(key)=\(app) in [Daemon] of islandd.conf"
        } else {
            remedy = "only Flatpak apps can be allowed (\(key)= in [Daemon] of islandd.conf)"
        }
        throw permissionDenied(
            request.name, "the caller runs in \(sandbox.summary), and sandboxed apps may not act as \(Self.article(request.name)) \(request.name); \(remedy)")
    }

    /// Why producer `app`, connected as `peer`, may not head its activities with another app
    /// (`Request`'s `sourceApp`); nil when it may. Speaking for other apps is a privilege, not an
    /// opt-in: every heading it sets is one the daemon shows as that app's own. So it takes
    /// * `X-Island-SourceApps=true` in the producer's own desktop entry, which only whoever
    ///   installs entries where the daemon reads them can write (root, in the system scope);
    /// * a producer outside any sandbox: a Flatpak's or a Snap's entry is its author's to write;
    /// * a producer the daemon recognises from the kernel's facts (its app unit, or its
    ///   executable, named by that entry) rather than from its claim, which in the user scope
    ///   any unconfined process could make.
    /// In the system scope an activity is shown only to its producer's own user (and a system
    /// service's, which root runs, to all): an entitled producer another user runs heads none
    /// of the cards this user sees.
    func sourceAppRefusal(app: String, peer: PeerCredentials?) -> String? {
        let resolver = resolver()
        guard resolver.registry.manifest(for: app)?.speaksForOtherApps == true else {
            return "\(app) speaks only for itself: its desktop entry does not declare X-Island-SourceApps=true"
        }
        let sandbox = resolver.sandbox(of: peer)
        guard sandbox == .none else {
            return "the caller runs in \(sandbox.summary), and a sandboxed app may not speak for other apps"
        }
        switch resolver.resolve(peer: peer, claim: nil) {
        case .success(app):
            return nil
        case .success(let other):
            return "the caller is recognised as \(other), not \(app), by its app unit or executable; it may not speak for other apps as \(app)"
        case .failure:
            return """
                the caller is \(app) only by its own claim; only a producer the daemon recognises by its app unit or by the \
                executable its desktop entry names may speak for other apps
                """
        }
    }

    /// Whether `peer` runs in a sandbox (a sandbox that cannot be ruled out counts), for the
    /// pictures presenters may read for its activities (`LayoutCache.picturesAllowed`). As for
    /// its identity, a peer without a process (a client in memory) is in none.
    func isSandboxed(_ peer: PeerCredentials?) -> Bool {
        guard let peer, peer.pid > 0 else { return false }
        return resolver().sandbox(of: peer) != .none
    }

    static func article(_ noun: String) -> String {
        noun.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }

    private func isInPresenterGroup(_ peer: PeerCredentials) -> Bool {
        guard let presenterGroup else { return false }
        return peer.gid == presenterGroup || UserAccess.isMember(uid: peer.uid, ofGroup: presenterGroup)
    }

    private func identify(peer: PeerCredentials?, claim: String?, role: String) throws(VarlinkError) -> String {
        switch resolver().resolve(peer: peer, claim: claim) {
        case .success(let app): return app
        case .failure(.unidentified(let app, let reason)):
            throw VarlinkError(
                IslandErrorNames.Unentitled.error, [IslandErrorNames.Unentitled.app: .string(app), IslandErrorNames.Unentitled.reason: .string(reason)])
        case .failure(.impersonation(let claimed, let actual)):
            throw permissionDenied(role, "the caller is \(actual) and cannot act for \(claimed)")
        }
    }

    private func permissionDenied(_ role: String, _ reason: String) -> VarlinkError {
        typealias Denied = IslandErrorNames.PermissionDenied
        return VarlinkError(Denied.error, [Denied.role: .string(role), Denied.reason: .string(reason)])
    }
}
