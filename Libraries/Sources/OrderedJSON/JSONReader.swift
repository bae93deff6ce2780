/// JSON text read one token at a time, with no tree: the lexical half of `JSONParser` (which
/// builds trees on it), and what a decoder that knows the shape it expects reads a message with
/// — a Varlink method's parameters, straight into Swift values.
///
/// A decoder asks for what it expects next (`enterObject`, `nextKey`, `readString`, …) and
/// gets `Mismatch` for anything else: text that is not JSON, a duplicate or unknown member, a
/// value of another kind, or what this reader leaves to the full parser (keys with escapes).
/// A mismatch says nothing of whether the text is valid; the caller parses it in full to learn
/// that. What the reader does accept, it reads with the parser's own code — the same grammar,
/// the same limits and the same values — so a decoder reads exactly what the tree would hold.
///
/// The bytes are borrowed: use a reader only inside the scope that lends them.
public struct JSONReader {
    /// The text is not what the decoder expected here; see the type's description.
    public struct Mismatch: Error, Sendable {
        public init() {}
    }

    let buffer: UnsafeRawBufferPointer
    let maximumDepth: Int
    var index = 0
    /// Counts what `serialized()` would write differently from the text: whitespace, escapes,
    /// numbers other than plain integers. Unchanged across a value: its text is canonical.
    var rewritten = 0
    /// Objects `enterObject` opened and `nextKey` has not yet seen closed.
    private var openObjects = 0
    /// Set by `enterObject`: the next key is the object's first, with no comma before it.
    private var atFirstMember = false

    public init(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        self.buffer = buffer
        self.maximumDepth = maximumDepth
    }

    // MARK: Reading what a decoder expects

    /// Opens an object: `{`, after any whitespace. Its members follow with `nextKey`.
    public mutating func enterObject() throws(Mismatch) {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == UInt8(ascii: "{"), openObjects + 1 <= maximumDepth else { throw Mismatch() }
        index += 1
        openObjects += 1
        atFirstMember = true
    }

