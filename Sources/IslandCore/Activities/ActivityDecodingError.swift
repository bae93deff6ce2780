import OrderedJSON
import OrderedCollections

/// Stored JSON (an activity, settings, budgets or a snapshot) that does not decode: which
/// member, and what is wrong with it.
package struct ActivityDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Dotted path of the member, e.g. `content.state`.
    package var path: String
    package var problem: String

    package init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    package var description: String { "\(path): \(problem)" }
}

/// Typed reads of one JSON object's members, naming the member in every error.
struct ActivityJSONReader {
    let object: JSONObject
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    init(_ json: JSON, path: String) throws(ActivityDecodingError) {
        guard let object = json.objectValue else {
            throw ActivityDecodingError(path: path, problem: "expected an object, found \(json.typeName)")
        }
        self.init(object, path: path)
    }

    func pathOf(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The member, or nil when it is missing or null (optional members are omitted when nil).
    func optional(_ key: String) -> JSON? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    func required(_ key: String) throws(ActivityDecodingError) -> JSON {
        guard let value = optional(key) else { throw ActivityDecodingError(path: pathOf(key), problem: "missing") }
        return value
    }

    private func mismatch(_ key: String, _ expected: String, _ found: JSON) -> ActivityDecodingError {
        ActivityDecodingError(path: pathOf(key), problem: "expected \(expected), found \(found.typeName)")
    }

    func string(_ key: String) throws(ActivityDecodingError) -> String {
        let value = try required(key)
        guard let string = value.stringValue else { throw mismatch(key, "string", value) }
        return string
    }

    func optionalString(_ key: String) throws(ActivityDecodingError) -> String? {
        guard optional(key) != nil else { return nil }
        return try string(key)
    }

    func double(_ key: String) throws(ActivityDecodingError) -> Double {
        let value = try required(key)
        guard let number = value.doubleValue else { throw mismatch(key, "number", value) }
        return number
    }

    func optionalDouble(_ key: String) throws(ActivityDecodingError) -> Double? {
        guard optional(key) != nil else { return nil }
        return try double(key)
    }

    func bool(_ key: String, default defaultValue: Bool) throws(ActivityDecodingError) -> Bool {
        guard let value = optional(key) else { return defaultValue }
        guard let bool = value.boolValue else { throw mismatch(key, "bool", value) }
        return bool
    }

    func object(_ key: String) throws(ActivityDecodingError) -> JSONObject {
        let value = try required(key)
        guard let object = value.objectValue else { throw mismatch(key, "object", value) }
        return object
    }

    func optionalObject(_ key: String) throws(ActivityDecodingError) -> JSONObject? {
        guard optional(key) != nil else { return nil }
        return try object(key)
    }

    func array(_ key: String) throws(ActivityDecodingError) -> [JSON] {
        let value = try required(key)
        guard let array = value.arrayValue else { throw mismatch(key, "array", value) }
        return array
    }

    func reader(_ key: String) throws(ActivityDecodingError) -> ActivityJSONReader {
        ActivityJSONReader(try object(key), path: pathOf(key))
    }

    func enumeration<E: RawRepresentable>(_ key: String, as _: E.Type) throws(ActivityDecodingError) -> E
    where E.RawValue == String {
        let raw = try string(key)
        guard let value = E(rawValue: raw) else {
            throw ActivityDecodingError(path: pathOf(key), problem: "unknown value \"\(raw)\"")
        }
        return value
    }

    func optionalEnumeration<E: RawRepresentable>(_ key: String, as type: E.Type) throws(ActivityDecodingError) -> E?
    where E.RawValue == String {
        guard optional(key) != nil else { return nil }
        return try enumeration(key, as: type)
    }
}
