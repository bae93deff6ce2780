import IslandCore
import Testing

/// The one duration reader: what the configuration and the CLI each accepted before they
/// shared it, and what neither may accept.
@Suite struct TimeSpanTests {
    @Test(arguments: [
        // The CLI's forms.
        ("25m", 1500.0), ("1h30m", 5400), ("90s", 90), ("1.5h", 5400), ("90", 90), ("2d", 172_800), ("0", 0),
        // The configuration's, which the CLI refused before.
        ("25min", 1500), ("1h 30m", 5400), ("1h 30min", 5400), ("1 min 30", 90), ("1h30", 3630), ("250ms", 0.25),
        ("500us", 0.0005), ("2 seconds", 2), ("1w", 604_800), ("1M", 2_629_800), ("1y", 31_557_600), (" 10 s ", 10),
    ])
    func reads(text: String, seconds: Double) {
        #expect(TimeSpan.seconds(text).map { abs($0 - seconds) < 1e-9 } == true, "\(text)")
    }

    @Test func aLeadingMinusNegatesTheWhole() {
        #expect(TimeSpan.seconds("-5m") == -300)
        #expect(TimeSpan.seconds("-1h 30min") == -5400)
        #expect(TimeSpan.seconds("5m -1s") == nil)
    }

    @Test(arguments: ["", " ", "soon", "m", "5 parsecs", "1e3", "inf", "infinity", "nan", "0x10", "+5", "1..5s", "--5", "٣s", "1e400"])
    func refuses(text: String) {
        #expect(TimeSpan.seconds(text) == nil, "\(text)")
    }

    @Test func unitsAreCaseSensitiveAsInSystemd() {
        #expect(TimeSpan.seconds("1m") == 60)
        #expect(TimeSpan.seconds("1M") == 2_629_800)
        #expect(TimeSpan.seconds("1H") == nil)
    }
}