    /// The key of the open object's next member, with the reader at its value; nil once the
    /// object has closed. Keys with escapes are left to the full parser.
    ///
    /// The position is a local until the key is found, and the text a pointer: as `index`, it
    /// was stored back at every step and the buffer's bounds loaded again after each, ~100
    /// instructions a key for the ten keys of an update's call (Benchmarks/profile.py).
    /// Whitespace, which compact text has none of, is skipped by `skipFoundWhitespace`.
    public mutating func nextKey() throws(Mismatch) -> Key? {
        guard let text = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw Mismatch() }
        let end = buffer.count
        var i = index
        if i < end, text[i] <= 0x20 { i = whitespaceSkipped(from: i) }
        guard i < end else { throw Mismatch() }
        if text[i] == UInt8(ascii: "}") {
            index = i + 1
            openObjects -= 1
            atFirstMember = false
            return nil
        }
        if !atFirstMember {
            guard text[i] == UInt8(ascii: ",") else { throw Mismatch() }
            i += 1
            if i < end, text[i] <= 0x20 { i = whitespaceSkipped(from: i) }
        }
        atFirstMember = false
        guard i < end, text[i] == UInt8(ascii: "\"") else { throw Mismatch() }
        let start = i + 1
        i = JSONBytes.firstSpecial(in: buffer, from: start)
        guard i < end, text[i] == UInt8(ascii: "\"") else { throw Mismatch() }
        // A key compared with the protocol's names needs no validation of its own: invalid
        // UTF-8 equals none of them, and the caller refuses keys it does not know.
        let key = UnsafeRawBufferPointer(start: text + start, count: i - start)
        i += 1
        if i < end, text[i] <= 0x20 { i = whitespaceSkipped(from: i) }
        guard i < end, text[i] == UInt8(ascii: ":") else { throw Mismatch() }
        i += 1
        if i < end, text[i] <= 0x20 { i = whitespaceSkipped(from: i) }
        index = i
        return Key(bytes: key)
    }

    /// Where the whitespace found at `i` ends (counted in `rewritten`, as any).
    @inline(never)
    private mutating func whitespaceSkipped(from i: Int) -> Int {
        index = i
        skipFoundWhitespace()
        return index
    }

    /// A member's key as it is written, to compare with the names a decoder knows (`case "id":`).
    public struct Key {
        @usableFromInline let bytes: UnsafeRawBufferPointer

        /// Inlined where the names are matched, so that most of them, which differ from the
        /// key in length, are told apart by comparing it with a constant, without a call; and
        /// a key of the name's length, up to sixteen bytes, is compared as one or two pairs of
        /// words, chosen by that constant length, where a call to `JSONBytes.equal` cost ~40
        /// instructions a key, ten keys in an update's call (Benchmarks/profile.py).
        @inlinable @inline(__always)
        public static func ~= (name: StaticString, key: Key) -> Bool {
            let count = name.utf8CodeUnitCount
            guard count == key.bytes.count else { return false }
            guard let k = key.bytes.baseAddress else { return true }
            let n = UnsafeRawPointer(name.utf8Start)
            switch count {
            case 1...3:
                // The first, the middle and the last cover them all.
                return k.load(as: UInt8.self) == n.load(as: UInt8.self)
                    && k.load(fromByteOffset: count / 2, as: UInt8.self) == n.load(fromByteOffset: count / 2, as: UInt8.self)
                    && k.load(fromByteOffset: count - 1, as: UInt8.self) == n.load(fromByteOffset: count - 1, as: UInt8.self)
            case 4...7:
                // Two words that overlap unless there are eight bytes.
                return k.loadUnaligned(as: UInt32.self) == n.loadUnaligned(as: UInt32.self)
                    && k.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                        == n.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            case 8...16:
                return k.loadUnaligned(as: UInt64.self) == n.loadUnaligned(as: UInt64.self)
                    && k.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                        == n.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            default:
                return JSONBytes.equal(UnsafeRawBufferPointer(start: name.utf8Start, count: count), key.bytes)
            }
        }
    }

    /// Consumes `null` if that is the next value; otherwise reads nothing.
    public mutating func readNull() -> Bool {
        guard buffer.count - index >= 4, buffer[index] == UInt8(ascii: "n") else { return false }
        guard (try? expectLiteral("null")) != nil else { return false }
        return true
    }

    /// A string's bytes as written, to compare with names known in advance: one with escapes is
    /// a mismatch, and the bytes are not checked to be UTF-8 (invalid ones equal no name).
    public mutating func readUnescapedString() throws(Mismatch) -> UnsafeRawBufferPointer {
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw Mismatch() }
        let start = index + 1
        index = JSONBytes.firstSpecial(in: buffer, from: start)
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw Mismatch() }
        index += 1
        return UnsafeRawBufferPointer(rebasing: buffer[start..<(index - 1)])
    }

    public mutating func readString() throws(Mismatch) -> String {
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\""), let string = try? parseString() else { throw Mismatch() }
        return string
    }

    public mutating func readBool() throws(Mismatch) -> Bool {
        switch index < buffer.count ? buffer[index] : 0 {
        case UInt8(ascii: "t"):
            guard (try? expectLiteral("true")) != nil else { throw Mismatch() }
            return true
        case UInt8(ascii: "f"):
            guard (try? expectLiteral("false")) != nil else { throw Mismatch() }
            return false
        default: throw Mismatch()
        }
    }

    /// A number of either kind, as the `Double` the tree's `doubleValue` gives (Varlink's `float`).
    public mutating func readNumber() throws(Mismatch) -> Double {
        guard index < buffer.count, buffer[index] == UInt8(ascii: "-") || isDigit(buffer[index]),
            let number = try? parseNumber(), let double = number.doubleValue
        else { throw Mismatch() }
        return double
    }

    /// An object as compact text, with how deep it nests and its shape (`JSON.objectShape`),
    /// read without a tree when it is written exactly as `serialized()` writes it; otherwise
    /// parsed into a tree and written so, as a parser's caller would. The text is then always
    /// what `serialized()` makes of the object.
    public mutating func readObjectText() throws(Mismatch) -> (text: [UInt8], nesting: Int, shape: [UInt8]) {
        guard index < buffer.count, buffer[index] == UInt8(ascii: "{") else { throw Mismatch() }
        let (start, rewrittenBefore) = (index, rewritten)
        if openObjects < maximumDepth, index + 1 < buffer.count, let base = buffer.baseAddress {
            var i = index + 1
            var shape: [UInt8]? = []
            let nesting: Int?
            if buffer[i] == UInt8(ascii: "}") {
                i += 1
                nesting = 0
            } else {
                let scan = CanonicalScan(text: base.assumingMemoryBound(to: UInt8.self), end: buffer.count, maximumDepth: maximumDepth)
                nesting = scan.members(&i, depth: openObjects + 1, shape: &shape)
            }
            if let nesting, let shape {
                index = i
                return (Array(UnsafeRawBufferPointer(rebasing: buffer[start..<index])), nesting + 1, shape)
            }
        }
        (index, rewritten) = (start, rewrittenBefore)
        var parser = JSONParser(reader: self)
        guard let value = try? parser.parseValue(depth: openObjects) else { throw Mismatch() }
        self = parser.reader
        let text = value.serialized()
        // The text of an object, as `serialized()` writes it, has a shape.
        return (text, value.nestingDepth, JSON.objectShape(ofText: text) ?? [])
    }

    /// An object as a tree, for members kept as trees (an activity's attributes).
    public mutating func readObject() throws(Mismatch) -> JSONObject {
        guard index < buffer.count, buffer[index] == UInt8(ascii: "{") else { throw Mismatch() }
        var parser = JSONParser(reader: self)
        guard let value = try? parser.parseValue(depth: openObjects), case .object(let object) = value else { throw Mismatch() }
        self = parser.reader
        return object
    }

    /// The members an object has had so far, by a decoder's numbering of those it knows: a
    /// member that comes twice is a duplicate key, which the parser refuses.
    public struct MembersSeen {
        private var seen: UInt64 = 0

        public init() {}

        public mutating func insert(_ member: Int) throws(Mismatch) {
            let bit: UInt64 = 1 << member
            guard seen & bit == 0 else { throw Mismatch() }
            seen |= bit
        }
    }

    /// Past trailing whitespace to the end of the text; anything more is a mismatch.
    public mutating func finish() throws(Mismatch) {
        skipWhitespace()
        guard index == buffer.count, openObjects == 0 else { throw Mismatch() }
    }

    // MARK: The parser's primitives

    func error(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    /// Compact text, as every call's parameters are, has no whitespace to skip: that is
    /// checked inline, and only whitespace found calls the loop.
    @inline(__always)
    mutating func skipWhitespace() {
        guard index < buffer.count, buffer[index] <= 0x20 else { return }
        skipFoundWhitespace()
    }

    @inline(never)
    private mutating func skipFoundWhitespace() {
        let start = index
        defer { if index != start { rewritten &+= 1 } }
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard index < buffer.count else { throw error(.unexpectedEnd) }
        return buffer[index]
    }

    mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard try peek() == byte else { throw error(.unexpectedCharacter) }
        index += 1
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - index >= count else { throw error(.unexpectedEnd) }
        for i in 0..<count where buffer[index + i] != literal.utf8Start[i] {
            index += i
            throw error(.unexpectedCharacter)
        }
        index += count
    }

    /// A string, its opening quote at `index`.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, so the string is the bytes between the quotes.
        let (end, isASCII) = JSONBytes.firstSpecialNotingASCII(in: buffer, from: start)
        index = end
        guard index < buffer.count else { throw error(.unexpectedEnd) }
        switch buffer[index] {
        case UInt8(ascii: "\""):
            let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
            index += 1
            // ASCII is valid UTF-8 as it stands; `String(validating:)` is not specialized for
            // raw bytes and cost a twentieth of a producer's update in metadata lookups.
            if isASCII { return String(decoding: slice, as: UTF8.self) }
            guard let string = String(validating: slice, as: UTF8.self) else {
                throw JSONParseError(reason: .invalidUTF8, offset: start)
            }
            return string
        case UInt8(ascii: "\\"):
            break
        default:
            throw error(.controlCharacterInString)
        }

        rewritten &+= 1
        var bytes = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[start..<index]))
        while true {
            guard index < buffer.count else { throw error(.unexpectedEnd) }
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw JSONParseError(reason: .invalidUTF8, offset: start)
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try appendEscape(to: &bytes)
            case 0..<0x20:
                throw error(.controlCharacterInString)
            default:
                bytes.append(byte)
                index += 1
            }
        }
    }

    private mutating func appendEscape(to bytes: inout [UInt8]) throws(JSONParseError) {
        let escape = try peek()
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                try expect(UInt8(ascii: "\\"))
                try expect(UInt8(ascii: "u"))
                let low = UInt32(try parseHex4())
                guard (0xDC00..<0xE000).contains(low) else { throw error(.invalidEscape) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error(.invalidEscape) }
            bytes.append(contentsOf: UTF8.encode(unicode)!)
        default:
            index -= 1
            throw error(.invalidEscape)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        guard buffer.count - index >= 4 else { throw error(.unexpectedEnd) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// A number, its first byte (`-` or a digit) at `index`.
    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        // Integer part: 0, or a non-zero digit followed by digits.
        guard index < buffer.count, isDigit(buffer[index]) else { throw error(.invalidNumber) }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw error(.invalidNumber) }
            skipDigits()
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error(.invalidNumber) }
            skipDigits()
        }
        let digits = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
        if isInteger, let int = Self.integer(digits) {
            // `-0` is the integer 0, written back as `0`.
            if int == 0 && digits.count > 1 { rewritten &+= 1 }
            return .int(int)
        }
        // Written back as Swift spells the double, which may differ from the text.
        rewritten &+= 1
        let text = String(decoding: digits, as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw JSONParseError(reason: .invalidNumber, offset: start)
        }
        return .double(double)
    }

    /// An optional minus and digits (as the grammar has checked) as an `Int`, without a
    /// `String` in between; nil if it does not fit.
    private static func integer(_ text: UnsafeRawBufferPointer) -> Int? {
        let negative = text.first == UInt8(ascii: "-")
        var value = 0
        for byte in text.dropFirst(negative ? 1 : 0) {
            // Accumulated negatively: Int.min has no positive counterpart.
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        if negative { return value }
        let (positive, overflow) = (0).subtractingReportingOverflow(value)
        return overflow ? nil : positive
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < buffer.count, isDigit(buffer[index]) { index += 1 }
    }

    // MARK: Canonical text, checked without a tree

    /// Up to this many members, an object's keys are checked for duplicates one by one.
    static let keysComparedOneByOne = 16
}

