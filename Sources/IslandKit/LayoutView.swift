public import OrderedJSON
public import OrderedCollections

/// A layout written in Swift rather than JSON: the same document (PROTOCOL.md, "The layout
/// format"), which the daemon validates when it is registered. (An initializer rather than a
/// result builder: a builder's lines cannot start with `.symbol(…)`, which Swift reads as a call
/// on the line before.)
///
/// ```swift
/// let layout = ActivityLayout(
///     chip: "Pizza",
///     compactLeading: .symbol("🍕"),
///     compactTrailing: .timer(to: "{{state.eta}}"),
///     lockScreen: .vstack(.text("Order {{attributes.orderNumber}}: {{state.stage}}"),
///                         .progress(value: "{{state.progress}}")),
///     expanded: ActivityLayout.Expanded(center: .text("{{state.stage}}").priority(1),
///                                       bottom: .button(action: "cancel", label: "Cancel order").priority(0)))
/// ```
extension ActivityLayout {
    public init(
        chip: String? = nil, url: String? = nil, compactLeading: LayoutView? = nil, compactTrailing: LayoutView? = nil,
        minimal: LayoutView? = nil, lockScreen: LayoutView? = nil, expanded: Expanded? = nil,
        keylineTint: String? = nil, backgroundTint: String? = nil, hideContentOnLockScreen: Bool? = nil
    ) {
        var json: JSONObject = [:]
        if let chip { json["chip"] = .string(chip) }
        if let url { json["url"] = .string(url) }
        for (key, view) in [
            ("compactLeading", compactLeading), ("compactTrailing", compactTrailing), ("minimal", minimal),
            ("lockScreen", lockScreen),
        ] {
            if let view { json[key] = .object(view.json) }
        }
        if let expanded { json["expanded"] = .object(expanded.json) }
        if let keylineTint { json["keylineTint"] = .string(keylineTint) }
        if let backgroundTint { json["backgroundTint"] = .string(backgroundTint) }
        if let hideContentOnLockScreen { json["hideContentOnLockScreen"] = .bool(hideContentOnLockScreen) }
        self.init(json)
    }

    /// The expanded island's regions; each needs a `priority`.
    public struct Expanded: Sendable, Hashable {
        public var json: JSONObject

        public init(leading: LayoutView? = nil, trailing: LayoutView? = nil, center: LayoutView? = nil, bottom: LayoutView? = nil) {
            json = [:]
            for (key, view) in [("leading", leading), ("trailing", trailing), ("center", center), ("bottom", bottom)] {
                if let view { json[key] = .object(view.json) }
            }
        }
    }
}

/// A view of a layout. Measures (a progress value, a timer's end) are numbers or templates
/// that render to one: `0.5` or `"{{state.progress}}"`.
public struct LayoutView: Sendable, Hashable {
    public var json: JSONObject

    public init(_ json: JSONObject) {
        self.json = json
    }

    public static func text(_ template: String) -> LayoutView { LayoutView(["type": "text", "template": .string(template)]) }

    /// A freedesktop icon name or an emoji; `names` maps what `name` renders to the symbol shown.
    public static func symbol(_ name: String, names: [String: String] = [:]) -> LayoutView {
        var json: JSONObject = ["type": "symbol", "name": .string(name)]
        if !names.isEmpty { json["names"] = .object(JSONObject(uniqueKeysWithValues: names.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })) }
        return LayoutView(json)
    }

    /// A live timer: counting down to `to`, or up from `from`.
    public static func timer(from: JSON? = nil, to: JSON? = nil, countsDown: Bool? = nil) -> LayoutView {
        var json: JSONObject = ["type": "timer"]
        if let from { json["from"] = from }
        if let to { json["to"] = to }
        if let countsDown { json["countsDown"] = .bool(countsDown) }
        return LayoutView(json)
    }

    public static func progress(value: JSON, total: JSON = 1) -> LayoutView {
        LayoutView(["type": "progress", "value": value, "total": total])
    }

    /// A button whose press reaches the app as `ActivityInteraction.button(action:)`.
    public static func button(action: String, label: String, symbol: String? = nil) -> LayoutView {
        var json: JSONObject = ["type": "button", "action": .string(action), "label": .string(label)]
        if let symbol { json["symbol"] = .string(symbol) }
        return LayoutView(json)
    }

    /// A row.
    public static func hstack(spacing: Double? = nil, _ children: LayoutView...) -> LayoutView {
        stack("hstack", spacing, children)
    }

    /// A column.
    public static func vstack(spacing: Double? = nil, _ children: LayoutView...) -> LayoutView {
        stack("vstack", spacing, children)
    }

    public static let spacer = LayoutView(["type": "spacer"])

    public static func link(_ url: String, _ child: LayoutView) -> LayoutView {
        LayoutView(["type": "link", "url": .string(url), "child": .object(child.json)])
    }

    /// A picture from a local file (`source` renders to a `file:///` URL or an absolute path).
    public static func image(_ source: String, fallback: LayoutView? = nil) -> LayoutView {
        var json: JSONObject = ["type": "image", "source": .string(source)]
        if let fallback { json["fallback"] = .object(fallback.json) }
        return LayoutView(json)
    }

    private static func stack(_ type: String, _ spacing: Double?, _ children: [LayoutView]) -> LayoutView {
        var json: JSONObject = ["type": .string(type), "children": .array(children.map { .object($0.json) })]
        if let spacing { json["spacing"] = number(spacing) }
        return LayoutView(json)
    }

    // A region's own keys.

    /// In an expanded region (required there): which region gets room first, higher first.
    public func priority(_ priority: Double) -> LayoutView { with("priority", Self.number(priority)) }
    /// What a tap on this region opens.
    public func url(_ url: String) -> LayoutView { with("url", .string(url)) }
    /// A leading or trailing expanded region that does not fit beside the center goes below it.
    public func belowIfTooWide(_ below: Bool = true) -> LayoutView { with("belowIfTooWide", .bool(below)) }

    /// A whole number as JSON writes it, `1` rather than `1.0`.
    private static func number(_ value: Double) -> JSON {
        value == value.rounded() && abs(value) < 1e15 ? .int(Int(value)) : .double(value)
    }

    private func with(_ key: String, _ value: JSON) -> LayoutView {
        var copy = self
        copy.json[key] = value
        return copy
    }
}
