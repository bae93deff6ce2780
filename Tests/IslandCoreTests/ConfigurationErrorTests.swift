import IslandCore
import Testing

@Suite struct ConfigurationErrorTests {
    typealias Support = ConfigurationTestSupport

    @Test func errorsAreFormattedLikeACompiler() {
        let error = ConfigurationError(path: "/etc/island/islandd.conf", line: 3, message: "oops")
        #expect(error.description == "/etc/island/islandd.conf:3: oops")
    }

    @Test func unknownSection() {
        Support.expectError(
            "# x\n[Limit]\nStartBudget=1",
            "/etc/island/islandd.conf:2: unknown section [Limit]; did you mean [Limits]? Sections are [Limits], [Daemon], [Push], [LockScreen], [LockScreen:<app-id>] and [App:<app-id>]"
        )
        Support.expectError(
            "[app:org.example.App]",
            "/etc/island/islandd.conf:1: unknown section [app:org.example.App]; did you mean [App:org.example.App]? Sections are [Limits], [Daemon], [Push], [LockScreen], [LockScreen:<app-id>] and [App:<app-id>]"
        )
    }

    @Test func invalidAppID() {
        Support.expectError(
            "[App:firefox]",
            "/etc/island/islandd.conf:1: invalid app id 'firefox' in [App:firefox]: expected a reverse-DNS name such as org.example.App")
        Support.expectError(
            "\n[App:]",
            "/etc/island/islandd.conf:2: invalid app id '' in [App:]: expected a reverse-DNS name such as org.example.App")
        Support.expectError(
            "[App:org..App]",
            "/etc/island/islandd.conf:1: invalid app id 'org..App' in [App:org..App]: expected a reverse-DNS name such as org.example.App")
    }

    @Test func unknownKeySuggestsTheClosestOne() {
        Support.expectError(
            "[Limits]\nUpdatesPerSec=3",
            "/etc/island/islandd.conf:2: unknown key 'UpdatesPerSec=' in [Limits]; did you mean 'UpdatesPerSecond='?")
        Support.expectError(
            "[Limits]\nstartbudget=3",
            "/etc/island/islandd.conf:2: unknown key 'startbudget=' in [Limits]; did you mean 'StartBudget='?")
        Support.expectError(
            "[App:org.example.App]\nMaxActivitesPerApp=3",
            "/etc/island/islandd.conf:2: unknown key 'MaxActivitesPerApp=' in [App:org.example.App]; did you mean 'MaxActivitiesPerApp='?")
        Support.expectError(
            "[Daemon]\nIdleExit=3",
            "/etc/island/islandd.conf:2: unknown key 'IdleExit=' in [Daemon]; did you mean 'IdleExitSec='?")
    }

    @Test func keysInTheWrongSectionSayWhereTheyBelong() {
        Support.expectError("[Limits]\nIdleExitSec=3", "/etc/island/islandd.conf:2: IdleExitSec= belongs in [Daemon], not [Limits]")
        Support.expectError(
            "[App:org.example.App]\nMaxConnections=3",
            "/etc/island/islandd.conf:2: MaxConnections= belongs in [Daemon], not [App:org.example.App]")
        Support.expectError("[Daemon]\nStartBudget=3", "/etc/island/islandd.conf:2: StartBudget= belongs in [Limits] or [App:<app-id>], not [Daemon]")
    }

    @Test func maxActivitiesIsGlobalOnly() {
        Support.expectError(
            "[Limits]\nMaxActivities=10\n[App:org.example.App]\nMaxActivities=3",
            "/etc/island/islandd.conf:4: MaxActivities= is only allowed in [Limits]: it caps the live activities of all apps together; use MaxActivitiesPerApp= for one app"
        )
    }

    @Test func maxEndedActivitiesIsGlobalOnly() {
        Support.expectError(
            "[App:org.example.App]\nMaxEndedActivities=3",
            "/etc/island/islandd.conf:2: MaxEndedActivities= is only allowed in [Limits]: it caps the ended activities of all apps together; use MaxEndedActivitiesPerApp= for one app"
        )
    }

    @Test func keyOutsideASection() {
        Support.expectError(
            "# header comment\n\nUpdatesPerSecond=4\n[Limits]",
            "/etc/island/islandd.conf:3: 'UpdatesPerSecond=' is outside any section; put it under [Limits], [Daemon], [Push], [LockScreen] or [App:<app-id>]")
    }

    @Test func missingClosingBracket() {
        Support.expectError("[Limits\nStartBudget=1", "/etc/island/islandd.conf:1: missing ']' at the end of the section header '[Limits'")
        Support.expectError("[Limits] # comment", "/etc/island/islandd.conf:1: missing ']' at the end of the section header '[Limits] # comment'")
    }

    @Test func linesThatAreNotAssignments() {
        Support.expectError(
            "[Limits]\nStartBudget 3",
            "/etc/island/islandd.conf:2: expected Key=Value, a [Section] header or a comment, got 'StartBudget 3'")
        Support.expectError("[Limits]\n = 3", "/etc/island/islandd.conf:2: missing key before '='")
    }

