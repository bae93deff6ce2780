import Testing
import Systemd
import VarlinkCore
@testable import IslandDaemon

@Suite struct IdentityResolverTests {
    static let registry = AppRegistry(manifests: [
        AppManifest(
            id: "org.example.Coffee", name: "Coffee", supportsLiveActivities: true, supportsFrequentUpdates: false,
            executable: "/usr/bin/coffee", path: "/a"),
        AppManifest(
            id: "org.example.Timer", name: "Timer", supportsLiveActivities: true, supportsFrequentUpdates: false,
            executable: "timer", path: "/b"),
        AppManifest(
            id: "org.example.Plain", name: "Plain", supportsLiveActivities: false, supportsFrequentUpdates: false,
            executable: nil, path: "/c"),
        // Entries whose programs a user can provide: a bare name, and a path in a home.
        AppManifest(
            id: "org.test.Mine", name: "Mine", supportsLiveActivities: true, supportsFrequentUpdates: false,
            executable: "myapp", path: "/d"),
        AppManifest(
            id: "org.test.Tool", name: "Tool", supportsLiveActivities: true, supportsFrequentUpdates: false,
            executable: "/home/u2/bin/tool", path: "/e"),
    ])

    static let peer = PeerCredentials(pid: 4242, uid: 1000, gid: 1000)

    /// A file system of a few files: which file each path is, and whether only root
    /// controls it (root-owned, in root-owned directories no one else may write).
    static let files: [String: (file: FileIdentity, rootControlled: Bool)] = [
        "/usr/bin/coffee": (FileIdentity(device: 8, inode: 100), true),
        "/opt/bin/timer": (FileIdentity(device: 8, inode: 200), true),
        "/usr/bin/python3": (FileIdentity(device: 8, inode: 300), true),
        // u2's copy of python3.
        "/home/u2/myapp": (FileIdentity(device: 8, inode: 400), false),
        "/home/u2/bin/tool": (FileIdentity(device: 8, inode: 500), false),
    ]

    /// A lookup that knows only what it is told, about any pid: the resolver itself must not
    /// ask about pid 0 (the caller itself, to sd-login) or an unknown peer. `executable` is
    /// the path the process's namespace shows; `runs` the file it really executes (by
    /// default the file at that path).
    static func lookup(
        sandbox: ProcessSandbox = .none, unit: String? = nil, userUnit: String? = nil,
        executable: String? = nil, runs: String? = nil
    ) -> IdentityResolver.ProcessLookup {
        IdentityResolver.ProcessLookup(
            sandbox: { _ in sandbox },
            userUnit: { _ in userUnit },
            systemUnit: { _ in unit },
            executable: { _ in executable },
            executableFile: { _ in (runs ?? executable).flatMap { files[$0]?.file } },
            rootControlledFile: { path in files[path].flatMap { $0.rootControlled ? RootControlledFile(path: path, identity: $0.file) : nil } })
    }

    /// A Flatpak as unprivileged bubblewrap runs it: in a user namespace of its own.
    static func flatpak(_ app: String) -> ProcessSandbox { .flatpak(appID: app, ownUserNamespace: true) }
    /// A Flatpak sandbox in the daemon's user namespace: only a privileged process builds that.
    static func privilegedFlatpak(_ app: String) -> ProcessSandbox { .flatpak(appID: app, ownUserNamespace: false) }

    func resolve(
        _ scope: DaemonScope, claim: String?, peer: PeerCredentials? = Self.peer, sandbox: ProcessSandbox = .none,
        unit: String? = nil, userUnit: String? = nil, executable: String? = nil, runs: String? = nil
    )
        -> Result<String, IdentityResolver.Refusal>
    {
        IdentityResolver(
            scope: scope, registry: Self.registry,
            lookup: Self.lookup(sandbox: sandbox, unit: unit, userUnit: userUnit, executable: executable, runs: runs)
        )
        .resolve(peer: peer, claim: claim)
    }

    /// The reason of an `unidentified` refusal; records an issue for anything else.
    func unidentifiedReason(_ result: Result<String, IdentityResolver.Refusal>, _ what: Comment) -> String {
        guard case .failure(.unidentified(_, let reason)) = result else {
            Issue.record("\(what): \(result)")
            return ""
        }
        return reason
    }

