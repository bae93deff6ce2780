import IslandJSON

extension VarlinkInterface {
    /// Checks `parameters` against a struct type and returns the path of the first field
    /// that is missing, unexpected or of the wrong type (`content.state`, `items[2]`), or nil
    /// when the value conforms. With `allowingUnknownFields`, members the type does not
    /// declare are ignored, as a client must for replies from newer servers.
    public func firstInvalidField(
        in parameters: JSONObject, of fields: [VarlinkField], allowingUnknownFields: Bool = false
    ) -> String? {
        validate(object: parameters, fields: fields, path: "", lenient: allowingUnknownFields)
    }

    private func validate(object: JSONObject, fields: [VarlinkField], path: String, lenient: Bool) -> String? {
        for field in fields {
            let fieldPath = path.isEmpty ? field.name : "\(path).\(field.name)"
            guard let value = object[field.name] else {
                if case .nullable = field.type { continue }
                return fieldPath
            }
            if let bad = validate(value, field.type, path: fieldPath, lenient: lenient) { return bad }
        }
        if !lenient {
            for key in object.keys where !fields.contains(where: { $0.name == key }) {
                return path.isEmpty ? key : "\(path).\(key)"
            }
        }
        return nil
    }

    private func validate(_ value: JSON, _ type: VarlinkType, path: String, lenient: Bool) -> String? {
        switch (type, value) {
        case (.nullable, .null): return nil
        case (.nullable(let inner), _): return validate(value, inner, path: path, lenient: lenient)
        case (.bool, .bool), (.int, .int), (.float, .double), (.float, .int), (.string, .string), (.object, .object):
            return nil
        case (.enum(let cases), .string(let s)):
            return cases.contains(s) ? nil : path
        case (.struct(let fields), .object(let o)):
            return validate(object: o, fields: fields, path: path, lenient: lenient)
        case (.array(let element), .array(let items)):
            for (i, item) in items.enumerated() {
                if let bad = validate(item, element, path: "\(path)[\(i)]", lenient: lenient) { return bad }
            }
            return nil
        case (.dictionary(let element), .object(let o)):
            for (key, item) in o {
                if let bad = validate(item, element, path: "\(path)[\(key)]", lenient: lenient) { return bad }
            }
            return nil
        case (.named(let name), _):
            guard let resolved = types[name] else { return path }
            return validate(value, resolved, path: path, lenient: lenient)
        default:
            return path
        }
    }
}
