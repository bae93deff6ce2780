/// Scans of JSON string bytes, eight at a time: every update reads a state and writes it to
/// presenters, and byte by byte these loops were an eighth of the daemon's instructions.
public enum JSONBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that is a quote, a backslash or below a space. A
    /// borrow can also flag bytes above a flagged one, never below it: the lowest flag (the
    /// first byte, loads being little-endian) is exact.
    @inline(__always)
    private static func specialFlags(_ word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let belowSpace = (word &- ones &* 0x20) & ~word
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        return (belowSpace | isQuote | isBackslash) & highBits
    }

    /// The index of the first byte from `start` on that is special inside a JSON string (a
    /// quote, a backslash or a control character), or `bytes.count`.
    @usableFromInline @inline(__always)
    static func firstSpecial(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var index = start
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let flags = specialFlags(word)
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return index }
            index += 1
        }
        return index
    }

    /// `firstSpecial`, and whether the bytes before it are all ASCII, in the same pass: a
    /// string read from a peer is both searched for its end and checked to be UTF-8, and
    /// ASCII needs no further check. A byte that is not ASCII is flagged like a special one:
    /// the search stops at the first byte that is either, and only a string that is not all
    /// ASCII goes on to its end with `firstSpecial`.
    @inline(__always)
    static func firstSpecialNotingASCII(in bytes: UnsafeRawBufferPointer, from start: Int) -> (index: Int, isASCII: Bool) {
        guard let base = bytes.baseAddress else { return (bytes.count, true) }
        var index = start
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            // `specialFlags` flags no byte of 0x80 or more: their own high bits add them.
            let flags = specialFlags(word) | word & highBits
            if flags != 0 {
                index += flags.trailingZeroBitCount / 8
                break
            }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte >= 0x80 { break }
            index += 1
        }
        guard index < bytes.count, bytes[index] >= 0x80 else { return (index, true) }
        return (firstSpecial(in: bytes, from: index), false)
    }

    /// Whether two runs of bytes are the same, eight at a time: keys and names compared on
    /// every call. The last word, or for fewer than eight bytes two shorter loads, may
    /// overlap bytes already compared, rather than a byte at a time (keys are mostly shorter
    /// than eight bytes or end between words).
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count > 0, let x = a.baseAddress, let y = b.baseAddress else { return true }
        if count >= 8 {
            var index = 0
            while index + 8 < count {
                guard x.loadUnaligned(fromByteOffset: index, as: UInt64.self) == y.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                else { return false }
                index += 8
            }
            return x.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        if count >= 4 {
            return x.loadUnaligned(as: UInt32.self) == y.loadUnaligned(as: UInt32.self)
                && x.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self) == y.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        }
        // One to three bytes: the first, the middle and the last cover them all.
        return a[0] == b[0] && a[count / 2] == b[count / 2] && a[count - 1] == b[count - 1]
    }

    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            high |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & highBits == 0
    }
}

extension Array where Element == UInt8 {
    /// Appends `bytes` with one capacity check and one copy. The generic
    /// `append(contentsOf:)` copies through the sequence protocol and then asks the source's
    /// iterator for more, which for the few bytes of a key, a literal or a number costs more
    /// than the copy; a message written on every update makes dozens of such appends.
    @inline(__always)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count > 0 else { return }
        append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { free, initialized in
                UnsafeMutableRawBufferPointer(free).copyMemory(from: bytes)
                initialized = count
            }
        }
    }

    @inline(__always)
    mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        appendBytes(UnsafeRawBufferPointer(bytes))
    }

    @inline(__always)
    mutating func appendBytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { appendBytes($0) }
    }
}
