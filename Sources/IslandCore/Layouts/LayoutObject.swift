import OrderedJSON
import OrderedCollections

/// A JSON object of a layout being validated: typed member access whose failures name the
/// member's path, and the check that every key is one the object may have.
struct LayoutObject {
    let members: JSONObject
    let path: LayoutPath

    /// - Parameter allowedKeys: every other key is refused, the first in document order.
    init(_ json: JSON, at path: LayoutPath, allowedKeys: Set<String>) throws(LayoutError) {
        guard case .object(let members) = json else {
            throw path.error("expected an object, found \(json.typeName)")
        }
        if let unknown = members.keys.first(where: { !allowedKeys.contains($0) }) {
            // A near miss (`compactLeding`, `lockscreen`) names the key it probably meant.
            let suggestion = LayoutLint.closest(to: unknown, among: allowedKeys.sorted()).map { "; did you mean '\($0)'?" } ?? ""
            throw path.appending(unknown).error("unknown key '\(unknown)'\(suggestion)")
        }
        self.members = members
        self.path = path
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    func required(_ key: String) throws(LayoutError) -> JSON {
        guard let value = members[key] else { throw path.appending(key).error("required") }
        return value
    }

    func string(_ key: String) throws(LayoutError) -> String? {
        guard let value = members[key] else { return nil }
        guard case .string(let string) = value else { throw mistyped(key, expected: "a string") }
        return string
    }

    func requiredString(_ key: String) throws(LayoutError) -> String {
        guard case .string(let string) = try required(key) else { throw mistyped(key, expected: "a string") }
        return string
    }

    func nonEmptyString(_ key: String) throws(LayoutError) -> String {
        let string = try requiredString(key)
        guard !string.isEmpty else { throw path.appending(key).error("must not be empty") }
        return string
    }

    func bool(_ key: String) throws(LayoutError) -> Bool? {
        guard let value = members[key] else { return nil }
        guard case .bool(let bool) = value else { throw mistyped(key, expected: "a bool") }
        return bool
    }

    func number(_ key: String) throws(LayoutError) -> Double? {
        guard let value = members[key] else { return nil }
        guard let number = value.doubleValue, number.isFinite else { throw mistyped(key, expected: "a number") }
        return number
    }

    func requiredNumber(_ key: String) throws(LayoutError) -> Double {
        guard let number = try number(key) else { throw path.appending(key).error("required") }
        return number
    }

    func array(_ key: String) throws(LayoutError) -> [JSON]? {
        guard let value = members[key] else { return nil }
        guard case .array(let array) = value else { throw mistyped(key, expected: "an array") }
        return array
    }

    func template(_ key: String) throws(LayoutError) -> LayoutTemplate? {
        guard let source = try string(key) else { return nil }
        return try LayoutTemplate(source, contentType: .text, at: path.appending(key))
    }

    func requiredTemplate(_ key: String, allowEmpty: Bool = true) throws(LayoutError) -> LayoutTemplate {
        let source = allowEmpty ? try requiredString(key) : try nonEmptyString(key)
        return try LayoutTemplate(source, contentType: .text, at: path.appending(key))
    }

    func url(_ key: String) throws(LayoutError) -> LayoutURL? {
        guard let source = try string(key) else { return nil }
        return try LayoutURL(source, at: path.appending(key))
    }

    func requiredURL(_ key: String) throws(LayoutError) -> LayoutURL {
        try LayoutURL(try requiredString(key), at: path.appending(key))
    }

    func color(_ key: String) throws(LayoutError) -> LayoutColor? {
        guard let hex = try string(key) else { return nil }
        guard let color = LayoutColor(hex: hex) else {
            throw path.appending(key).error("'\(hex)' is not a color: expected #RRGGBB or #RRGGBBAA")
        }
        return color
    }

    /// A number, or a template string that renders to one.
    func measure(_ key: String) throws(LayoutError) -> LayoutNumber? {
        switch members[key] {
        case nil: return nil
        case .string(let source): return .template(try LayoutTemplate(source, contentType: .text, at: path.appending(key)))
        case let value?:
            guard let number = value.doubleValue, number.isFinite else {
                throw mistyped(key, expected: "a number or a template string")
            }
            return .constant(number)
        }
    }

    func requiredMeasure(_ key: String) throws(LayoutError) -> LayoutNumber {
        guard let measure = try measure(key) else { throw path.appending(key).error("required") }
        return measure
    }

    private func mistyped(_ key: String, expected: String) -> LayoutError {
        path.appending(key).error("expected \(expected), found \(members[key]?.typeName ?? "nothing")")
    }
}
