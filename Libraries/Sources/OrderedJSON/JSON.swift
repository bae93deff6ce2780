public import OrderedCollections

/// A JSON object whose members keep the order they were written in, so messages and
/// documents read back the way they were produced.
public typealias JSONObject = OrderedDictionary<String, JSON>

/// A JSON value that keeps integers and floating-point numbers apart, as Varlink's
/// `int` and `float` types do.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    public var intValue: Int? { if case .int(let i) = self { i } else { nil } }

    /// The value of a number of either kind.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): d
        case .int(let i): Double(i)
        default: nil
        }
    }

    public var arrayValue: [JSON]? { if case .array(let a) = self { a } else { nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }

    /// The member `key` of an object, or nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { o[key] } else { nil }
    }

    /// The name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "float"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Structural equality in which numbers compare by value (`1 == 1.0`), the way JSON
    /// itself does not tell them apart.
    public func numericallyEquals(_ other: JSON) -> Bool {
        switch (self, other) {
        case (.int, .double), (.double, .int): return doubleValue == other.doubleValue
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.numericallyEquals($1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { k, v in b[k].map { v.numericallyEquals($0) } ?? false }
        default: return self == other
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSON: CustomStringConvertible {
    /// The compact JSON text of the value.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}
