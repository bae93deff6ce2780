import Foundation

/// The instant a render happens at and the time zone dates are written in: a template's
/// `time` needs both (a date of another day is written with its day).
struct MustacheClock: Sendable {
    var now: Double
    var timeZone: TimeZone

    static let epoch = MustacheClock(now: 0, timeZone: TimeZone(secondsFromGMT: 0)!)
}

/// How the layout transforms write values for people.
enum MustacheFormat {
    /// Dates within this many seconds of the epoch (about ±3000 years); past it, none.
    static let maximumDate = 1e11

    /// Epoch seconds as a time of day, `14:05`; `25 Nov 14:05` on another day than `clock.now`,
    /// with the year when that differs too. Nil for what is no date anyone means.
    static func time(_ seconds: Double, clock: MustacheClock) -> String? {
        guard seconds.isFinite, abs(seconds) < maximumDate else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = clock.timeZone
        let parts: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute]
        let date = calendar.dateComponents(parts, from: Date(timeIntervalSince1970: seconds.rounded(.down)))
        guard let year = date.year, let month = date.month, let day = date.day, let hour = date.hour, let minute = date.minute,
            (1...12).contains(month)
        else { return nil }
        let clockTime = twoDigits(hour) + ":" + twoDigits(minute)
        let now =
            clock.now.isFinite && abs(clock.now) < maximumDate
            ? calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: clock.now)) : DateComponents()
        if now.year == year, now.month == month, now.day == day { return clockTime }
        let dayText = "\(day) \(monthNames[month - 1])"
        return now.year == year ? "\(dayText) \(clockTime)" : "\(dayText) \(year) \(clockTime)"
    }

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Seconds as a length of time: `2.5 s` and `42 s` under a minute, then `5:03` or `1:02:03`
    /// as timers show it. Nil for a negative or non-finite length.
    static func duration(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        if seconds < 10 {
            let tenths = (seconds * 10).rounded() / 10
            return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
        }
        if seconds < 60 { return "\(Int(seconds.rounded(.down))) s" }
        return RenderedTimer(from: nil, to: nil, countsDown: false, seconds: seconds).text
    }

    /// An identifier-like value as words, `inFlight` or `on_the_way` → "In flight", "On the
    /// way"; `running` → "Running". Text that is not one (it starts with a capital, has spaces
    /// or anything but ASCII letters, digits, `_` and `-`: "Sam", "LH 454") is left as it is.
    static func humanized(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, ("a"..."z").contains(first),
            text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") })
        else { return text }
        let sentence = DefaultLayoutShape.words(Substring(text)).map { $0.lowercased() }.joined(separator: " ")
        return sentence.prefix(1).uppercased() + sentence.dropFirst()
    }
}
