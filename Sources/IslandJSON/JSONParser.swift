import OrderedCollections

/// Why a text is not the JSON this parser accepts.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case empty = "empty input"
        case unexpectedEnd = "unexpected end of input"
        case unexpectedCharacter = "unexpected character"
        case invalidUTF8 = "invalid UTF-8"
        case invalidEscape = "invalid escape sequence"
        case controlCharacterInString = "unescaped control character in string"
        case invalidNumber = "invalid number"
        case tooDeep = "nesting too deep"
        case duplicateKey = "duplicate object key"
        case trailingData = "data after the JSON value"
    }

    public var reason: Reason
    /// Byte offset in the input where the problem was found.
    public var offset: Int

    public var description: String { "\(reason.rawValue) at byte \(offset)" }

    public init(reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }
}

/// A strict RFC 8259 parser: UTF-8 only, no duplicate keys, no trailing commas, bounded
/// nesting. Every input from a peer goes through it, so it never traps: malformed text of
/// any kind ends in a `JSONParseError`.
public struct JSONParser {
    public static let defaultMaximumDepth = 64

    public static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        try parse(bytes, maximumDepth: maximumDepth, canonicalTextAt: []).value
    }

    /// Parses `bytes`, and returns with the value the text of the member at `path` (object keys
    /// from the top) if it was sent exactly as `serialized()` writes it — compact, integers
    /// only, no escapes — so that a caller needing that text need not write it again. Nil
    /// when the member is missing or written otherwise.
    ///
    /// A member whose text is returned is not in the value: an empty value of its kind (`{}`
    /// for an object) stands in its place, so that a check of kinds sees what it would have
    /// seen, and whoever wants its tree parses the text. Such a member is usually checked
    /// without building a tree at all, which is most of what parsing it would cost.
    public static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth,
                             canonicalTextAt path: [String]) throws(JSONParseError) -> (value: JSON, canonicalText: [UInt8]?) {
        func parse(_ buffer: UnsafeRawBufferPointer) -> Result<(JSON, [UInt8]?), JSONParseError> {
            Result { () throws(JSONParseError) -> (JSON, [UInt8]?) in
                var parser = JSONParser(buffer: buffer, maximumDepth: maximumDepth, capturePath: path)
                return (try parser.parseDocument(), parser.captured)
            }
        }
        if let result = bytes.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) { return try result.get() }
        return try Array(bytes).withUnsafeBytes(parse).get()
    }

    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    public static func parse(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        var parser = JSONParser(buffer: buffer, maximumDepth: maximumDepth, capturePath: [])
        return try parser.parseDocument()
    }

    private let buffer: UnsafeRawBufferPointer
    private let maximumDepth: Int
    private var index = 0
    /// Counts what `serialized()` would write differently from the text: whitespace, escapes,
    /// numbers other than plain integers. Unchanged across a value: its text is canonical.
    private var rewritten = 0
    /// The member whose canonical text is wanted, and how many of its keys lead to where the
    /// parser is.
    private let capturePath: [String]
    private var pathMatched = 0
    private var captured: [UInt8]?

    private init(buffer: UnsafeRawBufferPointer, maximumDepth: Int, capturePath: [String]) {
        self.buffer = buffer
        self.maximumDepth = maximumDepth
        self.capturePath = capturePath
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSON {
        skipWhitespace()
        guard index < buffer.count else { throw JSONParseError(reason: .empty, offset: 0) }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == buffer.count else { throw error(.trailingData) }
        return value
    }

    private func error(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    private mutating func skipWhitespace() {
        let start = index
        defer { if index != start { rewritten &+= 1 } }
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func peek() throws(JSONParseError) -> UInt8 {
        guard index < buffer.count else { throw error(.unexpectedEnd) }
        return buffer[index]
    }

    private mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard try peek() == byte else { throw error(.unexpectedCharacter) }
        index += 1
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - index >= count else { throw error(.unexpectedEnd) }
        for i in 0..<count where buffer[index + i] != literal.utf8Start[i] {
            index += i
            throw error(.unexpectedCharacter)
        }
        index += count
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        switch try peek() {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error(.unexpectedCharacter)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maximumDepth else { throw error(.tooDeep) }
        index += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject())
        }
        // Members go into two arrays, made a dictionary once complete: inserting them one by
        // one into the ordered dictionary cost more than the rest of their parsing. Room for a
        // typical object at once: most here have a handful of members.
        var keys: [String] = []
        var values: [JSON] = []
        keys.reserveCapacity(8)
        values.reserveCapacity(8)
        // Duplicates are found by comparing with every key so far while there are few, then
        // by hashing, so that no object costs quadratic time.
        var seen: Set<String>?
        while true {
            skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else { throw error(.unexpectedCharacter) }
            let keyOffset = index
            let key = try parseString()
            if seen == nil, keys.count == Self.keysComparedOneByOne { seen = Set(keys) }
            let duplicate = seen != nil ? seen!.insert(key).inserted == false : keys.contains(key)
            guard !duplicate else { throw JSONParseError(reason: .duplicateKey, offset: keyOffset) }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            keys.append(key)
            if pathMatched == depth - 1, pathMatched < capturePath.count, key == capturePath[pathMatched] {
                values.append(try parseMemberOnPath(depth: depth))
            } else {
                values.append(try parseValue(depth: depth))
            }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(JSONObject(uncheckedUniqueKeys: keys, values: values))
            default: throw error(.unexpectedCharacter)
            }
        }
    }

    /// Up to this many keys, an object's keys are checked for duplicates one by one.
    private static let keysComparedOneByOne = 16

    /// A member whose key is the next of `capturePath`: the one captured, or one that leads to it.
    private mutating func parseMemberOnPath(depth: Int) throws(JSONParseError) -> JSON {
        guard pathMatched == capturePath.count - 1 else {
            pathMatched += 1
            defer { pathMatched -= 1 }
            return try parseValue(depth: depth)
        }
        let (start, rewrittenBefore) = (index, rewritten)
        if skipCanonicalContainer(depth: depth) {
            captured = Array(UnsafeRawBufferPointer(rebasing: buffer[start..<index]))
            return buffer[start] == UInt8(ascii: "{") ? .object([:]) : .array([])
        }
        // Anything else — written otherwise, not a container, or not valid — is parsed in full,
        // from its start, for its value or the exact error.
        (index, rewritten) = (start, rewrittenBefore)
        let value = try parseValue(depth: depth)
        guard rewritten == rewrittenBefore else { return value }
        captured = Array(UnsafeRawBufferPointer(rebasing: buffer[start..<index]))
        return Self.standIn(for: value)
    }

    /// What is left in the tree of a member whose text is kept: an empty value of its kind.
    private static func standIn(for value: JSON) -> JSON {
        switch value {
        case .null: .null
        case .bool: .bool(false)
        case .int: .int(0)
        case .double: .double(0)
        case .string: .string("")
        case .array: .array([])
        case .object: .object([:])
        }
    }

    // MARK: Canonical text, checked without a tree

    /// Moves past an object or array written exactly as `serialized()` writes it, and returns
    /// true; returns false as soon as the text is anything else — invalid, too deep, or valid
    /// but written otherwise — and the caller parses it again in full. Objects of more than
    /// `keysComparedOneByOne` members are left to the full parse too: their keys are found
    /// unique by comparing raw bytes, which needs no escapes and no `String`s.
    private mutating func skipCanonicalContainer(depth: Int) -> Bool {
        guard index < buffer.count, depth < maximumDepth else { return false }
        let isObject = buffer[index] == UInt8(ascii: "{")
        guard isObject || buffer[index] == UInt8(ascii: "[") else { return false }
        index += 1
        guard index < buffer.count else { return false }
        if buffer[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
            index += 1
            return true
        }
        return isObject ? skipCanonicalMembers(depth: depth + 1) : skipCanonicalElements(depth: depth + 1)
    }

    private mutating func skipCanonicalValue(depth: Int) -> Bool {
        guard index < buffer.count else { return false }
        switch buffer[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["): return skipCanonicalContainer(depth: depth)
        case UInt8(ascii: "\""): return skipCanonicalString()
        default:
            // Numbers and literals cost the full parser no more: its grammar, and canonical
            // when nothing in them was counted as rewritten (an integer that fits, not `-0`).
            let before = rewritten
            return (try? parseValue(depth: depth)) != nil && rewritten == before
        }
    }

    /// The members of a non-empty object, up to and past its closing brace.
    private mutating func skipCanonicalMembers(depth: Int) -> Bool {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: Self.keysComparedOneByOne) { keys in
            var count = 0
            while true {
                guard count < keys.count, index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return false }
                let keyStart = index + 1
                guard skipCanonicalString() else { return false }
                let key = keyStart..<(index - 1)
                for other in keys[..<count] where isSameText(other, key) { return false }
                keys.initializeElement(at: count, to: key)
                count += 1
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { return false }
                index += 1
                guard skipCanonicalValue(depth: depth), index < buffer.count else { return false }
                switch buffer[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default: return false
                }
            }
        }
    }

    private func isSameText(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && UnsafeRawBufferPointer(rebasing: buffer[a]).elementsEqual(UnsafeRawBufferPointer(rebasing: buffer[b]))
    }

    /// The elements of a non-empty array, up to and past its closing bracket.
    private mutating func skipCanonicalElements(depth: Int) -> Bool {
        while true {
            guard skipCanonicalValue(depth: depth), index < buffer.count else { return false }
            switch buffer[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return true
            default: return false
            }
        }
    }

    /// A string without escapes (which `serialized()` writes only where it must), valid UTF-8.
    private mutating func skipCanonicalString() -> Bool {
        let start = index + 1
        index = JSONBytes.firstSpecial(in: buffer, from: start)
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return false }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
        index += 1
        return JSONBytes.isASCII(slice) || String(validating: slice, as: UTF8.self) != nil
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maximumDepth else { throw error(.tooDeep) }
        index += 1
        var array: [JSON] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(array)
            default: throw error(.unexpectedCharacter)
            }
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, so the string is the bytes between the quotes.
        index = JSONBytes.firstSpecial(in: buffer, from: start)
        guard index < buffer.count else { throw error(.unexpectedEnd) }
        switch buffer[index] {
        case UInt8(ascii: "\""):
            let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
            index += 1
            // ASCII is valid UTF-8 as it stands; `String(validating:)` is not specialized for
            // raw bytes and cost a twentieth of a producer's update in metadata lookups.
            if JSONBytes.isASCII(slice) { return String(decoding: slice, as: UTF8.self) }
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

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
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

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < buffer.count, isDigit(buffer[index]) { index += 1 }
    }
}
