import IslandJSON
import Mustache

/// A JSON object as swift-mustache sees it: members looked up by name (so `state.eta` walks
/// into `state`), arrays as sequences for sections, numbers without a needless `.0`.
///
/// Missing members and `null` are nil, which Mustache renders as nothing and treats as false.
struct MustacheJSONObject: MustacheParent, MustacheCustomRenderable, Sendable {
    let object: JSONObject

    func child(named name: String) -> Any? {
        object[name].flatMap(Self.mustacheValue)
    }

    /// Rendering an object itself (`{{state}}`) shows its JSON text, not Swift's debug form.
    var renderText: String { JSON.object(object).description }
    var isNull: Bool { false }

    static func mustacheValue(_ json: JSON) -> Any? {
        switch json {
        case .null: nil
        case .bool(let bool): bool
        case .int(let int): int
        case .double(let double): wholeNumber(double) ?? double
        case .string(let string): string
        case .array(let array): array.map { mustacheValue($0) ?? MustacheNull() }
        case .object(let object): MustacheJSONObject(object: object)
        }
    }

    /// 12.0 renders as "12": JSON does not tell the two apart, and neither should a label.
    private static func wholeNumber(_ double: Double) -> Int? {
        guard double.rounded() == double, abs(double) < 9.0e15 else { return nil }
        return Int(double)
    }
}

/// A `null` array element: renders as nothing, false in sections.
struct MustacheNull: MustacheCustomRenderable, Sendable {
    var renderText: String { "" }
    var isNull: Bool { true }
}
