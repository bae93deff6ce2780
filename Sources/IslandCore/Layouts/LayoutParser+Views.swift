import FreeDesktop
import OrderedJSON
import OrderedCollections

/// The view types a layout may use and the keys each one takes.
enum ViewKind: String, CaseIterable {
    case text, symbol, timer, progress, hstack, vstack, spacer, link, button, image

    var keys: Set<String> {
        switch self {
        case .text: ["template"]
        case .symbol: ["name", "names"]
        case .timer: ["from", "to", "countsDown"]
        case .progress: ["value", "total", "from", "to", "segments", "points"]
        case .hstack, .vstack: ["children", "spacing"]
        case .spacer: []
        case .link: ["url", "child"]
        case .button: ["action", "label", "symbol", "symbols"]
        case .image: ["source", "fallback"]
        }
    }

    static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

extension LayoutParser {
    mutating func view(_ kind: ViewKind, _ object: LayoutObject, depth: Int) throws(LayoutError) -> LayoutView {
        switch kind {
        case .text: return .text(try object.requiredTemplate("template"))
        case .symbol: return .symbol(try symbol(object))
        case .timer: return .timer(try timer(object))
        case .progress: return .progress(try progress(object))
        case .hstack: return .hstack(try stack(object, depth: depth))
        case .vstack: return .vstack(try stack(object, depth: depth))
        case .spacer: return .spacer
        case .link:
            let url = try object.requiredURL("url")
            let child = try view(object.required("child"), at: object.path.appending("child"), depth: depth + 1).0
            return .link(LayoutLink(url: url, child: child))
        case .button:
            return .button(
                LayoutButton(
                    action: try object.nonEmptyString("action"),
                    label: try object.requiredTemplate("label"),
                    symbol: try buttonSymbol(object)
                ))
        case .image:
            return .image(try image(object, depth: depth))
        }
    }

    /// A written-out source must name a local file already; a template's output is checked
    /// when it renders.
    private mutating func image(_ object: LayoutObject, depth: Int) throws(LayoutError) -> LayoutImage {
        let source = try object.requiredTemplate("source")
        if source.isLiteral, LocalFile.path(from: source.source) == nil {
            throw object.path.appending("source").error("not a local file: expected a file:/// URL or an absolute path")
        }
        guard let fallback = object.members["fallback"] else { return LayoutImage(source: source) }
        return LayoutImage(source: source, fallback: try view(fallback, at: object.path.appending("fallback"), depth: depth + 1).0)
    }

    private func symbol(_ object: LayoutObject) throws(LayoutError) -> LayoutSymbol {
        LayoutSymbol(name: try object.requiredTemplate("name", allowEmpty: false), names: try symbolNames(object, "names"))
    }

    /// A button's `symbol` and `symbols`, read as a symbol view's `name` and `names`.
    private func buttonSymbol(_ object: LayoutObject) throws(LayoutError) -> LayoutSymbol? {
        guard object.has("symbol") else {
            if object.has("symbols") { throw object.path.appending("symbol").error("required with symbols") }
            return nil
        }
        // An empty symbol was valid when it was a plain name, and layouts registered then still load.
        return LayoutSymbol(name: try object.requiredTemplate("symbol"), names: try symbolNames(object, "symbols"))
    }

    /// What a symbol's template renders to → the symbol to show.
    private func symbolNames(_ object: LayoutObject, _ key: String) throws(LayoutError) -> [String: String] {
        var names: [String: String] = [:]
        if let json = object.members[key] {
            let path = object.path.appending(key)
            guard case .object(let members) = json else { throw path.error("expected an object, found \(json.typeName)") }
            for (key, value) in members {
                guard case .string(let symbol) = value, !symbol.isEmpty else {
                    throw path.appending(key).error("expected a symbol name, found \(value.typeName)")
                }
                names[key] = symbol
            }
        }
        return names
    }

    private func timer(_ object: LayoutObject) throws(LayoutError) -> LayoutTimer {
        let countsDown = try object.bool("countsDown") ?? true
        let from = try object.measure("from")
        let to = try object.measure("to")
        if countsDown, to == nil { throw object.path.appending("to").error("required for a timer that counts down") }
        if !countsDown, from == nil { throw object.path.appending("from").error("required for a timer that counts up") }
        return LayoutTimer(from: from, to: to, countsDown: countsDown)
    }

    private func progress(_ object: LayoutObject) throws(LayoutError) -> LayoutProgress {
        let measure: LayoutProgress.Measure
        if object.has("value") {
            if let range = ["from", "to"].first(where: object.has) {
                throw object.path.appending(range).error("a progress has either value/total or from/to, not both")
            }
            measure = .value(try object.requiredMeasure("value"), total: try object.measure("total") ?? .constant(1))
        } else if object.has("from") || object.has("to") {
            if object.has("total") {
                throw object.path.appending("total").error("a time-range progress has no total")
            }
            measure = .timeRange(from: try object.requiredMeasure("from"), to: try object.requiredMeasure("to"))
        } else {
            throw object.path.appending("value").error("required: a progress needs value (and total) or from and to")
        }
        return LayoutProgress(measure: measure, segments: try segments(object), points: try points(object))
    }

    private func segments(_ object: LayoutObject) throws(LayoutError) -> [LayoutProgress.Segment] {
        var segments: [LayoutProgress.Segment] = []
        for (index, json) in (try object.array("segments") ?? []).enumerated() {
            let segment = try LayoutObject(json, at: object.path.appending("segments").appending(index: index), allowedKeys: ["length", "color"])
            let length = try segment.requiredNumber("length")
            guard length > 0 else { throw segment.path.appending("length").error("must be more than 0") }
            segments.append(.init(length: length, color: try segment.color("color")))
        }
        return segments
    }

    private func points(_ object: LayoutObject) throws(LayoutError) -> [LayoutProgress.Point] {
        var points: [LayoutProgress.Point] = []
        for (index, json) in (try object.array("points") ?? []).enumerated() {
            let point = try LayoutObject(json, at: object.path.appending("points").appending(index: index), allowedKeys: ["position", "color"])
            let position = try point.requiredNumber("position")
            guard position >= 0 else { throw point.path.appending("position").error("must not be negative") }
            points.append(.init(position: position, color: try point.color("color")))
        }
        return points
    }

    private mutating func stack(_ object: LayoutObject, depth: Int) throws(LayoutError) -> LayoutStack {
        guard let childrenJSON = try object.array("children") else {
            throw object.path.appending("children").error("required")
        }
        let spacing = try object.number("spacing")
        if let spacing, spacing < 0 { throw object.path.appending("spacing").error("must not be negative") }
        var children: [LayoutView] = []
        for (index, json) in childrenJSON.enumerated() {
            children.append(try view(json, at: object.path.appending("children").appending(index: index), depth: depth + 1).0)
        }
        return LayoutStack(children: children, spacing: spacing)
    }
}
