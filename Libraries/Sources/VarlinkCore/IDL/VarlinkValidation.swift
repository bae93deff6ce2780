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
        validate(object: parameters, fields: fields, lenient: allowingUnknownFields)
    }

    // Each level returns where below it the first invalid value is, and the caller prefixes
    // its own part: a path is only built for a call that is refused.

    /// The path of the first invalid member of `object`, from its first field name.
    private func validate(object: JSONObject, fields: [VarlinkField], lenient: Bool) -> String? {
        for field in fields {
            guard let value = object[field.name] else {
                if case .nullable = field.type { continue }
                return field.name
            }
            if let bad = validate(value, field.type, lenient: lenient) { return field.name + bad }
        }
        if !lenient {
            for key in object.keys where !fields.contains(where: { $0.name == key }) {
                return key
            }
        }
        return nil
    }

    /// Where inside `value` it is invalid: "" for the value itself, ".member…" or "[index]…".
    private func validate(_ value: JSON, _ type: VarlinkType, lenient: Bool) -> String? {
        switch (type, value) {
        case (.nullable, .null): return nil
        case (.nullable(let inner), _): return validate(value, inner, lenient: lenient)
        case (.bool, .bool), (.int, .int), (.float, .double), (.float, .int), (.string, .string), (.object, .object):
            return nil
        case (.enum(let cases), .string(let s)):
            return cases.contains(s) ? nil : ""
        case (.struct(let fields), .object(let o)):
            return validate(object: o, fields: fields, lenient: lenient).map { "." + $0 }
        case (.array(let element), .array(let items)):
            for (i, item) in items.enumerated() {
                if let bad = validate(item, element, lenient: lenient) { return "[\(i)]" + bad }
            }
            return nil
        case (.dictionary(let element), .object(let o)):
            for (key, item) in o {
                if let bad = validate(item, element, lenient: lenient) { return "[\(key)]" + bad }
            }
            return nil
        case (.named(let name), _):
            guard let resolved = types[name] else { return "" }
            return validate(value, resolved, lenient: lenient)
        default:
            return ""
        }
    }
}