/// The check that an object is written exactly as `serialized()` writes it, and its shape, in
/// one pass over the text (`JSONReader.readObjectText`): every update's state is read so. The
/// text is a pointer and its end, and each function's position a local, so that what the scan
/// reads stays in registers — as the reader's `index`, the position was stored back to memory
/// at every byte and the buffer's bounds loaded again at every value (Benchmarks/profile.py).
/// Each function returns nil as soon as the text is anything else — invalid, too deep, or
/// valid but written otherwise — and the caller reads it again in full. Objects of more than
/// `keysComparedOneByOne` members are left to the full parse too: their keys are found unique
/// by comparing raw bytes, which needs no escapes and no `String`s.
private struct CanonicalScan {
    let text: UnsafePointer<UInt8>
    let end: Int
    let maximumDepth: Int

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Past one value, its first byte at `i`, inside containers `depth` deep; how deep it
    /// nests (0 for a scalar).
    @inline(__always)
    func value(_ i: inout Int, depth: Int) -> Int? {
        switch text[i] {
        case UInt8(ascii: "\""): return string(&i) ? 0 : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer(&i) ? 0 : nil
        case UInt8(ascii: "t"): return word(&i, "true") ? 0 : nil
        case UInt8(ascii: "f"): return word(&i, "fals") && byte(&i, UInt8(ascii: "e")) ? 0 : nil
        case UInt8(ascii: "n"): return word(&i, "null") ? 0 : nil
        case UInt8(ascii: "{"), UInt8(ascii: "["): return container(&i, depth: depth)
        default: return nil
        }
    }

