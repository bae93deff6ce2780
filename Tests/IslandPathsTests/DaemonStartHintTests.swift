import Foundation
import Testing
import IslandPaths

/// The hint of a daemon that is not reachable names the user unit only where systemd would
/// find it: from a source checkout `systemctl --user start islandd.socket` only fails.
@Suite struct DaemonStartHintTests {
    static let environment = [
        "HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_DATA_DIRS": "/opt/share:relative:/usr/share",
    ]

    @Test func theSearchPathIsSystemdsInItsOrder() {
        #expect(
            DaemonStartHint.userUnitDirectories(environment: Self.environment) == [
                "/home/u/.config/systemd/user", "/etc/xdg/systemd/user", "/etc/systemd/user", "/run/user/1000/systemd/user",
                "/run/systemd/user", "/home/u/.local/share/systemd/user", "/opt/share/systemd/user", "/usr/share/systemd/user",
                "/usr/local/lib/systemd/user", "/usr/lib/systemd/user", "/lib/systemd/user",
            ])
        let moved = ["HOME": "/home/u", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d", "XDG_CONFIG_DIRS": "/x"]
        let directories = DaemonStartHint.userUnitDirectories(environment: moved)
        #expect(directories.prefix(2) == ["/c/systemd/user", "/x/systemd/user"])
        #expect(directories.contains("/d/systemd/user") && directories.contains("/usr/share/systemd/user"))
        #expect(!directories.contains("/home/u/.config/systemd/user"))
    }

    @Test(arguments: [
        "/usr/lib/systemd/user", "/home/u/.config/systemd/user", "/home/u/.local/share/systemd/user", "/opt/share/systemd/user",
    ])
    func aUnitWhereSystemdLooksIsNamed(_ directory: String) {
        let installed = DaemonStartHint.unitInstalled(environment: Self.environment) { $0 == directory + "/islandd.socket" }
        #expect(installed)
        #expect(DaemonStartHint.hint(unitInstalled: installed).contains("systemctl --user start islandd.socket"))
    }

    @Test func withoutOneTheHintNamesTheCheckoutsScriptAndTheDaemon() {
        let installed = DaemonStartHint.unitInstalled(environment: Self.environment) { $0.hasSuffix("/islandd.service") }
        #expect(!installed)
        let hint = DaemonStartHint.hint(unitInstalled: installed)
        #expect(!hint.contains("systemctl"))
        #expect(hint.contains("scripts/run.sh") && hint.contains("islandd &"))
    }
}