    @Test func aFlatpakIsItsAppID() {
        #expect(resolve(.user, claim: nil, sandbox: Self.flatpak("org.example.Sandboxed")) == .success("org.example.Sandboxed"))
        #expect(resolve(.user, claim: "org.example.Sandboxed", sandbox: Self.flatpak("org.example.Sandboxed")) == .success("org.example.Sandboxed"))
        #expect(resolve(.system, claim: nil, sandbox: Self.privilegedFlatpak("org.example.Sandboxed")) == .success("org.example.Sandboxed"))
    }

    @Test(arguments: [(DaemonScope.user, Self.flatpak("org.example.Sandboxed")), (.system, Self.privilegedFlatpak("org.example.Sandboxed"))])
    func aFlatpakCannotClaimAnotherApp(scope: DaemonScope, sandbox: ProcessSandbox) {
        #expect(
            resolve(scope, claim: "org.example.Coffee", sandbox: sandbox)
                == .failure(.impersonation(claimed: "org.example.Coffee", actual: "org.example.Sandboxed")))
    }

    @Test func theFlatpakWinsOverUnitAndExecutable() {
        #expect(
            resolve(
                .user, claim: nil, sandbox: Self.flatpak("org.example.Sandboxed"), unit: "app-org.example.Timer@1.service",
                executable: "/usr/bin/coffee") == .success("org.example.Sandboxed"))
    }

    /// A forged Flatpak: `unshare -Ur`, then `chroot` into a directory holding a
    /// `.flatpak-info`. In the system scope that is another user's word, whatever it names.
    @Test func theSystemScopeRefusesAFlatpakIdFromTheCallersOwnUserNamespace() {
        for claim in [nil, "org.test.Backup"] {
            let reason = unidentifiedReason(
                resolve(.system, claim: claim, sandbox: Self.flatpak("org.test.Backup")),
                "a forged .flatpak-info identified the caller")
            #expect(reason.contains("user namespace") && reason.contains("org.test.Backup"), "\(reason)")
        }
        // Nor does anything else it runs then prove more than the sandbox.
        #expect(
            resolve(.system, claim: nil, sandbox: Self.flatpak("org.test.Backup"), unit: "app-org.example.Coffee@x.service")
                != .success("org.test.Backup"))
    }

    @Test(arguments: [DaemonScope.user, .system])
    func aFlatpakThatNamesNoAppIsUnidentified(scope: DaemonScope) {
        _ = unidentifiedReason(
            resolve(scope, claim: "org.example.Coffee", sandbox: .flatpak(appID: nil, ownUserNamespace: scope == .user)),
            "a nameless sandbox claimed an app")
    }

    /// The packaged system daemon cannot look into other users' processes: not being able
    /// to is the rule there, and the system scope accepts no claims anyway.
    @Test func theSystemScopeTakesAnUninspectableCallerByItsUnitAlone() {
        let sandbox = ProcessSandbox.uninspectable(reason: "EACCES")
        #expect(resolve(.system, claim: nil, sandbox: sandbox, unit: "app-org.example.Coffee@x.service") == .success("org.example.Coffee"))
        let reason = unidentifiedReason(resolve(.system, claim: "org.example.Coffee", sandbox: sandbox), "a claim was accepted")
        #expect(reason.contains("system scope"), "\(reason)")
    }

    /// In the user scope the daemon can look into every process of its user that does not
    /// hide: one it cannot inspect may be a sandbox. Root, and the system scope, are another
    /// matter (see `IdentityResolver.sandbox(of:)`).
    @Test func whoCannotBeInspectedCountsAsSandboxedOnlyInTheUserScope() {
        let hidden = ProcessSandbox.uninspectable(reason: "undumpable")
        let user = IdentityResolver(scope: .user, registry: Self.registry, lookup: Self.lookup(sandbox: hidden))
        #expect(user.sandbox(of: Self.peer) == hidden)
        #expect(user.sandbox(of: PeerCredentials(pid: 4242, uid: 0, gid: 0)) == .none)
        guard case .uninspectable = user.sandbox(of: PeerCredentials(pid: 0, uid: 1000, gid: 1000)) else {
            Issue.record("a peer whose process is invisible counted as unconfined")
            return
        }
        let system = IdentityResolver(scope: .system, registry: Self.registry, lookup: Self.lookup(sandbox: hidden))
        #expect(system.sandbox(of: Self.peer) == .none)
        #expect(
            IdentityResolver(scope: .system, registry: Self.registry, lookup: Self.lookup(sandbox: .pidNamespace)).sandbox(of: Self.peer)
                == .pidNamespace)
    }

    @Test func theUserScopeAcceptsAClaimWithAManifest() {
        #expect(resolve(.user, claim: "org.example.Coffee") == .success("org.example.Coffee"))
        #expect(
            resolve(.user, claim: "org.example.Plain") == .success("org.example.Plain"),
            "a manifest identifies; whether it is entitled is the engine's question")
        #expect(resolve(.user, claim: "org.example.Coffee", peer: nil) == .success("org.example.Coffee"))
    }

    /// Only an unconfined caller is the user: another sandbox names no app and may not pick one.
    @Test(arguments: [ProcessSandbox.userNamespace, .pidNamespace, .snap(name: "spotify"), .uninspectable(reason: "gone")])
    func theUserScopeRefusesAClaimFromASandbox(sandbox: ProcessSandbox) {
        let reason = unidentifiedReason(resolve(.user, claim: "org.example.Coffee", sandbox: sandbox), "a sandbox claimed an app")
        #expect(reason.contains("sandbox"), "\(reason)")
        // Its unit still identifies it.
        #expect(resolve(.user, claim: nil, sandbox: sandbox, userUnit: "app-flatpak-org.example.Timer-1.scope") == .success("org.example.Timer"))
    }

    @Test func rootIsNotTakenForSandboxedWhenItCannotBeInspected() {
        let root = PeerCredentials(pid: 4242, uid: 0, gid: 0)
        #expect(resolve(.user, claim: "org.example.Coffee", peer: root, sandbox: .uninspectable(reason: "EACCES")) == .success("org.example.Coffee"))
        _ = unidentifiedReason(
            resolve(.user, claim: "org.example.Coffee", peer: root, sandbox: .userNamespace),
            "root in a user namespace of its own is still sandboxed")
    }

    @Test func theUserScopeRefusesAClaimWithoutAManifest() throws {
        guard case .failure(.unidentified(let app, let reason)) = resolve(.user, claim: "org.example.Unknown") else {
            Issue.record("an unknown app was accepted")
            return
        }
        #expect(app == "org.example.Unknown")
        #expect(reason.contains("org.example.Unknown.desktop"))
    }

    @Test func theSystemScopeRefusesABareClaim() {
        guard case .failure(.unidentified(let app, let reason)) = resolve(.system, claim: "org.example.Coffee") else {
            Issue.record("the system scope accepted a bare claim")
            return
        }
        #expect(app == "org.example.Coffee")
        #expect(reason.contains("system scope"))
    }

    @Test func theSystemScopeAcceptsAClaimThatRepeatsTheVerifiedIdentity() {
        #expect(resolve(.system, claim: "org.example.Coffee", unit: "app-org.example.Coffee@main.service") == .success("org.example.Coffee"))
        #expect(resolve(.system, claim: "org.example.Coffee", executable: "/usr/bin/coffee") == .success("org.example.Coffee"))
        #expect(
            resolve(.system, claim: "org.example.Timer", unit: "app-org.example.Coffee@main.service")
                == .failure(.impersonation(claimed: "org.example.Timer", actual: "org.example.Coffee")))
    }

    @Test(arguments: [DaemonScope.user, .system])
    func theAppUnitIdentifies(scope: DaemonScope) {
        #expect(resolve(scope, claim: nil, unit: "app-gnome-org.example.Timer-4242.scope") == .success("org.example.Timer"))
        #expect(resolve(scope, claim: nil, unit: "app-org.example.Coffee@a1b2.service") == .success("org.example.Coffee"))
        // The unit is enough: a manifest is not needed to know who the caller is.
        #expect(resolve(scope, claim: nil, unit: "app-kde-org.example.Unlisted-99.scope") == .success("org.example.Unlisted"))
    }

    @Test func theUserScopeTakesTheUnitOfTheUsersOwnManager() {
        #expect(
            resolve(.user, claim: nil, unit: "user@1000.service", userUnit: "app-gnome-org.example.Timer-4242.scope")
                == .success("org.example.Timer"))
    }

    /// A forged unit: a user creates `app-org.test.A-4242.scope` in the cgroup subtree their
    /// own service manager was delegated, however deep
    /// (`user@1000.service/app.slice/app-org.test.A-4242.scope`).
    @Test(arguments: ["app-org.test.A-4242.scope", "app-gnome-org.test.A-4242.scope", "app-org.test.A@1.service"])
    func theSystemScopeIgnoresUnitsInsideAUsersManager(userUnit: String) {
        for claim in [nil, "org.test.A"] {
            let result = resolve(.system, claim: claim, unit: "user@1000.service", userUnit: userUnit)
            _ = unidentifiedReason(result, "a unit the user named identified them")
        }
        // Even when sd-login could not name the user unit, the system unit is the user's manager.
        _ = unidentifiedReason(resolve(.system, claim: nil, unit: "user@1000.service"), "user@1000.service identified the caller")
        // And a unit the user named does not hide the executable the caller really runs.
        #expect(
            resolve(.system, claim: nil, unit: "user@1000.service", userUnit: userUnit, executable: "/usr/bin/coffee")
                == .success("org.example.Coffee"))
    }

    @Test func aNonAppUnitFallsBackToTheExecutable() {
        #expect(resolve(.system, claim: nil, unit: "session-3.scope", executable: "/usr/bin/coffee") == .success("org.example.Coffee"))
        #expect(resolve(.user, claim: nil, unit: "user@1000.service", executable: "/opt/bin/timer") == .success("org.example.Timer"))
    }

    /// A forged executable: `Exec=myapp` once matched any file called `myapp` (u2 copied python3
    /// to `~/myapp`); an absolute `Exec=` in a home matched whoever wrote that file; and a path
    /// is only what the caller's own mount namespace calls the file.
    @Test func theSystemScopeIdentifiesOnlyTheRootControlledFileADesktopEntryNamesByAbsolutePath() {
        let forgeries: [(executable: String, runs: String?, what: Comment)] = [
            ("/home/u2/myapp", nil, "a copy named like a bare Exec="),
            ("/opt/bin/timer", nil, "a root-owned file a bare Exec= names"),
            ("/home/u2/bin/tool", nil, "a file in a home that an absolute Exec= names"),
            ("/usr/bin/coffee", "/home/u2/myapp", "another file bind-mounted over the Exec= path"),
        ]
        for forgery in forgeries {
            let reason = unidentifiedReason(resolve(.system, claim: nil, executable: forgery.executable, runs: forgery.runs), forgery.what)
            #expect(!reason.isEmpty)
            _ = unidentifiedReason(resolve(.system, claim: "org.test.Mine", executable: forgery.executable, runs: forgery.runs), forgery.what)
        }
        // The user scope keeps matching names: its callers are the user anyway.
        #expect(resolve(.user, claim: nil, executable: "/home/u2/myapp") == .success("org.test.Mine"))
        #expect(resolve(.user, claim: nil, executable: "/opt/bin/timer") == .success("org.example.Timer"))
    }

    /// Reaching the file a process runs can wait on a file system its owner mounted; a path
    /// no root-controlled entry names is turned away before that.
    @Test func theRunningFileIsOnlyLookedAtWhenThePathMatches() {
        var lookup = Self.lookup(executable: "/home/u2/myapp")
        lookup.executableFile = { _ in
            Issue.record("the running file was looked up for a path no entry names")
            return nil
        }
        _ = unidentifiedReason(
            IdentityResolver(scope: .system, registry: Self.registry, lookup: lookup).resolve(peer: Self.peer, claim: nil),
            "a copy identified")
    }

    @Test(arguments: [DaemonScope.user, .system])
    func nothingKnownIsUnidentifiedWithAReason(scope: DaemonScope) {
        for result in [
            resolve(scope, claim: nil),
            resolve(scope, claim: nil, unit: "session-3.scope", executable: "/usr/bin/python3"),
            resolve(scope, claim: nil, peer: nil, sandbox: Self.flatpak("org.example.Sandboxed")),
            resolve(scope, claim: nil, peer: PeerCredentials(pid: 0, uid: 1000, gid: 1000), unit: "app-org.example.Coffee@x.service"),
        ] {
            guard case .failure(.unidentified(let app, let reason)) = result else {
                Issue.record("identified without facts: \(result)")
                continue
            }
            #expect(app == "")
            #expect(!reason.isEmpty)
        }
    }
}
