import Foundation
import Testing
@testable import island

/// `island start --at`: a time span after `+`, or an ISO 8601 date; nothing else.
@Suite struct StartTimeTests {
    static let now: Double = 1_800_000_000
    static let paris = TimeZone(identifier: "Europe/Paris")!

    @Test(arguments: [("+90", 90.0), ("+10m", 600), ("+1h 30min", 5400), (" +2h ", 7200), ("+0", 0)])
    func aSpanFromNow(_ text: String, _ seconds: Double) {
        #expect(StartTime.parse(text, now: Self.now) == Self.now + seconds)
    }

    @Test func anISODateWithAZoneIsThatInstant() {
        #expect(StartTime.parse("2027-01-15T08:00:00Z", now: Self.now) == 1_800_000_000)
        #expect(StartTime.parse("2027-01-15T09:00:00+01:00", now: Self.now) == 1_800_000_000)
        #expect(StartTime.parse("2027-01-15T03:30:00-0430", now: Self.now) == 1_800_000_000)
        #expect(StartTime.parse("2027-01-15T08:00:00.5Z", now: Self.now) == 1_800_000_000.5)
        #expect(StartTime.parse("2027-01-15 08:00Z", now: Self.now) == 1_800_000_000)
    }

    @Test func anISODateWithoutAZoneIsLocalTime() {
        #expect(StartTime.parse("2027-01-15T09:00:00", now: Self.now, timeZone: Self.paris) == 1_800_000_000)
        #expect(StartTime.parse("2027-01-15T09:00", now: Self.now, timeZone: Self.paris) == 1_800_000_000)
    }

    @Test(arguments: ["10m", "+", "+-5m", "tomorrow", "2027-13-45T99:00:00Z", "1800000000", "+10 parsecs", "", "2027-02-30T09:00Z", "2027-01-15T09:00+25:00"])
    func anythingElseIsRefused(_ text: String) {
        #expect(StartTime.parse(text, now: Self.now) == nil)
    }
}
