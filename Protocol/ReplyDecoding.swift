package import OrderedCollections
package import OrderedJSON

// What the generated reply structs of Replies.varlinkmap are written with (the varlink-codegen
// plugin writes them from Protocol/*.varlink at build time): how a value of each Swift type is
// read from a reply, and the error that says where a reply is not what its interface says.

/// A reply of islandd that is not what its interface says: a member it declares is missing, or
/// of another type. A client that meets one is talking to a daemon whose interface differs
/// from its own, and says so rather than guessing.
package struct UnexpectedReply: Error, Sendable, Equatable, CustomStringConvertible {
    /// The qualified method whose reply it is, once known.
    package var method: String?
    /// Where in the reply, outermost first (`focus.since`, `apps[2].limits`); "" for the value read.
    package var path: String
    /// The interface's type there (`bool`, `[]string`, `Focus`).
    package var expected: String
    /// The JSON type found there, or nil when the member is missing.
    package var found: String?

    package init(method: String? = nil, path: String = "", expected: String, found: String?) {
        self.method = method
        self.path = path
        self.expected = expected
        self.found = found
    }

    /// The same error, in the reply to `method`.
    package func replying(to method: String) -> UnexpectedReply {
        var error = self
        error.method = method
        return error
    }

    /// The same error, one level down: within `member` (a member's name, or `[index]`).
    func within(_ member: String) -> UnexpectedReply {
        var error = self
        error.path = path.isEmpty ? member : path.hasPrefix("[") ? member + path : member + "." + path
        return error
    }

    package var description: String {
        let whose = method.map { "the reply to \($0)" } ?? "a reply"
        let place = path.isEmpty ? "the value" : path
        guard let found else { return "\(whose) lacks \(place) (\(expected)): islandd's interface differs from this client's" }
        let what = found == "null" ? "null" : (found.first.map { "aeiou".contains($0) } == true ? "an " : "a ") + found
        return "in \(whose), \(place) is \(what), not \(expected): islandd's interface differs from this client's"
    }
}

/// A value of an interface's type, read from a reply; `value` is never null.
package protocol ReplyValue: Sendable {
    /// The interface's name for the type (`string`, `[]Focus`), for errors.
    static var replyType: String { get }
    init(reply value: JSON) throws(UnexpectedReply)
}

/// The members of an object read from a reply, by name. Absent and `null` are alike: an
/// optional member may be either, a required one neither.
package enum ReplyMembers {
    package static func required<Value: ReplyValue>(_ object: JSONObject, _ key: String) throws(UnexpectedReply) -> Value {
        guard let value: Value = try optional(object, key) else {
            throw UnexpectedReply(path: key, expected: Value.replyType, found: object[key]?.typeName)
        }
        return value
    }

    package static func optional<Value: ReplyValue>(_ object: JSONObject, _ key: String) throws(UnexpectedReply) -> Value? {
        guard let member = object[key], !member.isNull else { return nil }
        do {
            return try Value(reply: member)
        } catch {
            throw error.within(key)
        }
    }

    /// The members of a struct-typed value, or an error when it is no object.
    package static func object<Value: ReplyValue>(_ value: JSON, _: Value.Type) throws(UnexpectedReply) -> JSONObject {
        guard let object = value.objectValue else { throw UnexpectedReply(expected: Value.replyType, found: value.typeName) }
        return object
    }
}

extension ReplyValue {
    /// The error for `value`, which is not of this type.
    fileprivate static func mismatch(_ value: JSON) -> UnexpectedReply {
        UnexpectedReply(expected: replyType, found: value.typeName)
    }
}

// MARK: The IDL's own types

extension String: ReplyValue {
    package static var replyType: String { "string" }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let string = value.stringValue else { throw Self.mismatch(value) }
        self = string
    }
}

extension Bool: ReplyValue {
    package static var replyType: String { "bool" }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let bool = value.boolValue else { throw Self.mismatch(value) }
        self = bool
    }
}

extension Int: ReplyValue {
    package static var replyType: String { "int" }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let int = value.intValue else { throw Self.mismatch(value) }
        self = int
    }
}

/// `float`: a number of either kind.
extension Double: ReplyValue {
    package static var replyType: String { "float" }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let number = value.doubleValue else { throw Self.mismatch(value) }
        self = number
    }
}

/// `object`, kept as it is (an activity's attributes, a layout).
extension OrderedDictionary: ReplyValue where Key == String, Value == JSON {
    package static var replyType: String { "object" }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let object = value.objectValue else { throw Self.mismatch(value) }
        self = object
    }
}

/// `[]T`; an element that is wrong is named by its index.
extension Array: ReplyValue where Element: ReplyValue {
    package static var replyType: String { "[]" + Element.replyType }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let array = value.arrayValue else { throw Self.mismatch(value) }
        self = []
        reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            do {
                append(try Element(reply: element))
            } catch {
                throw error.within("[\(index)]")
            }
        }
    }
}

/// `[string]T`.
extension Dictionary: ReplyValue where Key == String, Value: ReplyValue {
    package static var replyType: String { "[string]" + Value.replyType }

    package init(reply value: JSON) throws(UnexpectedReply) {
        guard let object = value.objectValue else { throw Self.mismatch(value) }
        self.init(minimumCapacity: object.count)
        for (key, member) in object {
            do {
                self[key] = try Value(reply: member)
            } catch {
                throw error.within(key)
            }
        }
    }
}
