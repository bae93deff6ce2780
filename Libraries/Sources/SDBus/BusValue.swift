/// One D-Bus value, as read from a message or to be written into one.
///
/// Containers keep what the wire needs: an array its element signature (an empty array still
/// has a type), a dictionary is an array of `dictEntry` values (`a{sv}` is
/// `.array("{sv}", [.dictEntry(.string(k), .variant(v)), …])`).
public indirect enum BusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor the message referred to. Never read: the bridge does not negotiate
    /// descriptor passing, so only its place is kept.
    case unixFD
    case array(elementSignature: String, [BusValue])
    case dictEntry(BusValue, BusValue)
    case structure([BusValue])
    case variant(BusValue)

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// An `a{sv}` dictionary.
    public static func vardict(_ entries: [(String, BusValue)]) -> BusValue {
        .array(elementSignature: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> BusValue {
        .array(elementSignature: "s", values.map(BusValue.string))
    }

    // MARK: Reading

    /// The value inside any number of variants.
    public var unwrapped: BusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type, as the spec's loosely typed values come (a `value` hint may be an
    /// `i`, a `u` or a `y`); nil when it does not fit in an `Int64`.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let value): Int64(value)
        case .int16(let value): Int64(value)
        case .uint16(let value): Int64(value)
        case .int32(let value): Int64(value)
        case .uint32(let value): Int64(value)
        case .int64(let value): value
        case .uint64(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// Any number, integers included.
    public var number: Double? {
        if case .double(let value) = unwrapped { return value }
        return integer.map(Double.init)
    }

    /// The elements of an array.
    public var elements: [BusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The strings of an `as`, or a lone string as one element (players send both for
    /// `xesam:artist`).
    public var stringList: [String]? {
        if let single = string { return [single] }
        return elements?.compactMap(\.string)
    }

    /// A dictionary with string keys (`a{sv}`, `a{ss}`…): the first of repeated keys wins.
    public var dictionary: [String: BusValue]? {
        guard let elements else { return nil }
        var result: [String: BusValue] = [:]
        for element in elements {
            guard case .dictEntry(let key, let value) = element, let name = key.string else { continue }
            if result[name] == nil { result[name] = value.unwrapped }
        }
        return result
    }
}