    @Test(arguments: [
        ("StartBudget=ten", "invalid value 'ten' for StartBudget=: expected a whole number greater than 0"),
        ("StartBudget=2.5", "invalid value '2.5' for StartBudget=: expected a whole number greater than 0"),
        ("StartBudget=0", "invalid value '0' for StartBudget=: must be greater than 0"),
        ("StartBudget=-1", "invalid value '-1' for StartBudget=: must not be negative"),
        ("MaxActivities=0", "invalid value '0' for MaxActivities=: must be greater than 0"),
        ("MaxActivitiesPerApp=0", "invalid value '0' for MaxActivitiesPerApp=: must be greater than 0"),
        ("AlertBudget=-2", "invalid value '-2' for AlertBudget=: must not be negative"),
        ("AlertBudget=lots", "invalid value 'lots' for AlertBudget=: expected a whole number (0 or more)"),
        ("MaxPayloadBytes=0", "invalid value '0' for MaxPayloadBytes=: must be greater than 0"),
        ("MaxPayloadBytes=4Q", "invalid value '4Q' for MaxPayloadBytes=: expected a size in bytes greater than 0, such as 4096, 64K or 1M"),
        (
            "MaxPayloadBytes=99999999999999999999",
            "invalid value '99999999999999999999' for MaxPayloadBytes=: expected a size in bytes greater than 0, such as 4096, 64K or 1M"
        ),
        ("UpdatesPerSecond=0", "invalid value '0' for UpdatesPerSecond=: must be greater than 0"),
        ("UpdatesPerSecond=-3", "invalid value '-3' for UpdatesPerSecond=: must not be negative"),
        (
            "UpdatesPerSecond=fast",
            "invalid value 'fast' for UpdatesPerSecond=: expected a number of updates per second greater than 0, such as 2 or 0.5, or 'infinity' for no cap"
        ),
        (
            "UpdatesPerSecond=1e3",
            "invalid value '1e3' for UpdatesPerSecond=: expected a number of updates per second greater than 0, such as 2 or 0.5, or 'infinity' for no cap"
        ),
        (
            "UpdatesPerSecond=nan",
            "invalid value 'nan' for UpdatesPerSecond=: expected a number of updates per second greater than 0, such as 2 or 0.5, or 'infinity' for no cap"
        ),
        ("FrequentUpdatesPerSecond=0.0", "invalid value '0.0' for FrequentUpdatesPerSecond=: must be greater than 0"),
        ("MaxActiveSec=0", "invalid value '0' for MaxActiveSec=: must be greater than 0"),
        ("MaxActiveSec=-5min", "invalid value '-5min' for MaxActiveSec=: must not be negative"),
        (
            "MaxActiveSec=infinity",
            "invalid value 'infinity' for MaxActiveSec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)"
        ),
        (
            "StartBudgetWindowSec=5 parsecs",
            "invalid value '5 parsecs' for StartBudgetWindowSec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)"
        ),
        (
            "AlertBudgetWindowSec=1h-30min",
            "invalid value '1h-30min' for AlertBudgetWindowSec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)"
        ),
        ("OwnerGoneGraceSec=-1", "invalid value '-1' for OwnerGoneGraceSec=: must not be negative"),
        (
            "MaxDismissalDelaySec=min",
            "invalid value 'min' for MaxDismissalDelaySec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)"
        ),
    ])
    func invalidLimitValues(assignment: String, message: String) {
        Support.expectError("[Limits]\n\(assignment)", "/etc/island/islandd.conf:2: \(message)")
        if !assignment.hasPrefix("MaxActivities=") {
            Support.expectError("[App:org.example.App]\n\n\(assignment)", "/etc/island/islandd.conf:3: \(message)")
        }
    }

    @Test(arguments: [
        ("IdleExitSec=-1", "invalid value '-1' for IdleExitSec=: must not be negative"),
        ("IdleExitSec=soon", "invalid value 'soon' for IdleExitSec=: expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)"),
        ("MaxConnections=0", "invalid value '0' for MaxConnections=: must be greater than 0"),
        ("MaxConnectionsPerUser=many", "invalid value 'many' for MaxConnectionsPerUser=: expected a whole number greater than 0"),
        ("MaxMessageSize=0K", "invalid value '0K' for MaxMessageSize=: must be greater than 0"),
    ])
    func invalidDaemonValues(assignment: String, message: String) {
        Support.expectError("[Daemon]\n\(assignment)", "/etc/island/islandd.conf:2: \(message)")
    }

    @Test func errorsNameTheDropInTheyAreIn() {
        Support.expectError(
            [
                (path: "/etc/island/islandd.conf", contents: "[Limits]\nStartBudget=3"),
                (path: "/etc/island/islandd.conf.d/20-bad.conf", contents: "[Limits]\n# fine so far\nStartBudget=three"),
            ],
            "/etc/island/islandd.conf.d/20-bad.conf:3: invalid value 'three' for StartBudget=: expected a whole number greater than 0")
    }

    @Test func aBadValueIsAnErrorEvenIfALaterFileOverridesIt() {
        // Refuse rather than guess: a typo in one file is reported even when it would not matter.
        Support.expectError(
            [
                (path: "/etc/island/islandd.conf", contents: "[Limits]\nStartBudget=x"),
                (path: "/etc/island/islandd.conf.d/a.conf", contents: "[Limits]\nStartBudget=3"),
            ],
            "/etc/island/islandd.conf:2: invalid value 'x' for StartBudget=: expected a whole number greater than 0")
    }
}
