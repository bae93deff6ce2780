/// Durations as systemd writes them (systemd.time(7)): the one reader of durations, for the
/// configuration (`IdleExitSec=1h 30min`) and the CLI (`island timer 25m`) alike.
package enum TimeSpan {
    /// Seconds per unit, with systemd's spellings. Case matters: `m` is a minute and `M` a
    /// month, as in systemd.
    private static let units: [String: Double] = [
        "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "μs": 1e-6,
        "ms": 1e-3, "msec": 1e-3,
        "s": 1, "sec": 1, "second": 1, "seconds": 1,
        "m": 60, "min": 60, "minute": 60, "minutes": 60,
        "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
        "d": 86400, "day": 86400, "days": 86400,
        "w": 604_800, "week": 604_800, "weeks": 604_800,
        "M": 2_629_800, "month": 2_629_800, "months": 2_629_800,
        "y": 31_557_600, "year": 31_557_600, "years": 31_557_600,
    ]

    /// The seconds `text` spans: one or more `<number><unit>` parts, spaces optional
    /// (`25m`, `25min`, `1h30m`, `1h 30min`, `1.5h`); a part without a unit is seconds, so a
    /// plain number is too. Numbers are plain decimals: no exponent, `inf` or `nan`. A leading
    /// `-` negates the whole, so a caller can say "must not be negative" instead of "unreadable".
    /// Nil when unreadable or not finite.
    package static func seconds(_ text: String) -> Double? {
        var rest = Substring(text)
        var sign = 1.0
        if rest.hasPrefix("-") {
            sign = -1
            rest = rest.dropFirst()
        }
        var total = 0.0
        var parts = 0
        while true {
            rest = rest.drop(while: \.isWhitespace)
            if rest.isEmpty { break }
            let number = rest.prefix(while: isNumberCharacter)
            guard let value = IslandConfiguration.decimal(number), !number.hasPrefix("-") else { return nil }
            rest = rest[number.endIndex...].drop(while: \.isWhitespace)
            let unit = rest.prefix(while: { !$0.isWhitespace && !isNumberCharacter($0) })
            rest = rest[unit.endIndex...]
            guard let scale = unit.isEmpty ? 1 : units[String(unit)] else { return nil }
            total += value * scale
            parts += 1
        }
        guard parts > 0, total.isFinite else { return nil }
        return sign * total
    }

    private static func isNumberCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isNumber || character == ".")
    }
}
