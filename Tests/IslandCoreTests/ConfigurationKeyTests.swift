import IslandCore
import Testing

@Suite struct ConfigurationKeyTests {
    typealias Support = ConfigurationTestSupport

    @Test func noFilesGiveTheDefaults() throws {
        let configuration = try IslandConfiguration.parse(files: [])
        #expect(configuration == .defaults)
        #expect(configuration.limits == LimitsPolicy(global: .defaults, perApp: [:]))
        #expect(configuration.daemon == DaemonSettings(idleExit: nil, maxConnections: nil, maxConnectionsPerUser: nil, maxMessageSize: nil))
    }

    @Test func anEmptyOrCommentOnlyFileGivesTheDefaults() throws {
        #expect(try Support.parse("") == .defaults)
        #expect(try Support.parse("# nothing\n; here\n\n[Limits]\n\n[Daemon]\n") == .defaults)
    }

    @Test func everyLimitKeyIsRead() throws {
        let configuration = try Support.parse(
            """
            [Limits]
            MaxPayloadBytes=8192
            MaxActivitiesPerApp=7
            MaxActivities=64
            MaxEndedActivitiesPerApp=0
            MaxEndedActivities=100
            StartBudget=20
            StartBudgetWindowSec=2min
            UpdatesPerSecond=2.5
            FrequentUpdatesPerSecond=30
            AlertBudget=0
            AlertBudgetWindowSec=30min
            MaxActiveSec=12h
            MaxDismissalDelaySec=0
            OwnerGoneGraceSec=45s
            """)
        var expected = ActivityLimits()
        expected.maximumPayloadBytes = 8192
        expected.maximumActivitiesPerApp = 7
        expected.maximumActivities = 64
        expected.maximumEndedActivitiesPerApp = 0
        expected.maximumEndedActivities = 100
        expected.startBudget = 20
        expected.startBudgetWindow = 120
        expected.updatesPerSecond = 2.5
        expected.frequentUpdatesPerSecond = 30
        expected.alertBudget = 0
        expected.alertBudgetWindow = 1800
        expected.maximumActiveDuration = 12 * 3600
        expected.maximumDismissalDelay = 0
        expected.ownerGoneGracePeriod = 45
        #expect(configuration.limits == LimitsPolicy(global: expected))
        #expect(configuration.daemon == DaemonSettings())
    }

    @Test func everyLimitKeyIsReadPerApp() throws {
        let configuration = try Support.parse(
            """
            [App:org.example.App]
            MaxPayloadBytes=1K
            MaxActivitiesPerApp=1
            MaxEndedActivitiesPerApp=3
            StartBudget=2
            StartBudgetWindowSec=10
            UpdatesPerSecond=0.5
            FrequentUpdatesPerSecond=4
            AlertBudget=1
            AlertBudgetWindowSec=1d
            MaxActiveSec=1h
            MaxDismissalDelaySec=10min
            OwnerGoneGraceSec=0
            """)
        var expected = ActivityLimits()
        expected.maximumPayloadBytes = 1024
        expected.maximumActivitiesPerApp = 1
        expected.maximumEndedActivitiesPerApp = 3
        expected.startBudget = 2
        expected.startBudgetWindow = 10
        expected.updatesPerSecond = 0.5
        expected.frequentUpdatesPerSecond = 4
        expected.alertBudget = 1
        expected.alertBudgetWindow = 86400
        expected.maximumActiveDuration = 3600
        expected.maximumDismissalDelay = 600
        expected.ownerGoneGracePeriod = 0
        #expect(configuration.limits.global == .defaults)
        #expect(configuration.limits.perApp == ["org.example.App": expected])
        #expect(configuration.limits.limits(for: "org.example.App") == expected)
        #expect(configuration.limits.limits(for: "org.example.Other") == .defaults)
    }

    @Test func everyDaemonKeyIsRead() throws {
        let configuration = try Support.parse(
            """
            [Daemon]
            IdleExitSec=5min
            MaxConnections=4096
            MaxConnectionsPerUser=256
            MaxMessageSize=1M
            """)
        #expect(configuration.daemon == DaemonSettings(idleExit: 300, maxConnections: 4096, maxConnectionsPerUser: 256, maxMessageSize: 1 << 20))
        #expect(configuration.limits == LimitsPolicy())
        #expect(try Support.parse("[Daemon]\nIdleExitSec=0").daemon.idleExit == 0)
    }

    @Test func updatesPerSecondCanBeUncapped() throws {
        let configuration = try Support.parse(
            """
            [App:org.island.Bench]
            UpdatesPerSecond=infinity
            FrequentUpdatesPerSecond=infinity
            """)
        let bench = configuration.limits.limits(for: "org.island.Bench")
        #expect(bench.updatesPerSecond == .infinity)
        #expect(bench.frequentUpdatesPerSecond == .infinity)
        #expect(configuration.limits.global.updatesPerSecond == 2)
    }

    @Test(arguments: [
        ("0", 0.0), ("90", 90), ("1.5", 1.5), ("30s", 30), ("250ms", 0.25), ("5min", 300), ("8h", 28800),
        ("1h 30min", 5400), ("1h30min", 5400), ("2d", 172_800), ("1w", 604_800), ("1.5h", 5400),
        ("1 min 30", 90), ("10 s", 10), ("500us", 0.0005), ("2 seconds", 2), ("3 minutes", 180), ("1hr", 3600),
        ("1M", 2_629_800), ("1y", 31_557_600), ("100msec", 0.1),
    ])
    func timeSpans(text: String, seconds: Double) throws {
        let limits = try Support.parse("[Limits]\nOwnerGoneGraceSec=\(text)").limits.global
        #expect(abs(limits.ownerGoneGracePeriod - seconds) < 1e-9)
    }

    @Test(arguments: [("4096", 4096), ("4K", 4096), ("2M", 2 << 20), ("1G", 1 << 30), ("512B", 512)])
    func sizes(text: String, bytes: Int) throws {
        #expect(try Support.parse("[Limits]\nMaxPayloadBytes=\(text)").limits.global.maximumPayloadBytes == bytes)
        #expect(try Support.parse("[Daemon]\nMaxMessageSize=\(text)").daemon.maxMessageSize == bytes)
    }
}
