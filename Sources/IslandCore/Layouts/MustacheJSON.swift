import OrderedJSON
import Mustache
import OrderedCollections

/// JSON as swift-mustache sees it during one render: members looked up by name (so
/// `state.eta` walks into `state`), arrays as sequences for sections, numbers without a
/// needless `.0`; every lookup, element and rendered text charged to the render's
/// `MustacheBudget`.
///
/// Missing members and `null` are nil, which Mustache renders as nothing and treats as false.
/// None of these types has members a template could reach other than the JSON's own: a type
/// that is no `MustacheParent` would be searched by reflection.
struct MustacheJSONObject: MustacheParent, MustacheCustomRenderable {
    let object: JSONObject
    let budget: MustacheBudget

    func child(named name: String) -> Any? {
        guard budget.spend(budget.step) else { return nil }
        return object[name].flatMap { Self.mustacheValue($0, budget) }
    }

    /// Rendering an object itself (`{{state}}`) shows its JSON text, not Swift's debug form.
    var renderText: String { budget.charge(JSON.object(object).description) }
    var isNull: Bool { false }

    static func mustacheValue(_ json: JSON, _ budget: MustacheBudget) -> Any? {
        switch json {
        case .null: nil
        case .bool(let bool): bool
        case .int(let int): MustacheJSONNumber(number: .int(int), budget: budget)
        case .double(let double): MustacheJSONNumber(number: wholeNumber(double).map { .int($0) } ?? .double(double), budget: budget)
        case .string(let string): MustacheJSONString(string: string, budget: budget)
        case .array(let array): MustacheJSONArray(elements: array, budget: budget)
        case .object(let object): MustacheJSONObject(object: object, budget: budget)
        }
    }

    /// 12.0 renders as "12": JSON does not tell the two apart, and neither should a label.
    private static func wholeNumber(_ double: Double) -> Int? {
        guard double.rounded() == double, abs(double) < 9.0e15 else { return nil }
        return Int(double)
    }
}

/// An array: a sequence whose every element is charged, with swift-mustache's array
/// transforms (`first`, `last`, `reversed`, `count`, `empty`).
struct MustacheJSONArray: MustacheSequence, MustacheParent, MustacheTransformable, MustacheCustomRenderable {
    let elements: [JSON]
    let budget: MustacheBudget

    struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[JSON]>
        let budget: MustacheBudget

        mutating func next() -> Any? {
            guard budget.spend(budget.step), let element = base.next() else { return nil }
            return MustacheJSONObject.mustacheValue(element, budget) ?? MustacheNull()
        }
    }

    func makeIterator() -> Iterator { Iterator(base: elements.makeIterator(), budget: budget) }

    func child(named name: String) -> Any? { nil }

    func transform(_ name: String) -> Any? {
        switch name {
        case "first": elements.first.flatMap { MustacheJSONObject.mustacheValue($0, budget) }
        case "last": elements.last.flatMap { MustacheJSONObject.mustacheValue($0, budget) }
        case "reversed": MustacheJSONArray(elements: elements.reversed(), budget: budget)
        case "count": elements.count
        case "empty": elements.isEmpty
        default: nil
        }
    }

    var renderText: String { budget.charge(JSON.array(elements).description) }
    var isNull: Bool { false }
}

/// A string, charged where it is rendered, with swift-mustache's string transforms.
struct MustacheJSONString: MustacheParent, MustacheTransformable, MustacheCustomRenderable {
    let string: String
    let budget: MustacheBudget

    func child(named name: String) -> Any? { nil }

    func transform(_ name: String) -> Any? {
        if name == "humanized" { return MustacheJSONString(string: MustacheFormat.humanized(string), budget: budget) }
        return switch string.transform(name) {
        case let text as any StringProtocol: MustacheJSONString(string: String(text), budget: budget)
        case let other: other
        }
    }

    var renderText: String { budget.charge(string) }
    var isNull: Bool { false }
}

/// A number: rendered as JSON writes it (12, not 12.0), with transforms that write it as a time
/// of day (`time`) or a length of time in seconds (`duration`), and swift-mustache's integer
/// transforms (`equalzero`, `plusone`, `minusone`, `even`, `odd`), which here cannot overflow.
struct MustacheJSONNumber: MustacheTransformable, MustacheCustomRenderable {
    enum Number { case int(Int), double(Double) }
    let number: Number
    let budget: MustacheBudget

    var value: Double {
        switch number {
        case .int(let int): Double(int)
        case .double(let double): double
        }
    }

    func transform(_ name: String) -> Any? {
        switch (name, number) {
        case ("time", _): MustacheFormat.time(value, clock: budget.clock).map { MustacheJSONString(string: $0, budget: budget) }
        case ("duration", _): MustacheFormat.duration(value).map { MustacheJSONString(string: $0, budget: budget) }
        case ("equalzero", _): value == 0
        case ("plusone", .int(let int)): int.addingReportingOverflow(1).overflow ? nil : MustacheJSONNumber(number: .int(int + 1), budget: budget)
        case ("minusone", .int(let int)): int.subtractingReportingOverflow(1).overflow ? nil : MustacheJSONNumber(number: .int(int - 1), budget: budget)
        case ("even", .int(let int)): int & 1 == 0
        case ("odd", .int(let int)): int & 1 == 1
        default: nil
        }
    }

    var renderText: String {
        switch number {
        case .int(let int): budget.charge(String(int))
        case .double(let double): budget.charge("\(double)")
        }
    }
    var isNull: Bool { false }
}

/// A `null` array element: renders as nothing, false in sections.
struct MustacheNull: MustacheCustomRenderable, Sendable {
    var renderText: String { "" }
    var isNull: Bool { true }
}
