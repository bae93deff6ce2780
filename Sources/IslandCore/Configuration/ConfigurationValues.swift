extension IslandConfiguration {
    /// What a key accepts. Each kind knows how to read a value and how to say what it expected.
    enum ValueKind {
        /// A whole number of things; `minimum` is 0 or 1.
        case count(minimum: Int)
        /// Bytes, with an optional 1024-based suffix as systemd sizes have (`4K`, `1M`).
        case size
        /// Per second, decimals allowed; `infinity` means uncapped.
        case rate
        /// A systemd time span (`30s`, `5min`, `1h 30min`; plain numbers are seconds).
        case duration(allowsZero: Bool)
        /// Reverse-DNS app ids separated by spaces.
        case appIDs
        /// yes or no, as systemd's booleans are written (also true/false, on/off, 1/0).
        case boolean
    }

    enum Value: Equatable {
        case integer(Int)
        case number(Double)
        case appIDs([String])
        case boolean(Bool)
    }

    /// Why a value was refused, phrased to follow `invalid value 'x' for Key=: `.
    struct ValueProblem: Error {
        var reason: String
    }

    static func read(_ text: String, as kind: ValueKind) throws(ValueProblem) -> Value {
        switch kind {
        case .count(let minimum):
            let expected = minimum == 0 ? "a whole number (0 or more)" : "a whole number greater than 0"
            guard let value = wholeNumber(text) else {
                throw ValueProblem(reason: "expected \(expected)")
            }
            try check(Double(value), minimum: minimum)
            return .integer(value)
        case .size:
            guard let value = size(text) else {
                throw ValueProblem(reason: "expected a size in bytes greater than 0, such as 4096, 64K or 1M")
            }
            try check(Double(value), minimum: 1)
            return .integer(value)
        case .rate:
            if text == "infinity" { return .number(.infinity) }
            guard let value = decimal(text) else {
                throw ValueProblem(reason: "expected a number of updates per second greater than 0, such as 2 or 0.5, or 'infinity' for no cap")
            }
            try check(value, minimum: nil)
            return .number(value)
        case .duration(let allowsZero):
            guard let value = TimeSpan.seconds(text) else {
                throw ValueProblem(reason: "expected a time span such as 30s, 5min, 8h or 1h 30min (a plain number is seconds)")
            }
            try check(value, minimum: allowsZero ? 0 : nil)
            return .number(value)
        case .appIDs:
            let ids = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if let bad = ids.first(where: { !Section.isAppID($0) }) {
                throw ValueProblem(reason: "'\(bad)' is not an app id; expected reverse-DNS app ids such as org.example.App, separated by spaces")
            }
            return .appIDs(ids)
        case .boolean:
            switch text.lowercased() {
            case "yes", "true", "on", "1": return .boolean(true)
            case "no", "false", "off", "0": return .boolean(false)
            default: throw ValueProblem(reason: "expected yes or no")
            }
        }
    }

    /// Refuses negatives always and zero unless `minimum` is 0; `nil` means "greater than 0"
    /// for values that can be fractional.
    private static func check(_ value: Double, minimum: Int?) throws(ValueProblem) {
        if value < 0 { throw ValueProblem(reason: "must not be negative") }
        if value == 0 && minimum != 0 { throw ValueProblem(reason: "must be greater than 0") }
    }

    /// Digits, optionally after a minus sign (so a negative gets "must not be negative"
    /// rather than "not a number").
    private static func wholeNumber(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int(text)
    }

    /// A plain decimal: `2`, `0.5`, `-1`, `.5`. No exponents, `nan` or `inf`: Swift's Double
    /// parser accepts those, a configuration reader should not.
    static func decimal(_ text: Substring) -> Double? {
        let body = text.hasPrefix("-") ? text.dropFirst() : text
        var sawDigit = false
        var sawPoint = false
        for character in body {
            switch character {
            case "0"..."9": sawDigit = true
            case "." where !sawPoint: sawPoint = true
            default: return nil
            }
        }
        guard sawDigit, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    static func decimal(_ text: String) -> Double? { decimal(Substring(text)) }

    private static func size(_ text: String) -> Int? {
        let multipliers: [Character: Int] = ["B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var number = Substring(text)
        var multiplier = 1
        if let last = number.last, let factor = multipliers[last] {
            multiplier = factor
            number = number.dropLast()
        }
        let digits = number.hasPrefix("-") ? number.dropFirst() : number
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(number) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }
}