    /// Past four bytes equal to `literal`'s.
    @inline(__always)
    func word(_ i: inout Int, _ literal: StaticString) -> Bool {
        guard end - i >= 4,
            UnsafeRawPointer(text + i).loadUnaligned(as: UInt32.self) == UnsafeRawPointer(literal.utf8Start).loadUnaligned(as: UInt32.self)
        else { return false }
        i += 4
        return true
    }

    @inline(__always)
    func byte(_ i: inout Int, _ expected: UInt8) -> Bool {
        guard i < end, text[i] == expected else { return false }
        i += 1
        return true
    }

    /// An object or array, its bracket at `i`; 1 for `{}` or `[1]`.
    func container(_ i: inout Int, depth: Int) -> Int? {
        guard depth < maximumDepth, i + 1 < end else { return nil }
        let isObject = text[i] == UInt8(ascii: "{")
        i += 1
        if text[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
            i += 1
            return 1
        }
        var noShape: [UInt8]?
        let inner = isObject ? members(&i, depth: depth + 1, shape: &noShape) : elements(&i, depth: depth + 1)
        return inner.map { $0 + 1 }
    }

    /// The members of a non-empty object, from the first key's quote at `i` up to and past
    /// the closing brace; the deepest of their values. If `shape` is not nil, it becomes the
    /// object's shape.
    func members(_ i: inout Int, depth: Int, shape: inout [UInt8]?) -> Int? {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: JSONReader.keysComparedOneByOne) { keys in
            var count = 0
            var deepest = 0
            // The shape's size: each key with its quotes, and the kind of its value.
            var shapeSize = 0
            // A bit per key read so far, chosen by its length and last byte: equal keys have
            // the same bit, so a key whose bit is not yet set is new without comparing it with
            // the others (ten keys make 45 pairs, which cost a state more than reading it).
            var seen: UInt64 = 0
            while true {
                guard count < keys.count, i < end, text[i] == UInt8(ascii: "\"") else { return nil }
                let keyStart = i + 1
                guard string(&i) else { return nil }
                let key = keyStart..<(i - 1)
                // The byte before the closing quote: the key's last, or its opening quote.
                let bit: UInt64 = 1 << UInt64(truncatingIfNeeded: (key.count &* 7 &+ Int(text[i - 2])) & 63)
                if seen & bit != 0 {
                    // Lengths first: most keys differ in length.
                    for other in keys[..<count] where other.count == key.count && same(other, key) { return nil }
                }
                seen |= bit
                keys.initializeElement(at: count, to: key)
                count += 1
                shapeSize &+= key.count &+ 3
                // The colon, and a value's first byte after it.
                guard i + 1 < end, text[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                // `value`, written out: called, it cost the registers saved and restored
                // around it for every member (Benchmarks/profile.py).
                switch text[i] {
                case UInt8(ascii: "\""): guard string(&i) else { return nil }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): guard integer(&i) else { return nil }
                case UInt8(ascii: "t"): guard word(&i, "true") else { return nil }
                case UInt8(ascii: "f"): guard word(&i, "fals"), byte(&i, UInt8(ascii: "e")) else { return nil }
                case UInt8(ascii: "n"): guard word(&i, "null") else { return nil }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard let nesting = container(&i, depth: depth) else { return nil }
                    if nesting > deepest { deepest = nesting }
                default: return nil
                }
                guard i < end else { return nil }
                switch text[i] {
                case UInt8(ascii: ","): i += 1
                case UInt8(ascii: "}"):
                    i += 1
                    if shape != nil { shape = self.shape(of: UnsafeMutableBufferPointer(rebasing: keys[..<count]), size: shapeSize) }
                    return deepest
                default: return nil
                }
            }
        }
    }

    /// The elements of a non-empty array, from the first one at `i` up to and past the
    /// closing bracket; the deepest of them.
    func elements(_ i: inout Int, depth: Int) -> Int? {
        var deepest = 0
        while true {
            guard let nesting = value(&i, depth: depth), i < end else { return nil }
            if nesting > deepest { deepest = nesting }
            switch text[i] {
            case UInt8(ascii: ","):
                i += 1
                guard i < end else { return nil }
            case UInt8(ascii: "]"):
                i += 1
                return deepest
            default: return nil
            }
        }
    }

    /// The shape (`JSON.objectShape`) of the object whose keys are at `keys`, each followed by
    /// `:` and a value already checked, made once the members are read: one array of the right
    /// size, each key copied in, rather than two appends per member.
    private func shape(of keys: UnsafeMutableBufferPointer<Range<Int>>, size: Int) -> [UInt8] {
        // Room for eight bytes more than the shape: a key of up to sixteen bytes with its
        // quotes is copied as two words, which may run past it, rather than by a call to
        // `memcpy` each (the bytes past it are written over, or past the array's count).
        [UInt8].filled(count: size + 8) { out in
            guard let room = out.baseAddress else { return 0 }
            let base = UnsafeRawPointer(text)
            var initialized = 0
            for key in keys {
                let start = key.lowerBound - 1
                let count = key.count + 2
                // The words read stay inside the text: a key is followed by at least `:`, a
                // value and `}`, and the check says when they are not.
                if count <= 16, start + 16 <= end {
                    (room + initialized).storeBytes(of: base.loadUnaligned(fromByteOffset: start, as: UInt64.self), as: UInt64.self)
                    if count > 8 {
                        (room + initialized + 8).storeBytes(
                            of: base.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self), as: UInt64.self)
                    }
                } else {
                    (room + initialized).copyMemory(from: base + start, byteCount: count)
                }
                initialized += count
                // The value starts after the closing quote and the colon, and was read: it is
                // one of the kinds.
                out[initialized] = JSON.shapeKind(of: text[key.upperBound + 2]) ?? 0
                initialized += 1
            }
            return initialized
        }
    }

    private func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        JSONBytes.equal(UnsafeRawBufferPointer(start: text + a.lowerBound, count: a.count), UnsafeRawBufferPointer(start: text + b.lowerBound, count: b.count))
    }

    /// A number as `serialized()` writes one that the parser reads as an `Int`: digits, with
    /// no leading zero, no fraction or exponent, not `-0`, and within `Int`'s range. Digits are
    /// found eight at a time.
    @inline(__always)
    private func integer(_ i: inout Int) -> Bool {
        let negative = text[i] == UInt8(ascii: "-")
        let digitsStart = negative ? i + 1 : i
        var j = digitsStart
        while j + 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(text + j).loadUnaligned(as: UInt64.self))
            // The high bit of each byte that is not a digit: below "0" the subtraction
            // borrows, above "9" the addition reaches 0x80, from 0x80 the byte's own. A borrow
            // or carry only flags bytes above a flagged one: the lowest flag is exact.
            let flags = ((word &- Self.ones &* 0x30) | (word &+ Self.ones &* 0x46) | word) & Self.highBits
            if flags != 0 {
                j += flags.trailingZeroBitCount / 8
                break
            }
            j += 8
        }
        if j + 8 > end {
            while j < end, text[j] &- UInt8(ascii: "0") < 10 { j += 1 }
        }
        let digits = j - digitsStart
        guard digits > 0, text[digitsStart] != UInt8(ascii: "0") || digits == 1 && !negative else { return false }
        if j < end {
            switch text[j] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return false
            default: break
            }
        }
        // Int's range: 19 digits at most, compared with its bounds' as text.
        if digits >= 19 {
            guard digits == 19 else { return false }
            let bound: StaticString = negative ? "9223372036854775808" : "9223372036854775807"
            for k in 0..<19 where text[digitsStart + k] != bound.utf8Start[k] {
                guard text[digitsStart + k] < bound.utf8Start[k] else { return false }
                break
            }
        }
        i = j
        return true
    }

    /// A string without escapes (which `serialized()` writes only where it must), valid
    /// UTF-8, its opening quote at `i`.
    @inline(__always)
    private func string(_ i: inout Int) -> Bool {
        let start = i + 1
        let bytes = UnsafeRawBufferPointer(start: text, count: end)
        let (found, isASCII) = JSONBytes.firstSpecialNotingASCII(in: bytes, from: start)
        guard found < end, text[found] == UInt8(ascii: "\"") else { return false }
        i = found + 1
        return isASCII || String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<found]), as: UTF8.self) != nil
    }
}
