import Testing
import Varlink
@testable import IslandDaemon

@Suite struct IdentityResolverTests {
    static let registry = AppRegistry(manifests: [
        AppManifest(id: "org.example.Coffee", name: "Coffee", supportsLiveActivities: true, supportsFrequentUpdates: false,
                    executable: "/usr/bin/coffee", path: "/a"),
        AppManifest(id: "org.example.Timer", name: "Timer", supportsLiveActivities: true, supportsFrequentUpdates: false,
                    executable: "timer", path: "/b"),
        AppManifest(id: "org.example.Plain", name: "Plain", supportsLiveActivities: false, supportsFrequentUpdates: false,
                    executable: nil, path: "/c"),
    ])

    static let peer = PeerCredentials(pid: 4242, uid: 1000, gid: 1000)

    /// A lookup that knows only what it is told, about any pid: the resolver itself must not
    /// ask about pid 0 (the caller itself, to sd-login) or an unknown peer.
    static func lookup(flatpak: String? = nil, unit: String? = nil, executable: String? = nil) -> IdentityResolver.ProcessLookup {
        IdentityResolver.ProcessLookup(
            flatpakAppID: { _ in flatpak },
            systemdUnit: { _ in unit },
            executable: { _ in executable })
    }

    func resolve(_ scope: DaemonScope, claim: String?, peer: PeerCredentials? = Self.peer,
                 flatpak: String? = nil, unit: String? = nil, executable: String? = nil) -> Result<String, IdentityResolver.Refusal> {
        IdentityResolver(scope: scope, registry: Self.registry, lookup: Self.lookup(flatpak: flatpak, unit: unit, executable: executable))
            .resolve(peer: peer, claim: claim)
    }

    @Test(arguments: [DaemonScope.user, .system])
    func aFlatpakIsItsAppID(scope: DaemonScope) {
        #expect(resolve(scope, claim: nil, flatpak: "org.example.Sandboxed") == .success("org.example.Sandboxed"))
        #expect(resolve(scope, claim: "org.example.Sandboxed", flatpak: "org.example.Sandboxed") == .success("org.example.Sandboxed"))
    }

    @Test(arguments: [DaemonScope.user, .system])
    func aFlatpakCannotClaimAnotherApp(scope: DaemonScope) {
        #expect(resolve(scope, claim: "org.example.Coffee", flatpak: "org.example.Sandboxed")
            == .failure(.impersonation(claimed: "org.example.Coffee", actual: "org.example.Sandboxed")))
    }

    @Test func theFlatpakWinsOverUnitAndExecutable() {
        #expect(resolve(.user, claim: nil, flatpak: "org.example.Sandboxed", unit: "app-org.example.Timer@1.service",
                        executable: "/usr/bin/coffee") == .success("org.example.Sandboxed"))
    }

    @Test func theUserScopeAcceptsAClaimWithAManifest() {
        #expect(resolve(.user, claim: "org.example.Coffee") == .success("org.example.Coffee"))
        #expect(resolve(.user, claim: "org.example.Plain") == .success("org.example.Plain"),
                "a manifest identifies; whether it is entitled is the engine's question")
        #expect(resolve(.user, claim: "org.example.Coffee", peer: nil) == .success("org.example.Coffee"))
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
        #expect(resolve(.system, claim: "org.example.Timer", unit: "app-org.example.Coffee@main.service")
            == .failure(.impersonation(claimed: "org.example.Timer", actual: "org.example.Coffee")))
    }

    @Test(arguments: [DaemonScope.user, .system])
    func theAppUnitIdentifies(scope: DaemonScope) {
        #expect(resolve(scope, claim: nil, unit: "app-gnome-org.example.Timer-4242.scope") == .success("org.example.Timer"))
        #expect(resolve(scope, claim: nil, unit: "app-org.example.Coffee@a1b2.service") == .success("org.example.Coffee"))
        // The unit is enough: a manifest is not needed to know who the caller is.
        #expect(resolve(scope, claim: nil, unit: "app-kde-org.example.Unlisted-99.scope") == .success("org.example.Unlisted"))
    }

    @Test func aNonAppUnitFallsBackToTheExecutable() {
        #expect(resolve(.system, claim: nil, unit: "session-3.scope", executable: "/usr/bin/coffee") == .success("org.example.Coffee"))
        #expect(resolve(.user, claim: nil, unit: "user@1000.service", executable: "/opt/bin/timer") == .success("org.example.Timer"))
    }

    @Test(arguments: [DaemonScope.user, .system])
    func nothingKnownIsUnidentifiedWithAReason(scope: DaemonScope) {
        for result in [
            resolve(scope, claim: nil),
            resolve(scope, claim: nil, unit: "session-3.scope", executable: "/usr/bin/python3"),
            resolve(scope, claim: nil, peer: nil, flatpak: "org.example.Sandboxed"),
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
