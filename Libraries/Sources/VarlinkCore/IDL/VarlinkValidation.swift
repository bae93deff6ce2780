public import OrderedJSON
public import OrderedCollections

extension VarlinkInterface {
    /// Checks `parameters` against a struct type and returns the path of the first field
    /// that is missing, unexpected or of the wrong type (`content.state`, `items[2]`), or nil
    /// when the value conforms. With `allowingUnknownFields`, members the type does not
    /// declare are ignored, as a client must for replies from newer servers.
    public func firstInvalidField(
        in parameters: JSONObject, of fields: [VarlinkField], allowingUnknownFields: Bool = false
    ) -> String? {
        validate(object: parameters, fields: fields, lenient: allowingUnknownFields)?.path
    }

    /// The first invalid field, as `firstInvalidField` finds it, with what the interface
    /// expects there in its own words (`DismissalPolicy (kind: (default, immediate, after),
    /// date: ?float)`): a caller told only a path must guess what it got wrong.
    public func firstInvalidMember(
        in parameters: JSONObject, of fields: [VarlinkField], allowingUnknownFields: Bool = false
    ) -> (path: String, expected: String)? {
        guard let invalid = validate(object: parameters, fields: fields, lenient: allowingUnknownFields) else { return nil }
        return (invalid.path, invalid.expected.map { describe($0, expanding: true) } ?? Self.noSuchMember)
    }

    static let noSuchMember = "no such member"

    /// `type` as the IDL writes it; a named type's members spelt out once, at the top.
    func describe(_ type: VarlinkType, expanding: Bool = false) -> String {
        switch type {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .object: "object"
        case .named(let name):
            if expanding, let resolved = types[name], case .struct = resolved { "\(name) \(describe(resolved))" } else { name }
        case .enum(let cases): "(" + cases.joined(separator: ", ") + ")"
        case .struct(let fields): "(" + fields.map { "\($0.name): \(describe($0.type))" }.joined(separator: ", ") + ")"
        case .array(let element): "[]" + describe(element, expanding: expanding)
        case .dictionary(let element): "[string]" + describe(element, expanding: expanding)
        case .nullable(let inner): "?" + describe(inner, expanding: expanding)
        }
    }

    /// Where a value is invalid, and the type expected there (nil: a member that should not be there).
    private struct Invalid {
        var path: String
        var expected: VarlinkType?

        func below(_ prefix: String) -> Invalid { Invalid(path: prefix + path, expected: expected) }
    }

    // Each level returns where below it the first invalid value is, and the caller prefixes
    // its own part: a path is only built for a call that is refused.

    /// The first invalid member of `object`, its path from its first field name.
    private func validate(object: JSONObject, fields: [VarlinkField], lenient: Bool) -> Invalid? {
        for field in fields {
            guard let value = object[field.name] else {
                if case .nullable = field.type { continue }
                return Invalid(path: field.name, expected: field.type)
            }
            if let bad = validate(value, field.type, lenient: lenient) { return bad.below(field.name) }
        }
        if !lenient {
            for key in object.keys where !fields.contains(where: { $0.name == key }) {
                return Invalid(path: key, expected: nil)
            }
        }
        return nil
    }

    /// Where inside `value` it is invalid: "" for the value itself, ".member…" or "[index]…".
    private func validate(_ value: JSON, _ type: VarlinkType, lenient: Bool) -> Invalid? {
        switch (type, value) {
        case (.nullable, .null): return nil
        case (.nullable(let inner), _): return validate(value, inner, lenient: lenient)
        case (.bool, .bool), (.int, .int), (.float, .double), (.float, .int), (.string, .string), (.object, .object):
            return nil
        case (.enum(let cases), .string(let s)):
            return cases.contains(s) ? nil : Invalid(path: "", expected: type)
        case (.struct(let fields), .object(let o)):
            return validate(object: o, fields: fields, lenient: lenient)?.below(".")
        case (.array(let element), .array(let items)):
            for (i, item) in items.enumerated() {
                if let bad = validate(item, element, lenient: lenient) { return bad.below("[\(i)]") }
            }
            return nil
        case (.dictionary(let element), .object(let o)):
            for (key, item) in o {
                if let bad = validate(item, element, lenient: lenient) { return bad.below("[\(key)]") }
            }
            return nil
        case (.named(let name), _):
            guard let resolved = types[name] else { return Invalid(path: "", expected: type) }
            // A named type is expected by its name (and its members), not as what it resolves to.
            guard let bad = validate(value, resolved, lenient: lenient) else { return nil }
            return bad.path.isEmpty ? Invalid(path: "", expected: type) : bad
        default:
            return Invalid(path: "", expected: type)
        }
    }
}
