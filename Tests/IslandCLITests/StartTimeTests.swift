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

    /// A scheduled start is refused a date already past, which the daemon would start at once;
    /// now itself (`+0`) and any later time are kept.
    @Test func aScheduledStartIsRefusedADateAlreadyPast() {
        #expect(StartTime.scheduled("2027-01-15T07:59:59Z", now: Self.now) == .failure(.past(now: Self.now)))
        #expect(StartTime.scheduled("2027-01-15T09:00:00", now: Self.now + 1, timeZone: Self.paris) == .failure(.past(now: Self.now + 1)))
        #expect(StartTime.scheduled("2027-01-15T08:00:00Z", now: Self.now) == .success(Self.now))
        #expect(StartTime.scheduled("+0", now: Self.now) == .success(Self.now))
        #expect(StartTime.scheduled("+2h", now: Self.now) == .success(Self.now + 7200))
        #expect(StartTime.scheduled("tomorrow", now: Self.now) == .failure(.malformed))
        let message = StartTime.Refusal.past(now: Self.now).message(option: "--at", text: "2027-01-14T08:00Z")
        #expect(message.contains("--at 2027-01-14T08:00Z is in the past") && message.contains("2027-01-15T08:00:00Z"))
        #expect(StartTime.Refusal.malformed.message(option: "--start-date", text: "x").hasPrefix("--start-date must be a time span"))
    }

    @Test(arguments: ["10m", "+", "+-5m", "tomorrow", "2027-13-45T99:00:00Z", "1800000000", "+10 parsecs", "", "2027-02-30T09:00Z", "2027-01-15T09:00+25:00"])
    func anythingElseIsRefused(_ text: String) {
        #expect(StartTime.parse(text, now: Self.now) == nil)
    }
}
