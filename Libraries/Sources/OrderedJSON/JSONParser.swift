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
/// any kind ends in a `JSONParseError`. It builds trees on a `JSONReader`, which reads the
/// tokens.
public struct JSONParser {
    public static let defaultMaximumDepth = 64

    public static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        func parse(_ buffer: UnsafeRawBufferPointer) -> Result<JSON, JSONParseError> {
            Result { () throws(JSONParseError) -> JSON in try Self.parse(buffer, maximumDepth: maximumDepth) }
        }
        if let result = bytes.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) { return try result.get() }
        return try Array(bytes).withUnsafeBytes(parse).get()
    }

    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    public static func parse(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSON {
        var parser = JSONParser(reader: JSONReader(buffer, maximumDepth: maximumDepth))
        return try parser.parseDocument()
    }

    var reader: JSONReader

    init(reader: JSONReader) {
        self.reader = reader
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSON {
        reader.skipWhitespace()
        guard reader.index < reader.buffer.count else { throw JSONParseError(reason: .empty, offset: 0) }
        let value = try parseValue(depth: 0)
        reader.skipWhitespace()
        guard reader.index == reader.buffer.count else { throw reader.error(.trailingData) }
        return value
    }

    /// The value at the reader's position, inside containers `depth` deep.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        switch try reader.peek() {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try reader.parseString())
        case UInt8(ascii: "t"): try reader.expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try reader.expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try reader.expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try reader.parseNumber()
        default: throw reader.error(.unexpectedCharacter)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= reader.maximumDepth else { throw reader.error(.tooDeep) }
        reader.index += 1
        reader.skipWhitespace()
        if try reader.peek() == UInt8(ascii: "}") {
            reader.index += 1
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
            reader.skipWhitespace()
            guard try reader.peek() == UInt8(ascii: "\"") else { throw reader.error(.unexpectedCharacter) }
            let keyOffset = reader.index
            let key = try reader.parseString()
            if seen == nil, keys.count == JSONReader.keysComparedOneByOne { seen = Set(keys) }
            let duplicate = seen != nil ? seen!.insert(key).inserted == false : keys.contains(key)
            guard !duplicate else { throw JSONParseError(reason: .duplicateKey, offset: keyOffset) }
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"))
            reader.skipWhitespace()
            keys.append(key)
            values.append(try parseValue(depth: depth))
            reader.skipWhitespace()
            switch try reader.peek() {
            case UInt8(ascii: ","): reader.index += 1
            case UInt8(ascii: "}"):
                reader.index += 1
                return .object(JSONObject(uncheckedUniqueKeys: keys, values: values))
            default: throw reader.error(.unexpectedCharacter)
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= reader.maximumDepth else { throw reader.error(.tooDeep) }
        reader.index += 1
        var array: [JSON] = []
        reader.skipWhitespace()
        if try reader.peek() == UInt8(ascii: "]") {
            reader.index += 1
            return .array(array)
        }
        while true {
            reader.skipWhitespace()
            array.append(try parseValue(depth: depth))
            reader.skipWhitespace()
            switch try reader.peek() {
            case UInt8(ascii: ","): reader.index += 1
            case UInt8(ascii: "]"): reader.index += 1; return .array(array)
            default: throw reader.error(.unexpectedCharacter)
            }
        }
    }
}
