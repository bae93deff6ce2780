import IslandCore
import Testing

/// `ExpandedSec=` and `AlertSec=`: how long the island stays expanded for the user and for an
/// alert. A user may want longer; the graphical tests set an hour, so that a busy machine
/// photographs an expansion before it ends by itself.
@Suite struct ExpansionTimesConfigurationTests {
    typealias Support = ConfigurationTestSupport

    @Test func builtInUntilSetAndBuiltInAgainWhenEmptied() throws {
        #expect(IslandConfiguration.defaults.daemon.expandedFor == nil)
        #expect(IslandConfiguration.defaults.daemon.alertFor == nil)
        let set = try IslandConfiguration.parse(files: [(path: Support.mainPath, contents: "[Daemon]\nExpandedSec=1h\nAlertSec=30\n")])
        #expect(set.daemon.expandedFor == 3600)
        #expect(set.daemon.alertFor == 30)
        let again = try IslandConfiguration.parse(files: [
            (path: Support.mainPath, contents: "[Daemon]\nExpandedSec=1h\nAlertSec=30\n"),
            (path: Support.mainPath + ".d/10.conf", contents: "[Daemon]\nExpandedSec=\nAlertSec=\n"),
        ])
        #expect(again.daemon.expandedFor == nil && again.daemon.alertFor == nil)
    }

    @Test func zeroAndNonsenseAreRefused() {
        Support.expectError("[Daemon]\nExpandedSec=0\n", "\(Support.mainPath):2: invalid value '0' for ExpandedSec=: must be greater than 0")
        Support.expectError(
            "[Daemon]\nAlertSec=soon\n",
            "\(Support.mainPath):2: invalid value 'soon' for AlertSec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)")
        Support.expectError("[Limits]\nAlertSec=5\n", "\(Support.mainPath):2: AlertSec= belongs in [Daemon], not [Limits]")
    }

    /// The arbiter a daemon builds from them keeps an expansion for the configured time.
    @Test func anArbiterWithAnHourKeepsTheUsersExpansionForAnHour() {
        var arbiter = IslandArbiter(interactions: IslandInteractions(expandTimeout: 3600, alertExpansion: 3600))
        let candidate = IslandCandidate(id: "a", app: "org.example.A", state: .active, startedAt: 0)
        _ = arbiter.recompute(candidates: [candidate], now: 0)
        _ = arbiter.expand(id: "a", now: 0)
        _ = arbiter.recompute(candidates: [candidate], now: 3599)
        #expect(arbiter.presentation.expanded == "a")
        _ = arbiter.recompute(candidates: [candidate], now: 3601)
        #expect(arbiter.presentation.expanded == nil)
    }
}
