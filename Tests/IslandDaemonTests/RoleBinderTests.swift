#if canImport(Glibc)
import Glibc
#endif
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import Systemd
import VarlinkCore
@testable import IslandDaemon

@Suite struct RoleBinderTests {
    static let me = getuid()
    /// A uid that is neither the test's nor root's.
    static let stranger: UInt32 = me == 4321 ? 4322 : 4321

    static let registry = AppRegistry(
        manifests: ["org.example.Coffee", "org.example.Timer"].map {
            AppManifest(id: $0, name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false, executable: nil, path: "/\($0)")
        })

    func binder(_ scope: DaemonScope = .user, presenterGroup: UInt32? = nil, flatpak: String? = nil) -> RoleBinder {
        binder(scope, presenterGroup: presenterGroup, sandbox: flatpak.map { .flatpak(appID: $0, ownUserNamespace: true) } ?? .none)
    }

    func binder(
        _ scope: DaemonScope = .user, presenterGroup: UInt32? = nil, sandbox: ProcessSandbox,
        allowance: DaemonSettings = DaemonSettings()
    ) -> RoleBinder {
        let lookup = IdentityResolver.ProcessLookup(sandbox: { _ in sandbox })
        return RoleBinder(
            scope: scope, resolver: { IdentityResolver(scope: scope, registry: Self.registry, lookup: lookup) },
            presenterGroup: presenterGroup, sandboxAllowance: SandboxAllowance(allowance))
    }

    func connection(uid: UInt32 = me, gid: UInt32? = nil, id: UInt64 = 1) -> VarlinkConnectionContext {
        VarlinkConnectionContext(id: id, peer: PeerCredentials(pid: 4242, uid: uid, gid: gid ?? uid))
    }

    /// The error `body` throws, which must be a VarlinkError.
    func refusal(_ body: () throws(VarlinkError) -> ConnectionRole) -> VarlinkError? {
        do {
            let role = try body()
            Issue.record("bound as \(role) instead of refusing")
            return nil
        } catch {
            return error
        }
    }

    @Test func theFirstRoleCallBinds() throws {
        let roles = binder()
        let connection = connection()
        #expect(connection.attachment(ConnectionRole.self) == nil)
        #expect(try roles.bind(.producer(claim: "org.example.Coffee"), connection: connection) == .producer(app: "org.example.Coffee"))
        #expect(connection.attachment(ConnectionRole.self) == .producer(app: "org.example.Coffee"))
    }

