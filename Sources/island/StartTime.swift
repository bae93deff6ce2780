import Foundation
import IslandCore

/// `island start --at TIME`: when a scheduled activity starts, as seconds since the epoch.
/// Pure: `now` and the local time zone are given.
enum StartTime {
    /// `+DURATION` from `now` (`+90`, `+10m`, `+1h 30min`, systemd's time spans), or an ISO
    /// 8601 date and time — `2026-12-06T18:30:00Z`, with an offset (`+01:00`), fractional
    /// seconds, or none of either (then in `timeZone`, the local one). Nil when it is neither:
    /// a guess at what a malformed time meant would start the activity at a time nobody chose.
    static func parse(_ text: String, now: Double, timeZone: TimeZone = .current) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("+") {
            guard let seconds = TimeSpan.seconds(String(trimmed.dropFirst())), seconds >= 0 else { return nil }
            return now + seconds
        }
        return iso8601(trimmed, timeZone: timeZone)
    }

    /// `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH[:]MM]`; a space may stand for the `T`.
    private static func iso8601(_ text: String, timeZone: TimeZone) -> Double? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|z|[+-]\d{2}:?\d{2})?$"#
        guard let match = text.wholeMatch(of: try! Regex(pattern)) else { return nil }
        func part(_ index: Int) -> Substring? { match.output[index].substring }
        func number(_ index: Int) -> Int? { part(index).flatMap { Int($0) } }
        guard let year = number(1), let month = number(2), let day = number(3), let hour = number(4), let minute = number(5) else { return nil }
        let second = number(6) ?? 0
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second)
        else { return nil }
        var zone = timeZone
        if let offset = part(8) {
            if offset == "Z" || offset == "z" {
                zone = TimeZone(secondsFromGMT: 0)!
            } else {
                let digits = offset.dropFirst().filter(\.isNumber)
                guard let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)), hours <= 23, minutes <= 59,
                    let fixed = TimeZone(secondsFromGMT: (offset.hasPrefix("-") ? -1 : 1) * (hours * 3600 + minutes * 60))
                else { return nil }
                zone = fixed
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        // A date that does not exist (February 30) is refused, not rolled over.
        guard let date = calendar.date(from: components),
            calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: year, month: month, day: day)
        else { return nil }
        let fraction = part(7).flatMap { Double("0" + $0) } ?? 0
        return date.timeIntervalSince1970 + fraction
    }

    /// `parse` for a start that is scheduled (`island start --at`, `island push --start-date`):
    /// the seconds since the epoch, or why not. A date already past is refused: the daemon
    /// starts such an activity at once (PROTOCOL.md, `start`), which for a date typed by hand —
    /// yesterday's, or a local time meant for tomorrow — is the mistake passing for a schedule.
    /// `+0` is now, not past.
    static func scheduled(_ text: String, now: Double, timeZone: TimeZone = .current) -> Result<Double, Refusal> {
        guard let date = parse(text, now: now, timeZone: timeZone) else { return .failure(.malformed) }
        guard date >= now else { return .failure(.past(now: now)) }
        return .success(date)
    }

    /// Why `scheduled` refused a time.
    enum Refusal: Error, Equatable {
        /// Neither a `+` time span nor an ISO 8601 date and time.
        case malformed
        /// Before `now`.
        case past(now: Double)

        /// The message after the option's name and the time given (`--at TIME`).
        func message(option: String, text: String) -> String {
            switch self {
            case .malformed:
                "\(StartTime.usage.replacingOccurrences(of: "--at", with: option)), not \(text)"
            case .past(let now):
                "\(option) \(text) is in the past (it is \(Date(timeIntervalSince1970: now).formatted(.iso8601)) now): "
                    + "give a later time, or start without \(option) to start now"
            }
        }
    }

    static let usage =
        "--at must be a time span from now such as +90, +10m or +1h 30min, or an ISO 8601 date and time such as 2026-12-06T18:30:00Z or 2026-12-06T18:30 (local time)"
}
