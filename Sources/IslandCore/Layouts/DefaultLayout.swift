import IslandJSON
import Synchronization

extension Layout {
    /// The layout for activities whose type has no registered one: a generic rendering built
    /// from the *shape* of the activity (which keys exist and their JSON types), never from
    /// values, so it stays the same while an activity's values change.
    ///
    /// Heuristics, in order:
    /// - **title**: `attributes.title`, else `attributes.name`, else `state.title` (the first
    ///   that is a string), else the type made readable (`PizzaDeliveryAttributes` → "Pizza Delivery").
    /// - **symbol**: `state.symbol` or `attributes.symbol` when a string, else `appointment-soon`.
    /// - **measure**: `state.progress` (a fraction 0…1, as in ActivityKit's `ProgressView`),
    ///   `state.percent` (0…100), or `state.value` out of `state.total` → a progress bar;
    ///   `state.endsAt`/`endDate`/`endTime` (epoch seconds) → a countdown.
    /// - **values**: the other scalar members of `state` in their order, with keys a template
    ///   can name (letters, digits, `_`, `-`).
    ///
    /// Regions: compact leading = symbol; compact trailing = the measure, else the first value,
    /// else the title; minimal = the measure, else the symbol; lock screen = symbol and title,
    /// then up to three "Label: value" pairs, then the measure; expanded = symbol, title and
    /// compact trailing, with the pairs and a progress bar below.
    public static func `default`(for type: String, attributes: JSONObject = [:], state: JSONObject = [:]) -> Layout {
        let shape = DefaultLayoutShape(type: type, attributes: attributes, state: state)
        // Every update of an activity without a registered layout needs its default, and its
        // shape rarely changes: validate each shape once, not once per update.
        if let cached = defaultLayouts.withLock({ $0[shape] }) { return cached }
        // Built as JSON and validated like any layout, so the default never bypasses the rules
        // and presenters receive it in the same form. Failing would be a bug here (the tests
        // cover every shape); presenters then fall back to their own rendering.
        let layout = (try? Layout(json: .object(shape.document))) ?? .empty
        defaultLayouts.withLock { cache in
            // Shapes come from clients; a bound keeps a client inventing keys from growing it.
            if cache.count >= 512 { cache.removeAll(keepingCapacity: true) }
            cache[shape] = layout
        }
        return layout
    }

    private static let defaultLayouts = Mutex<[DefaultLayoutShape: Layout]>([:])

    /// What of an activity's state its default layout depends on: the state's keys in order
    /// and the kinds of their values — numbers alike — never the values
    /// (`JSON.objectShape(ofText:)` of `ActivityContent.stateText`). While it stays the same,
    /// so does the default layout: an update checks it rather than build the layout's shape
    /// again, or the state's tree at all.
    public static func defaultLayoutKey(stateText: [UInt8]) -> [UInt8]? {
        JSON.objectShape(ofText: stateText)
    }

    /// No regions: every one falls back to the presenter's own rendering.
    static let empty = Layout(
        lockScreen: nil, compactLeading: nil, compactTrailing: nil, minimal: nil, expanded: ExpandedLayout(),
        keylineTint: nil, backgroundTint: nil, chip: nil, hideContentOnLockScreen: false, url: nil, json: [:])
}

/// What the default layout makes of an activity's keys.
struct DefaultLayoutShape: Hashable {
    private static let titleKeys: [(scope: String, key: String)] = [("attributes", "title"), ("attributes", "name"), ("state", "title")]
    private static let endKeys = ["endsAt", "endDate", "endTime"]
    private static let maximumPairs = 3

    let title: JSON
    let symbol: JSON
    let measure: JSON?
    /// State keys shown as values, in order.
    let valueKeys: [String]

    init(type: String, attributes: JSONObject, state: JSONObject) {
        let scopes = ["attributes": attributes, "state": state]
        if let (scope, key) = Self.titleKeys.first(where: { scopes[$0.scope]?[$0.key]?.stringValue != nil }) {
            title = Self.text("{{\(scope).\(key)}}")
        } else {
            title = Self.text(Self.readableType(type))
        }
        let symbolScope = ["state", "attributes"].first { scopes[$0]?["symbol"]?.stringValue != nil }
        symbol = ["type": "symbol", "name": .string(symbolScope.map { "{{\($0).symbol}}" } ?? "appointment-soon")]

        var used: Set<String> = ["title", "symbol"]
        (measure, used) = Self.measure(in: state, used: used)
        valueKeys = state.compactMap { key, value in
            switch value {
            case .string, .int, .double, .bool: Self.isNameable(key) && !used.contains(key) ? key : nil
            default: nil
            }
        }
    }

