import IslandCore
import Testing

@Suite struct ConfigurationSyntaxTests {
    typealias Support = ConfigurationTestSupport

    @Test func commentsBlankLinesAndWhitespaceAreIgnored() throws {
        let configuration = try Support.parse(
            """
            # islandd configuration
            ; a comment in the other style

              [Limits]  \t
            \tStartBudget =  7\t
               # indented comment
            UpdatesPerSecond=   3
            """)
        #expect(configuration.limits.global.startBudget == 7)
        #expect(configuration.limits.global.updatesPerSecond == 3)
    }

    @Test func aTrailingBackslashContinuesTheLine() throws {
        let configuration = try Support.parse(
            """
            [Limits]
            MaxActiveSec=1h \\
              30min\\
            15s
            StartBudget=4
            """)
        #expect(configuration.limits.global.maximumActiveDuration == 5415)
        #expect(configuration.limits.global.startBudget == 4)
    }

    @Test func theBackslashBecomesASpaceAsInSystemd() {
        Support.expectError(
            "[Limits]\nStart\\\nBudget=4",
            "/etc/island/islandd.conf:2: unknown key 'Start Budget=' in [Limits]; did you mean 'StartBudget='?")
    }

    @Test func commentLinesInsideAContinuationAreSkipped() throws {
        let configuration = try Support.parse(
            """
            [Limits]
            MaxActiveSec=1h \\
            # the minutes follow
            15min
            """)
        #expect(configuration.limits.global.maximumActiveDuration == 4500)
    }

    @Test func aContinuedLineReportsErrorsAtItsFirstLine() {
        Support.expectError(
            "[Limits]\n\nStartBudget=\\\n  many",
            "/etc/island/islandd.conf:3: invalid value 'many' for StartBudget=: expected a whole number greater than 0")
    }

    @Test func aBackslashOnTheLastLineContinuesIntoNothing() throws {
        #expect(try Support.parse("[Limits]\nStartBudget=6\\").limits.global.startBudget == 6)
    }

    @Test func windowsLineEndingsAreAccepted() throws {
        #expect(try Support.parse("[Limits]\r\nStartBudget=6\r\n").limits.global.startBudget == 6)
    }

    @Test func sectionsMayRepeat() throws {
        let configuration = try Support.parse("[Limits]\nStartBudget=6\n[Daemon]\nMaxConnections=3\n[Limits]\nAlertBudget=2")
        #expect(configuration.limits.global.startBudget == 6)
        #expect(configuration.limits.global.alertBudget == 2)
    }
}