    @Test func laterCallsOfTheSameRoleAndAppAreFine() throws {
        let roles = binder()
        let connection = connection()
        _ = try roles.bind(.extensionOf(claim: "org.example.Coffee"), connection: connection)
        #expect(try roles.bind(.extensionOf(claim: "org.example.Coffee"), connection: connection) == .extensionOf(app: "org.example.Coffee"))
        #expect(
            try roles.bind(.extensionOf(claim: nil), connection: connection) == .extensionOf(app: "org.example.Coffee"),
            "later calls may leave the app out")
    }

    @Test func anotherRoleOnTheSameConnectionIsDenied() throws {
        let roles = binder()
        let connection = connection()
        _ = try roles.bind(.extensionOf(claim: "org.example.Coffee"), connection: connection)
        for request in [RoleRequest.producer(claim: "org.example.Coffee"), .presenter, .admin] {
            let error = refusal { () throws(VarlinkError) in try roles.bind(request, connection: connection) }
            #expect(error?.name == "org.island.PermissionDenied")
            #expect(error?.parameters["role"] == .string(request.name))
            let reason = error?.parameters["reason"]?.stringValue ?? ""
            #expect(reason.contains("extension") && reason.contains(request.name), "\(reason)")
        }
        #expect(connection.attachment(ConnectionRole.self) == .extensionOf(app: "org.example.Coffee"), "the binding never changes")
    }

    @Test func anotherAppOnTheSameConnectionIsDenied() throws {
        let roles = binder()
        let connection = connection()
        _ = try roles.bind(.producer(claim: "org.example.Coffee"), connection: connection)
        let error = refusal { () throws(VarlinkError) in try roles.bind(.producer(claim: "org.example.Timer"), connection: connection) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["role"] == "producer")
        #expect(error?.parameters["reason"]?.stringValue?.contains("org.example.Coffee") == true)
        // The same app on a connection of its own is fine.
        #expect(try roles.bind(.producer(claim: "org.example.Timer"), connection: self.connection(id: 2)) == .producer(app: "org.example.Timer"))
    }

    @Test func aRefusedFirstCallLeavesTheConnectionUnbound() throws {
        let roles = binder()
        let connection = connection()
        let error = refusal { () throws(VarlinkError) in try roles.bind(.producer(claim: "org.example.Unknown"), connection: connection) }
        #expect(error?.name == "org.island.Unentitled")
        #expect(error?.parameters["app"] == "org.example.Unknown")
        #expect(error?.parameters["reason"]?.stringValue?.isEmpty == false)
        #expect(connection.attachment(ConnectionRole.self) == nil)
        #expect(try roles.bind(.producer(claim: "org.example.Coffee"), connection: connection) == .producer(app: "org.example.Coffee"))
    }

    @Test func anImpersonatingExtensionIsDeniedAsAnExtension() {
        let roles = binder(flatpak: "org.example.Sandboxed")
        let error = refusal { () throws(VarlinkError) in try roles.bind(.extensionOf(claim: "org.example.Coffee"), connection: connection()) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["role"] == "extension")
        #expect(error?.parameters["reason"]?.stringValue?.contains("org.example.Sandboxed") == true)
    }

    @Test func adminInTheUserScopeIsTheDaemonsUIDOrRoot() throws {
        let roles = binder(.user)
        #expect(try roles.bind(.admin, connection: connection(uid: Self.me)) == .admin)
        #expect(try roles.bind(.admin, connection: connection(uid: 0)) == .admin)
        let error = refusal { () throws(VarlinkError) in try roles.bind(.admin, connection: connection(uid: Self.stranger)) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["role"] == "admin")
        let unknown = refusal { () throws(VarlinkError) in
            try roles.bind(.admin, connection: VarlinkConnectionContext(id: 9, peer: nil))
        }
        #expect(unknown?.name == "org.island.PermissionDenied")
    }

    @Test func adminInTheSystemScopeIsRootOnly() throws {
        let roles = binder(.system)
        #expect(try roles.bind(.admin, connection: connection(uid: 0)) == .admin)
        let error = refusal { () throws(VarlinkError) in try roles.bind(.admin, connection: connection(uid: Self.stranger)) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["reason"]?.stringValue?.contains("root") == true)
    }

    @Test func presentingTheUserIslandIsForTheDaemonsUIDOnly() throws {
        let roles = binder(.user)
        #expect(try roles.bind(.presenter, connection: connection(uid: Self.me)) == .presenter(uid: Self.me))
        let error = refusal { () throws(VarlinkError) in try roles.bind(.presenter, connection: connection(uid: Self.stranger)) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["role"] == "presenter")
        let unknown = refusal { () throws(VarlinkError) in
            try roles.bind(.presenter, connection: VarlinkConnectionContext(id: 9, peer: nil))
        }
        #expect(unknown?.name == "org.island.PermissionDenied")
    }

    @Test func presentingTheSystemIslandNeedsRootOrTheGroup() throws {
        let withoutGroup = binder(.system)
        #expect(try withoutGroup.bind(.presenter, connection: connection(uid: 0)) == .presenter(uid: 0))
        let error = refusal { () throws(VarlinkError) in try withoutGroup.bind(.presenter, connection: connection(uid: Self.stranger)) }
        #expect(error?.name == "org.island.PermissionDenied")
        #expect(error?.parameters["role"] == "presenter")

        let withGroup = binder(.system, presenterGroup: 777)
        #expect(try withGroup.bind(.presenter, connection: connection(uid: Self.stranger, gid: 777)) == .presenter(uid: Self.stranger))
    }

    /// A peer the daemon knew as the Flatpak org.test.B once subscribed as a presenter, read
    /// another app's activities, pressed its button and dismissed it.
    @Test(arguments: [DaemonScope.user, .system])
    func aSandboxedAppIsNeitherPresenterNorAdmin(scope: DaemonScope) throws {
        let sandboxes: [ProcessSandbox] = [
            .flatpak(appID: "org.test.B", ownUserNamespace: true), .flatpak(appID: "org.test.B", ownUserNamespace: false),
            .flatpak(appID: nil, ownUserNamespace: true), .userNamespace, .pidNamespace, .snap(name: "spotify"), .uninspectable(reason: "gone"),
        ]
        for sandbox in sandboxes {
            let roles = binder(scope, sandbox: sandbox)
            // Root passes every uid check of both scopes: only the sandbox is left to refuse.
            for request in [RoleRequest.presenter, .admin] {
                let connection = connection(uid: scope == .user ? Self.me : 0)
                let uid = scope == .user ? Self.me : 0
                if uid != 0 || sandbox != .uninspectable(reason: "gone") {
                    let error = refusal { () throws(VarlinkError) in try roles.bind(request, connection: connection) }
                    #expect(error?.name == "org.island.PermissionDenied", "\(sandbox) as \(request.name)")
                    #expect(error?.parameters["role"] == .string(request.name))
                    let reason = error?.parameters["reason"]?.stringValue ?? ""
                    #expect(reason.contains("sandbox"), "\(reason)")
                    #expect(connection.attachment(ConnectionRole.self) == nil)
                }
            }
        }
    }

    @Test func theRefusalNamesTheKeyThatWouldAllowTheApp() {
        let roles = binder(.user, sandbox: .flatpak(appID: "org.test.B", ownUserNamespace: true))
        let presenter = refusal { () throws(VarlinkError) in try roles.bind(.presenter, connection: connection()) }
        #expect(presenter?.parameters["reason"]?.stringValue?.contains("SandboxedPresenters=org.test.B") == true)
        let admin = refusal { () throws(VarlinkError) in try roles.bind(.admin, connection: connection()) }
        #expect(admin?.parameters["reason"]?.stringValue?.contains("SandboxedAdmins=org.test.B") == true)
    }

    @Test func theUserCanAllowASandboxedAppEachRoleApart() throws {
        let sandbox = ProcessSandbox.flatpak(appID: "org.test.B", ownUserNamespace: true)
        let presenting = binder(.user, sandbox: sandbox, allowance: DaemonSettings(sandboxedPresenters: ["org.test.B"]))
        #expect(try presenting.bind(.presenter, connection: connection()) == .presenter(uid: Self.me))
        let admin = refusal { () throws(VarlinkError) in try presenting.bind(.admin, connection: connection(id: 2)) }
        #expect(admin?.name == "org.island.PermissionDenied", "allowing the presenter role does not allow the admin one")

        let administering = binder(.user, sandbox: sandbox, allowance: DaemonSettings(sandboxedAdmins: ["org.test.B"]))
        #expect(try administering.bind(.admin, connection: connection()) == .admin)
        let presenter = refusal { () throws(VarlinkError) in try administering.bind(.presenter, connection: connection(id: 2)) }
        #expect(presenter?.name == "org.island.PermissionDenied")

        // Another app, or a sandbox that names none, is not allowed by that entry.
        for other in [ProcessSandbox.flatpak(appID: "org.test.C", ownUserNamespace: true), .userNamespace] {
            let roles = binder(.user, sandbox: other, allowance: DaemonSettings(sandboxedPresenters: ["org.test.B"], sandboxedAdmins: ["org.test.B"]))
            let error = refusal { () throws(VarlinkError) in try roles.bind(.presenter, connection: connection()) }
            #expect(error?.name == "org.island.PermissionDenied")
        }
        // The uid rules still come first.
        let stranger = refusal { () throws(VarlinkError) in try presenting.bind(.presenter, connection: connection(uid: Self.stranger)) }
        #expect(stranger?.name == "org.island.PermissionDenied")
    }

    @Test func anAllowanceChangesWithTheConfiguration() throws {
        let allowance = SandboxAllowance()
        let lookup = IdentityResolver.ProcessLookup(sandbox: { _ in .flatpak(appID: "org.test.B", ownUserNamespace: true) })
        let roles = RoleBinder(
            scope: .user, resolver: { IdentityResolver(scope: .user, registry: Self.registry, lookup: lookup) },
            presenterGroup: nil, sandboxAllowance: allowance)
        #expect(refusal { () throws(VarlinkError) in try roles.bind(.presenter, connection: connection(id: 1)) } != nil)
        allowance.update(DaemonSettings(sandboxedPresenters: ["org.test.B"]))
        #expect(try roles.bind(.presenter, connection: connection(id: 2)) == .presenter(uid: Self.me))
        allowance.update(DaemonSettings())
        #expect(refusal { () throws(VarlinkError) in try roles.bind(.presenter, connection: connection(id: 3)) } != nil)
    }

    /// The packaged system daemon has no ptrace access to other users' processes; a caller
    /// it cannot look into, whose world-readable facts show no sandbox, presents as before.
    @Test func theSystemScopeDoesNotRefuseWhomItCannotInspect() throws {
        let roles = binder(.system, presenterGroup: 777, sandbox: .uninspectable(reason: "EACCES"))
        #expect(try roles.bind(.presenter, connection: connection(uid: Self.stranger, gid: 777)) == .presenter(uid: Self.stranger))
    }

    @Test func rootThatCannotBeInspectedIsNotTakenForSandboxed() throws {
        let roles = binder(.user, sandbox: .uninspectable(reason: "a user daemon cannot look into root's processes"))
        #expect(try roles.bind(.admin, connection: connection(uid: 0)) == .admin)
    }
}