    var document: JSONObject {
        let firstValue = valueKeys.first.map { Self.text("{{state.\($0)}}") }
        let compactTrailing = measure ?? firstValue ?? title
        let pairs = valueKeys.prefix(Self.maximumPairs).map { "\(Self.readableKey($0)): {{state.\($0)}}" }
        let summary: JSON? = pairs.isEmpty ? JSON?.none : Self.text(pairs.joined(separator: " · "))
        let bar: JSON? = measure?["type"] == "progress" ? measure : JSON?.none
        let heading: JSON = ["type": "hstack", "children": [symbol, title], "spacing": 6]

        var expanded: JSONObject = [
            "leading": Self.region(symbol, priority: 0),
            "center": Self.region(title, priority: 1),
        ]
        if compactTrailing != title { expanded["trailing"] = Self.region(compactTrailing, priority: 0) }
        // `JSON` is nil-literal convertible: here and above, a bare `nil` would become `.null`
        // instead of a missing view, hence the explicit optional types.
        let below = ([summary, bar] as [JSON?]).compactMap { $0 }
        if !below.isEmpty { expanded["bottom"] = Self.region(Self.vstack(below), priority: 0) }

        return [
            "lockScreen": Self.vstack(([heading, summary, measure] as [JSON?]).compactMap { $0 }),
            "compactLeading": symbol,
            "compactTrailing": compactTrailing,
            "minimal": measure ?? symbol,
            "expanded": .object(expanded),
        ]
    }

    private static func measure(in state: JSONObject, used: Set<String>) -> (JSON?, Set<String>) {
        var used = used
        if state["progress"]?.doubleValue != nil {
            used.insert("progress")
            return (self.progress("{{state.progress}}", total: 1), used)
        }
        if state["percent"]?.doubleValue != nil {
            used.insert("percent")
            return (self.progress("{{state.percent}}", total: 100), used)
        }
        if state["value"]?.doubleValue != nil, state["total"]?.doubleValue != nil {
            used.formUnion(["value", "total"])
            return (["type": "progress", "value": "{{state.value}}", "total": "{{state.total}}"], used)
        }
        if let end = endKeys.first(where: { state[$0]?.doubleValue != nil }) {
            used.insert(end)
            return (["type": "timer", "to": .string("{{state.\(end)}}"), "countsDown": true], used)
        }
        return (JSON?.none, used)
    }

    private static func text(_ template: String) -> JSON { ["type": "text", "template": .string(template)] }
    private static func progress(_ value: String, total: Int) -> JSON {
        ["type": "progress", "value": .string(value), "total": .int(total)]
    }
    private static func vstack(_ children: [JSON]) -> JSON { ["type": "vstack", "children": .array(children), "spacing": 4] }
    private static func region(_ view: JSON, priority: Int) -> JSON {
        guard case .object(var object) = view else { return view }
        object["priority"] = .int(priority)
        return .object(object)
    }

    /// Keys a Mustache tag can name as they are: a dot would walk into a member, other
    /// punctuation would end the tag.
    private static func isNameable(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        }
    }

    /// `org.example.PizzaDeliveryAttributes` → "Pizza Delivery". Only letters, digits and
    /// spaces survive, so the title can never contain a tag.
    static func readableType(_ type: String) -> String {
        var name = Substring(type.split(separator: ".").last ?? "")
        if name.hasSuffix("Attributes"), name.count > "Attributes".count { name = name.dropLast("Attributes".count) }
        let words = self.words(name).map { $0.prefix(1).uppercased() + $0.dropFirst() }
        return words.isEmpty ? "Activity" : words.joined(separator: " ")
    }

    /// `etaMinutes` → "Eta minutes".
    static func readableKey(_ key: String) -> String {
        let sentence = words(Substring(key)).map { $0.lowercased() }.joined(separator: " ")
        return sentence.prefix(1).uppercased() + sentence.dropFirst()
    }

    /// Splits on non-alphanumerics and at lower-to-upper case changes.
    private static func words(_ text: Substring) -> [String] {
        var words: [String] = []
        var current = ""
        for character in text {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            if character.isUppercase, let last = current.last, last.isLowercase || last.isNumber {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}
