#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IslandDaemon

@Suite struct DaemonPathsTests {
    @Test func theUserScopeFollowsTheXDGVariables() {
        let paths = DaemonPaths.defaults(
            for: .user,
            environment: [
                "HOME": "/home/ada",
                "XDG_RUNTIME_DIR": "/run/user/1000",
                "XDG_STATE_HOME": "/home/ada/state",
                "XDG_CONFIG_HOME": "/home/ada/config",
                "XDG_DATA_HOME": "/home/ada/data",
                "XDG_DATA_DIRS": "/opt/share:/usr/share",
            ])
        #expect(
            paths
                == DaemonPaths(
                    socket: "/run/user/1000/island/islandd.sock",
                    stateDirectory: "/home/ada/state/island",
                    configurationFile: "/home/ada/config/island/islandd.conf",
                    dataDirectories: ["/home/ada/data", "/opt/share", "/usr/share"],
                    runtimeDirectory: "/run/user/1000"))
    }

    @Test func theUserScopeFallsBackToHome() {
        let paths = DaemonPaths.defaults(for: .user, environment: ["HOME": "/home/ada"])
        #expect(paths.socket == "/run/user/\(getuid())/island/islandd.sock", "where pam_systemd puts the runtime directory, as clients assume")
        #expect(paths.runtimeDirectory == "/run/user/\(getuid())")
        #expect(paths.stateDirectory == "/home/ada/.local/state/island")
        #expect(paths.configurationFile == "/home/ada/.config/island/islandd.conf")
        #expect(paths.dataDirectories == ["/home/ada/.local/share", "/usr/local/share", "/usr/share"])
    }

    @Test func emptyAndRelativeVariablesMeanTheirDefaults() {
        let paths = DaemonPaths.defaults(
            for: .user,
            environment: [
                "HOME": "/home/ada",
                "XDG_RUNTIME_DIR": "",
                "XDG_STATE_HOME": "relative/state",
                "XDG_CONFIG_HOME": "",
                "XDG_DATA_HOME": "data",
                "XDG_DATA_DIRS": "share:/opt/share::",
            ])
        #expect(paths.socket == "/run/user/\(getuid())/island/islandd.sock")
        #expect(paths.stateDirectory == "/home/ada/.local/state/island")
        #expect(paths.configurationFile == "/home/ada/.config/island/islandd.conf")
        #expect(paths.dataDirectories == ["/home/ada/.local/share", "/opt/share"], "relative entries are dropped")
        let nothingUsable = DaemonPaths.defaults(for: .user, environment: ["HOME": "/h", "XDG_DATA_DIRS": "a:b"])
        #expect(nothingUsable.dataDirectories == ["/h/.local/share", "/usr/local/share", "/usr/share"])
    }

    @Test func withoutHomeThePathsAreStillAbsolute() {
        let paths = DaemonPaths.defaults(for: .user, environment: [:])
        #expect(paths.stateDirectory == "/.local/state/island")
        #expect(paths.configurationFile == "/.config/island/islandd.conf")
        #expect(paths.dataDirectories.allSatisfy { $0.hasPrefix("/") && !$0.hasPrefix("//") })
    }

    @Test func systemdsStateDirectoryWinsInBothScopes() {
        let user = DaemonPaths.defaults(
            for: .user,
            environment: [
                "HOME": "/home/ada", "XDG_STATE_HOME": "/home/ada/state", "STATE_DIRECTORY": "/home/ada/.local/state/island-unit",
            ])
        #expect(user.stateDirectory == "/home/ada/.local/state/island-unit")
        let system = DaemonPaths.defaults(for: .system, environment: ["STATE_DIRECTORY": "/var/lib/island:/var/lib/island-extra"])
        #expect(system.stateDirectory == "/var/lib/island", "the first of several StateDirectory= entries")
    }

    @Test func theSystemScopeUsesFHSPaths() {
        let paths = DaemonPaths.defaults(
            for: .system,
            environment: [
                "HOME": "/root", "XDG_RUNTIME_DIR": "/run/user/0", "XDG_CONFIG_HOME": "/root/.config", "XDG_DATA_HOME": "/root/.local/share",
            ])
        #expect(
            paths
                == DaemonPaths(
                    socket: "/run/island/islandd.sock",
                    stateDirectory: "/var/lib/island",
                    configurationFile: "/etc/island/islandd.conf",
                    dataDirectories: ["/usr/local/share", "/usr/share"]))
        let custom = DaemonPaths.defaults(for: .system, environment: ["XDG_DATA_DIRS": "/opt/share", "STATE_DIRECTORY": "/var/lib/isl"])
        #expect(custom.dataDirectories == ["/opt/share"])
        #expect(custom.stateDirectory == "/var/lib/isl")
    }
}
