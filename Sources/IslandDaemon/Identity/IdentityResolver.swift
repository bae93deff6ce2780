package import Systemd
package import VarlinkCore

/// Decides which app a connection acts for, from what the kernel says about the peer and
/// what it claims (identity comes from the kernel: docs/design.md §4).
///
/// Each fact counts only where the peer could not have arranged it:
///
/// - In the user scope every unconfined client already runs as the user and could do
///   whatever an app can, so a claimed app with a manifest is accepted. A sandboxed client
///   is bound to what its sandbox says: a Flatpak is its app id and nothing else, another
///   sandbox names no app and may not claim one.
/// - In the system scope a client is another user, who picks the names of their own units,
///   builds mount namespaces at will and copies programs anywhere. Only a system unit, a
///   root-controlled executable named by a desktop entry's absolute path, or a Flatpak
///   sandbox that a privileged process built (the peer shares the daemon's user namespace)
///   identify; a claim only repeats such an identity.
package struct IdentityResolver: Sendable {
    package var scope: DaemonScope
    package var registry: AppRegistry
    /// Looks up facts about a pid; replaceable in tests.
    package var lookup: ProcessLookup

    /// Facts about a process. The defaults know nothing: no sandbox, no unit, no executable.
    package struct ProcessLookup: Sendable {
        package var sandbox: @Sendable (Int32) -> ProcessSandbox
        /// The unit in the user's own service manager, which that user names.
        package var userUnit: @Sendable (Int32) -> String?
        /// The unit in the system manager (`user@UID.service` for all of a user's units).
        package var systemUnit: @Sendable (Int32) -> String?
        /// The executable's path, as the process's own mount namespace spells it.
        package var executable: @Sendable (Int32) -> String?
        /// The file the process executes.
        package var executableFile: @Sendable (Int32) -> FileIdentity?
        /// The file at a path, when only root controls it and every directory above it.
        package var rootControlledFile: @Sendable (String) -> RootControlledFile?

        package init(
            sandbox: @escaping @Sendable (Int32) -> ProcessSandbox = { _ in .none },
            userUnit: @escaping @Sendable (Int32) -> String? = { _ in nil },
            systemUnit: @escaping @Sendable (Int32) -> String? = { _ in nil },
            executable: @escaping @Sendable (Int32) -> String? = { _ in nil },
            executableFile: @escaping @Sendable (Int32) -> FileIdentity? = { _ in nil },
            rootControlledFile: @escaping @Sendable (String) -> RootControlledFile? = { _ in nil }
        ) {
            self.sandbox = sandbox
            self.userUnit = userUnit
            self.systemUnit = systemUnit
            self.executable = executable
            self.executableFile = executableFile
            self.rootControlledFile = rootControlledFile
        }

        /// The real lookups. The system daemon does not look into the roots of processes in
        /// user namespaces of their own (see `ProcessIdentity.sandbox`): a user could stall it.
        package static func live(for scope: DaemonScope) -> ProcessLookup {
            let readingForeignRoots = scope == .user
            return ProcessLookup(
                sandbox: { ProcessIdentity.sandbox(pid: $0, readingForeignRoots: readingForeignRoots) },
                userUnit: { ProcessIdentity.userUnit(pid: $0) },
                systemUnit: { ProcessIdentity.systemUnit(pid: $0) },
                executable: { ProcessIdentity.executablePath(pid: $0) },
                executableFile: { ProcessIdentity.executableFile(pid: $0) },
                rootControlledFile: { ProcessIdentity.rootControlledFile(atPath: $0) })
        }
    }

    package enum Refusal: Error, Equatable {
        /// No identity could be established; the reason says what was tried.
        case unidentified(app: String, reason: String)
        /// The peer claimed an app it verifiably is not.
        case impersonation(claimed: String, actual: String)
    }

    /// - Parameter lookup: Facts about processes; by default the real ones for `scope`.
    package init(scope: DaemonScope, registry: AppRegistry, lookup: ProcessLookup? = nil) {
        self.scope = scope
        self.registry = registry
        self.lookup = lookup ?? .live(for: scope)
    }

    /// What confines the peer. A peer that cannot be inspected counts as sandboxed in the
    /// user scope, where the daemon can always look into the user's own processes unless
    /// they hide. Not so for root, which a user's daemon cannot look into and which could
    /// leave any sandbox anyway; nor in the system scope, where the packaged daemon has no
    /// ptrace access to other users' processes at all, and the lookup has already used what
    /// anyone may read.
    package func sandbox(of peer: PeerCredentials?) -> ProcessSandbox {
        guard let peer else { return .uninspectable(reason: "the caller's credentials are unknown") }
        let sandbox = peer.pid > 0 ? lookup.sandbox(peer.pid) : .uninspectable(reason: "the caller's process is not visible to the daemon")
        if case .uninspectable = sandbox, peer.uid == 0 || scope == .system { return .none }
        return sandbox
    }

    package func resolve(peer: PeerCredentials?, claim: String?) -> Result<String, Refusal> {
        let pid = peer?.pid ?? 0
        // Without a process there is nothing to look up; that is an unknown peer, not a
        // sandboxed one (the claim rules below still apply).
        let sandbox = pid > 0 ? self.sandbox(of: peer) : .none
        if case .flatpak(let flatpak, let ownUserNamespace) = sandbox {
            guard let flatpak else {
                return .failure(.unidentified(app: claim ?? "", reason: "the caller runs in a Flatpak sandbox whose .flatpak-info names no app"))
            }
            if scope == .system && ownUserNamespace {
                // Unprivileged bubblewrap and `unshare -Ur` + `chroot` look the same from
                // here: a user namespace of the user's own, with a root of their choosing.
                return .failure(
                    .unidentified(
                        app: claim ?? flatpak,
                        reason: """
                            the caller is the Flatpak \(flatpak) only by its own account: it is not seen to share the daemon's \
                            user namespace, and in a user namespace of their own anyone can write a .flatpak-info; the system \
                            scope trusts a Flatpak id only from a sandbox a privileged process built
                            """))
            }
            if let claim, claim != flatpak { return .failure(.impersonation(claimed: claim, actual: flatpak)) }
            return .success(flatpak)
        }
        if let claim, scope == .user, sandbox == .none {
            // An entry written a moment ago, which the watch's rescan has yet to read, counts.
            guard registry.manifest(for: claim) != nil || registry.lookedUpOnceMore(claim) != nil else {
                return .failure(.unidentified(app: claim, reason: registry.refusal(for: claim) ?? "no desktop entry \(claim).desktop"))
            }
            return .success(claim)
        }
        if let verified = verifiedIdentity(pid: pid) {
            // A claim here is only ever a repetition of the verified identity: clients that
            // always name their app keep working, and no one becomes another app.
            if let claim, claim != verified { return .failure(.impersonation(claimed: claim, actual: verified)) }
            return .success(verified)
        }
        if sandbox != .none {
            return .failure(
                .unidentified(
                    app: claim ?? "",
                    reason: scope == .user
                        ? """
                        the caller runs in \(sandbox.summary), which names no app; a sandboxed caller cannot claim one. \
                        Run it as a Flatpak, or as its own app unit
                        """
                        : """
                        the caller runs in \(sandbox.summary); the system scope identifies it only by its system unit, as \
                        whatever it shows from in there (a .flatpak-info, a claim) any user could arrange
                        """))
        }
        if let claim {
            return .failure(
                .unidentified(
                    app: claim,
                    reason: """
                        the system scope accepts no claimed identity; run the app as a system unit named \
                        app-<app-id>@….service, or from a root-owned executable that its desktop entry names by absolute path
                        """))
        }
        return .failure(.unidentified(app: "", reason: "no flatpak id, app unit or known executable identifies the caller; pass the app id"))
    }

    /// The app of the caller's systemd unit, or else of its executable, as far as the scope
    /// trusts them.
    private func verifiedIdentity(pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        switch scope {
        case .user:
            if let unit = lookup.userUnit(pid) ?? lookup.systemUnit(pid), let app = ProcessIdentity.appID(fromUnit: unit) { return app }
            if let executable = lookup.executable(pid), let app = registry.app(forExecutable: executable) { return app }
        case .system:
            // A unit inside a user's own manager (`user@UID.service/app.slice/app-x-1.scope`)
            // has the name the user gave it; only the system manager's units count.
            if lookup.userUnit(pid) == nil, let unit = lookup.systemUnit(pid), !unit.hasPrefix("user@"),
                let app = ProcessIdentity.appID(fromUnit: unit)
            {
                return app
            }
            if let path = lookup.executable(pid),
                let app = registry.app(
                    executablePath: path, runningFile: { lookup.executableFile(pid) },
                    rootControlledFile: lookup.rootControlledFile)
            {
                return app
            }
        }
        return nil
    }
}
