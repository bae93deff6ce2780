import IslandCore
import Testing

@Suite struct ConfigurationPrecedenceTests {
    typealias Support = ConfigurationTestSupport

    @Test func laterDropInsOverrideEarlierFilesPerKey() throws {
        let configuration = try IslandConfiguration.parse(files: [
            (path: "/etc/island/islandd.conf", contents: "[Limits]\nUpdatesPerSecond=3\nStartBudget=4\n[Daemon]\nMaxConnections=10\nIdleExitSec=1min"),
            (path: "/etc/island/islandd.conf.d/10-rate.conf", contents: "[Limits]\nUpdatesPerSecond=6\n[Daemon]\nMaxConnections=20"),
            (path: "/etc/island/islandd.conf.d/20-rate.conf", contents: "[Limits]\nUpdatesPerSecond=9"),
        ])
        #expect(configuration.limits.global.updatesPerSecond == 9)
        #expect(configuration.limits.global.startBudget == 4)  // untouched by the drop-ins
        #expect(configuration.daemon.maxConnections == 20)
        #expect(configuration.daemon.idleExit == 60)
    }

    @Test func theLastAssignmentInOneFileWins() throws {
        let configuration = try Support.parse("[Limits]\nStartBudget=3\nStartBudget=8\n[Limits]\nStartBudget=5")
        #expect(configuration.limits.global.startBudget == 5)
    }

    @Test func appSectionsStartFromTheFinalGlobalValues() throws {
        let configuration = try IslandConfiguration.parse(files: [
            (
                path: "/etc/island/islandd.conf",
                contents: """
                [Limits]
                UpdatesPerSecond=5
                MaxActivities=40

                [App:org.example.x]
                StartBudget=3
                """
            ),
            // A drop-in read later still raises the global value the app inherits.
            (path: "/etc/island/islandd.conf.d/50-global.conf", contents: "[Limits]\nMaxActiveSec=2h"),
        ])
        let app = configuration.limits.limits(for: "org.example.x")
        #expect(app.updatesPerSecond == 5)
        #expect(app.startBudget == 3)
        #expect(app.maximumActiveDuration == 7200)
        #expect(app.maximumActivities == 40)
        #expect(app.alertBudget == ActivityLimits.defaults.alertBudget)
        #expect(configuration.limits.global.startBudget == ActivityLimits.defaults.startBudget)
    }

    @Test func appSectionsFromSeveralFilesMerge() throws {
        let configuration = try IslandConfiguration.parse(files: [
            (path: "/etc/island/islandd.conf", contents: "[App:org.example.x]\nStartBudget=3\nAlertBudget=1"),
            (path: "/etc/island/islandd.conf.d/a.conf", contents: "[App:org.example.x]\nAlertBudget=2\n[App:org.example.y]\nStartBudget=7"),
        ])
        #expect(configuration.limits.limits(for: "org.example.x").startBudget == 3)
        #expect(configuration.limits.limits(for: "org.example.x").alertBudget == 2)
        #expect(configuration.limits.limits(for: "org.example.y").startBudget == 7)
        #expect(configuration.limits.perApp.keys.sorted() == ["org.example.x", "org.example.y"])
    }

    @Test func anEmptyAssignmentUndoesEarlierOnes() throws {
        let configuration = try IslandConfiguration.parse(files: [
            (
                path: "/etc/island/islandd.conf",
                contents: """
                [Limits]
                StartBudget=3
                UpdatesPerSecond=4
                [App:org.example.x]
                UpdatesPerSecond=1
                [Daemon]
                MaxConnections=5
                """
            ),
            (
                path: "/etc/island/islandd.conf.d/reset.conf",
                contents: """
                [Limits]
                StartBudget=
                [App:org.example.x]
                UpdatesPerSecond=
                [Daemon]
                MaxConnections=
                """
            ),
        ])
        #expect(configuration.limits.global.startBudget == ActivityLimits.defaults.startBudget)
        #expect(configuration.limits.global.updatesPerSecond == 4)
        // Back to the global value, so the app needs no override at all.
        #expect(configuration.limits.perApp.isEmpty)
        #expect(configuration.limits.limits(for: "org.example.x").updatesPerSecond == 4)
        #expect(configuration.daemon.maxConnections == nil)
    }

    @Test func eachFileStartsOutsideAnySection() {
        Support.expectError(
            [
                (path: "/etc/island/islandd.conf", contents: "[Limits]\nStartBudget=3"),
                (path: "/etc/island/islandd.conf.d/x.conf", contents: "# comment\nStartBudget=4"),
            ],
            "/etc/island/islandd.conf.d/x.conf:2: 'StartBudget=' is outside any section; put it under [Limits], [Daemon], [Push], [LockScreen] or [App:<app-id>]"
        )
    }
}
