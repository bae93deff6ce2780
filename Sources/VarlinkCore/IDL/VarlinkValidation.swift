public import IslandJSON
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

extension VarlinkInterface {
    /// Whether every method whose input can carry a member at `path` (field names from the
    /// top of its parameters) declares it `object` or `?object`, reached through struct fields
    /// only. A member kept as text stands in the parameters as `{}` (see
    /// `VarlinkService.canonicalTextPath`), so checking its kind must be all its validation.
    func declaresUntypedObject(at path: [String]) -> Bool {
        methods.values.allSatisfy { isUntypedObject(at: path[...], in: .struct($0.input)) }
    }

    private func isUntypedObject(at path: ArraySlice<String>, in type: VarlinkType) -> Bool {
        guard let name = path.first else {
            switch type {
            case .object, .nullable(.object): return true
            default: return false
            }
        }
        switch type {
        case .named(let named): return types[named].map { isUntypedObject(at: path, in: $0) } ?? false
        case .nullable(let inner): return isUntypedObject(at: path, in: inner)
        // A struct without the field refuses the member as unexpected, kept or not.
        case .struct(let fields): return fields.first { $0.name == name }.map { isUntypedObject(at: path.dropFirst(), in: $0.type) } ?? true
        // Inside a map, an array or an untyped object, a member of that name could be anything.
        default: return false
        }
    }
}
