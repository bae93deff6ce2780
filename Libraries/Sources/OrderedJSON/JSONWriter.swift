public import OrderedCollections

extension JSON {
    /// The compact JSON text of the value as UTF-8. Non-finite doubles, which JSON cannot
    /// express, are written as `null`.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out)
        return out
    }

    /// `serialized().count`, counted without writing the text: size limits are checked on
    /// every update, and nothing is kept of the text.
    public var serializedSize: Int {
        switch self {
        case .null: 4
        case .bool(let b): b ? 4 : 5
        case .int(let i): Self.serializedSize(of: i)
        case .double(let d): d.isFinite ? d.description.utf8.count : 4
        case .string(let s): Self.serializedSize(of: s)
        case .array(let a): a.reduce(2 + max(a.count - 1, 0)) { $0 + $1.serializedSize }
        case .object(let o): Self.serializedSize(of: o)
        }
    }

    public static func serializedSize(of object: JSONObject) -> Int {
        // Braces, commas between members, and a colon after each key.
        var size = 2 + max(object.count - 1, 0) + object.count
        for (key, value) in object { size += serializedSize(of: key) + value.serializedSize }
        return size
    }

    static func serializedSize(of string: String) -> Int {
        withUTF8(of: string) { bytes in
            var size = 2 + bytes.count
            var index = JSONBytes.firstSpecial(in: UnsafeRawBufferPointer(bytes), from: 0)
            while index < bytes.count {
                size += escapedWidth(bytes[index]) - 1
                index = JSONBytes.firstSpecial(in: UnsafeRawBufferPointer(bytes), from: index + 1)
            }
            return size
        }
    }

    static func serializedSize(of integer: Int) -> Int {
        var magnitude = integer.magnitude
        var size = integer < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            size += 1
        }
        return size
    }

    public func write(to out: inout [UInt8]) {
        write(into: &out)
    }

    public static func writeObject(_ object: JSONObject, to out: inout [UInt8]) {
        writeObject(object, into: &out)
    }

    public static func writeString(_ string: String, to out: inout [UInt8]) {
        writeString(string, into: &out)
    }

    // The writer proper, for either output: an array, or `JSONText`'s buffer.

    func write<Out: JSONOutput & ~Copyable>(into out: inout Out) {
        switch self {
        case .null: Self.writeLiteral("null", into: &out)
        case .bool(let b): Self.writeLiteral(b ? "true" : "false", into: &out)
        case .int(let i): Self.writeInteger(i, into: &out)
        case .double(let d): Self.writeDouble(d, into: &out)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o): Self.writeObject(o, into: &out)
        }
    }

    static func writeObject<Out: JSONOutput & ~Copyable>(_ object: JSONObject, into out: inout Out) {
        out.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in object {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            value.write(into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func writeString<Out: JSONOutput & ~Copyable>(_ string: String, into out: inout Out) {
        out.append(UInt8(ascii: "\""))
        withUTF8(of: string) { bytes in
            // Copy the runs that need no escaping in bulk.
            var runStart = 0
            while true {
                let index = JSONBytes.firstSpecial(in: UnsafeRawBufferPointer(bytes), from: runStart)
                out.appendBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[runStart..<index]))
                guard index < bytes.count else { break }
                appendEscaped(bytes[index], into: &out)
                runStart = index + 1
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func writeInteger<Out: JSONOutput & ~Copyable>(_ integer: Int, into out: inout Out) {
        // Digits right to left in a scratch buffer on the stack, then one append: a timestamp
        // in nanoseconds is 19 of them.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = integer.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if integer < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            out.appendBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: digits[start...])))
        }
    }

    /// As Swift's `description` spells it (`null` if not finite). A whole number below 10^15
    /// (a score, a date in whole seconds) is written without the `String` that makes: its
    /// `description` is its digits and `.0`.
    static func writeDouble<Out: JSONOutput & ~Copyable>(_ double: Double, into out: inout Out) {
        guard double.isFinite else {
            writeLiteral("null", into: &out)
            return
        }
        if double.magnitude < 1e15, double == double.rounded(.towardZero), !(double == 0 && double.sign == .minus) {
            writeInteger(Int(double), into: &out)
            out.append(UInt8(ascii: "."))
            out.append(UInt8(ascii: "0"))
            return
        }
        if let (integer, fraction, decimals) = shortestDecimal(double.magnitude) {
            if double.sign == .minus { out.append(UInt8(ascii: "-")) }
            writeDecimal(integer: integer, fraction: fraction, decimals: decimals, into: &out)
            return
        }
        // `description`'s digits, without the `String` it makes of them: `write(to:)` hands its
        // stack buffer to the stream's `_writeASCII`, the hook `TextOutputStream` has for
        // this.
        withUnsafeMutablePointer(to: &out) { out in
            var digits = ASCIIAppender(out: out)
            double.write(to: &digits)
        }
    }

    /// A double between 1 and 10^15 that is not whole — a time a clock gives, in seconds, is
    /// one, and is written in every reply to a producer — as `description` spells it: its
    /// integer part, and the digits of its fraction (`decimals` of them, leading zeros
    /// included). Nil for the few it leaves to `description`. Worked out exactly, in a few
    /// dozen instructions a decimal where `write(to:)` took ~700: `description` spells the
    /// shortest decimal that reads back as the double, and of those the closest. With the
    /// fraction as `numerator / 2^shift` (`2^-shift` the gap between doubles here), the
    /// fraction of `k` decimals closest to it is `numerator · 10^k / 2^shift` rounded, and
    /// it reads back when it lies within half a gap of it: the first `k` where it does gives
    /// the shortest. Nil where the closest is a tie between two decimals, or at exactly half
    /// a gap, which `description` settles by rules of its own, and at a power of two, whose
    /// gap below is half the one above.
    static func shortestDecimal(_ double: Double) -> (integer: Int, fraction: UInt64, decimals: Int)? {
        guard double > 1, double < 1e15, double.significandBitPattern != 0 else { return nil }
        // 1 ≤ exponent < 50: the gap is 2^-shift, 2^-52 to 2^-3.
        let shift = UInt64(52 - Int(double.exponent))
        let significand = double.significandBitPattern | 1 << 52
        let gap: UInt64 = 1 << shift
        let half = gap >> 1
        // What is left of the fraction, times 10^decimals, below 2^shift: below 2^56 once
        // multiplied by 10.
        var remainder = significand & (gap - 1)
        guard remainder != 0 else { return nil }
        var fraction: UInt64 = 0
        var power: UInt64 = 1
        // 17 significant digits always read back, and the integer part has at least one.
        for decimals in 1...16 {
            remainder &*= 10
            power &*= 10
            fraction = fraction &* 10 &+ (remainder >> shift)
            remainder &= gap - 1
            guard remainder != half else { return nil }
            let (closest, distance) = remainder < half ? (fraction, remainder) : (fraction &+ 1, gap &- remainder)
            // |closest / 10^decimals − fraction of the double| against half a gap, both
            // times 10^decimals · 2^shift.
            let twice = distance &<< 1
            if twice < power {
                // Rounded up to a whole number: no double that is not whole reads back so.
                guard closest < power else { return nil }
                return (Int(significand >> shift), closest, decimals)
            }
            guard twice != power else { return nil }
        }
        return nil
    }

    /// `integer`, a point and the `decimals` digits of `fraction`, as `description` writes a
    /// number between 1 and 10^15: at most 15 + 1 + 16 bytes, written right to left into a
    /// buffer on the stack two digits at a time, and appended at once.
    private static func writeDecimal<Out: JSONOutput & ~Copyable>(
        integer: Int, fraction: UInt64, decimals: Int, into out: inout Out
    ) {
        var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { text in
            var start = text.count
            func writePair(_ pair: UInt64) {
                start -= 2
                let tens = pair / 10
                // Two ASCII digits, the tens first in memory (little-endian).
                let ascii = UInt16(truncatingIfNeeded: 0x3030 | tens | (pair &- tens &* 10) << 8)
                text.storeBytes(of: ascii.littleEndian, toByteOffset: start, as: UInt16.self)
            }
            func writeDigit(_ digit: UInt64) {
                start -= 1
                text[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
            }
            // The fraction's digits, leading zeros included.
            var rest = fraction
            var left = decimals
            while left >= 2 {
                writePair(rest % 100)
                rest /= 100
                left -= 2
            }
            if left == 1 { writeDigit(rest % 10) }
            start -= 1
            text[start] = UInt8(ascii: ".")
            // The integer part's, which has at least one.
            rest = UInt64(integer)
            while rest >= 100 {
                writePair(rest % 100)
                rest /= 100
            }
            if rest >= 10 { writePair(rest) } else { writeDigit(rest) }
            out.appendBytes(UnsafeRawBufferPointer(rebasing: text[start...]))
        }
    }

    /// Appends what a value writes to `out`, which outlives it.
    private struct ASCIIAppender<Out: JSONOutput & ~Copyable>: TextOutputStream {
        let out: UnsafeMutablePointer<Out>

        mutating func write(_ string: String) {
            JSON.withUTF8(of: string) { out.pointee.appendBytes(UnsafeRawBufferPointer($0)) }
        }

        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
            out.pointee.appendBytes(UnsafeRawBufferPointer(buffer))
        }
    }

    /// A literal's bytes, appended without going through a `String`.
    static func writeLiteral<Out: JSONOutput & ~Copyable>(_ literal: StaticString, into out: inout Out) {
        out.appendBytes(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Native strings are contiguous UTF-8; only a bridged one would need copying first.
    fileprivate static func withUTF8<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }

    private static func escapedWidth(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: 2
        default: 6
        }
    }

    private static func appendEscaped<Out: JSONOutput & ~Copyable>(_ byte: UInt8, into out: inout Out) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            for digit in [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]] {
                out.append(digit)
            }
        }
    }
}
