import IslandCore
import Testing

/// `SandboxedPresenters=` and `SandboxedAdmins=`: the apps the user lets present or
/// administer from inside a sandbox; no other sandboxed peer gets those roles.
@Suite struct SandboxedRolesConfigurationTests {
    typealias Support = ConfigurationTestSupport

    @Test func nothingIsAllowedByDefault() {
        #expect(IslandConfiguration.defaults.daemon.sandboxedPresenters.isEmpty)
        #expect(IslandConfiguration.defaults.daemon.sandboxedAdmins.isEmpty)
    }

    @Test func listsAddUpAndAnEmptyAssignmentClears() throws {
        let daemon = try IslandConfiguration.parse(files: [
            (path: Support.mainPath, contents: "[Daemon]\nSandboxedPresenters=org.test.B  org.test.C\nSandboxedAdmins=org.test.Admin\n"),
            (path: Support.mainPath + ".d/10.conf", contents: "[Daemon]\nSandboxedPresenters=\torg.test.D\n"),
        ]).daemon
        #expect(daemon.sandboxedPresenters == ["org.test.B", "org.test.C", "org.test.D"])
        #expect(daemon.sandboxedAdmins == ["org.test.Admin"])

        let cleared = try IslandConfiguration.parse(files: [
            (path: Support.mainPath, contents: "[Daemon]\nSandboxedPresenters=org.test.B\nSandboxedAdmins=org.test.B\n"),
            (path: Support.mainPath + ".d/10.conf", contents: "[Daemon]\nSandboxedPresenters=\nSandboxedPresenters=org.test.E\nSandboxedAdmins=\n"),
        ]).daemon
        #expect(cleared.sandboxedPresenters == ["org.test.E"])
        #expect(cleared.sandboxedAdmins.isEmpty)
    }

    @Test func anythingButAppIdsIsRefused() {
        Support.expectError(
            "[Daemon]\nSandboxedPresenters=org.test.B *\n",
            "\(Support.mainPath):2: invalid value 'org.test.B *' for SandboxedPresenters=: '*' is not an app id; "
                + "expected reverse-DNS app ids such as org.example.App, separated by spaces")
        Support.expectError(
            "[Limits]\nSandboxedAdmins=org.test.B\n",
            "\(Support.mainPath):2: SandboxedAdmins= belongs in [Daemon], not [Limits]")
    }
}
