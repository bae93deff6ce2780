import IslandCore
import Testing

/// `HideWhileSharing=`: the user's, and only the user's, switch for hiding activity content
/// while the screen is shared (docs/design.md §13).
@Suite struct HideWhileSharingConfigurationTests {
    typealias Support = ConfigurationTestSupport

    @Test func onByDefaultOffWhenTheUserSaysAndBackOnWhenEmptied() throws {
        #expect(IslandConfiguration.defaults.daemon.hideWhileSharing)
        let off = try IslandConfiguration.parse(files: [(path: Support.mainPath, contents: "[Daemon]\nHideWhileSharing=no\n")])
        #expect(!off.daemon.hideWhileSharing)
        let again = try IslandConfiguration.parse(files: [
            (path: Support.mainPath, contents: "[Daemon]\nHideWhileSharing=false\n"),
            (path: Support.mainPath + ".d/10.conf", contents: "[Daemon]\nHideWhileSharing=\n"),
        ])
        #expect(again.daemon.hideWhileSharing)
        for yes in ["yes", "true", "on", "1", "YES"] {
            let parsed = try IslandConfiguration.parse(files: [(path: Support.mainPath, contents: "[Daemon]\nHideWhileSharing=\(yes)\n")])
            #expect(parsed.daemon.hideWhileSharing, "\(yes)")
        }
    }

    @Test func anythingButYesOrNoIsRefused() {
        Support.expectError(
            "[Daemon]\nHideWhileSharing=maybe\n",
            "\(Support.mainPath):2: invalid value 'maybe' for HideWhileSharing=: expected yes or no")
        Support.expectError(
            "[Limits]\nHideWhileSharing=no\n",
            "\(Support.mainPath):2: HideWhileSharing= belongs in [Daemon], not [Limits]")
    }
}
