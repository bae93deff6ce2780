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
        // `description`'s digits, without the `String` it makes of them: `write(to:)` hands its
        // stack buffer to the stream's `_writeASCII`, the hook `TextOutputStream` has for
        // this. A timestamp is written in every reply to a producer.
        withUnsafeMutablePointer(to: &out) { out in
            var digits = ASCIIAppender(out: out)
            double.write(to: &digits)
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
