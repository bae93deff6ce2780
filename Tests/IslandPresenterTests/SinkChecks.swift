#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import IslandCore
import IslandJSON
@testable import IslandPresenter

/// What each sink must never let producer text do (DESIGN.md §6, Untrusted text), checked on
/// what the sink writes; the same invariants as the `fuzz-presenter` target. Each returns the
/// broken rule, or nil.
enum SinkChecks {
    /// C0 (ESC among them), DEL and C1: written here rather than taken from the code under test.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func violation(bar line: String, _ format: BarFormat) -> String? {
        if line.unicodeScalars.contains(where: isControl) { return "a control character" }
        switch format {
        case .waybar:
            guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return "not a JSON object" }
            for key in ["text", "alt", "tooltip"] {
                guard let text = object[key]?.stringValue else { return "no \(key)" }
                if let problem = pangoViolation(text) { return "\(key): \(problem)" }
            }
            return nil
        case .i3blocks:
            guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return "not a JSON object" }
            return object["markup"]?.stringValue == "none" ? nil : "markup is not none"
        case .polybar:
            // Whatever the module's label puts around the text: a `%` before, a `{` after.
            return !line.isEmpty && ("%" + line + "{").contains("%{") ? "%{ forms a formatting tag" : nil
        case .eww:
            return nil
        }
    }

    /// Pango markup that is text only: no tag, and `&` only in the three entities.
    static func pangoViolation(_ text: String) -> String? {
        if text.contains("<") || text.contains(">") { return "a tag" }
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            let after = rest[ampersand...]
            guard after.hasPrefix("&amp;") || after.hasPrefix("&lt;") || after.hasPrefix("&gt;") else { return "a bare &" }
            rest = rest[rest.index(after: ampersand)...]
        }
        return nil
    }

    /// Well-formed, finite, and safe to write to a terminal (`snapshot --svg -`).
    static func violation(svg document: String) -> String? {
        if document.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) { return "a control character" }
        return NumericAttributes.problem(in: document)
    }

    /// Terminal output holding no control character but the presenter's own CSI sequences:
    /// ESC [ parameters and a final byte among those it writes (cursor position, erase, SGR,
    /// modes).
    static func violation(terminal output: String) -> String? {
        var scalars = output.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard isControl(scalar) else { continue }
            guard scalar == "\u{1B}", scalars.next() == "[" else { return "control U+\(String(scalar.value, radix: 16))" }
            while let next = scalars.next() {
                if ("0"..."9").contains(next) || next == ";" || next == "?" { continue }
                if !"HKmJhl".unicodeScalars.contains(next) { return "a foreign escape sequence" }
                break
            }
        }
        return nil
    }

    /// The island modes a model can show one activity `a` in; the lock screen lists it in each.
    static let islands: [(String, JSON)] = [
        ("none", ["mode": "none", "lockScreen": ["a"]]),
        ("compact", ["mode": "compact", "attached": "a", "lockScreen": ["a"]]),
        ("minimal", ["mode": "minimal", "attached": "a", "detached": "a", "lockScreen": ["a"]]),
        ("expanded", ["mode": "expanded", "attached": "a", "expanded": "a", "lockScreen": ["a"]]),
    ]

    /// The updates a daemon sends for `item` shown in `island`, with `alert` after.
    static func updates(item: JSON, island: JSON, alert: JSON?) -> [JSONObject] {
        var updates: [JSONObject] = [["kind": "snapshot", "sequence": 0, "island": island, "items": [item], "removed": []]]
        if let alert { updates.append(["kind": "delta", "sequence": 1, "items": [], "removed": [], "alert": alert]) }
        return updates
    }

    static func model(item: JSON, island: JSON, alert: JSON? = nil) -> PresenterModel {
        var model = PresenterModel()
        for update in updates(item: item, island: island, alert: alert) { model.apply(update) }
        return model
    }

    /// Every sink's output for `item` in every island mode, one entry per broken rule: the
    /// four bar formats, SVG, and the terminal presenter (drawn by its controller, with a tap
    /// that returns `tapURL`).
    static func violations(item: JSON, alert: JSON? = nil, now: Double, tapURL: String? = nil) async -> [String] {
        var found: [String] = []
        for (name, island) in islands {
            let scene = IslandScene(model: model(item: item, island: island, alert: alert), now: now)
            for format in BarFormat.allCases {
                let line = format.line(for: scene)
                if let problem = violation(bar: line, format) { found.append("\(format) \(name): \(problem): \(line.debugDescription)") }
            }
            let document = SVGRenderer().render(scene)
            if let problem = violation(svg: document) { found.append("svg \(name): \(problem)") }
            for size in [(columns: 20, rows: 6), (columns: 100, rows: 40)] {
                let output = await terminalOutput(updates: updates(item: item, island: island, alert: alert), now: now, size: size, tapURL: tapURL)
                if let problem = violation(terminal: output) { found.append("tui \(name) \(size.columns)x\(size.rows): \(problem): \(output.debugDescription)") }
            }
        }
        return found
    }

    /// What the terminal presenter writes for the updates: a redraw each, then a tap (its
    /// message on the status line) and a press of the first button.
    static func terminalOutput(updates: [JSONObject], now: Double, size: (columns: Int, rows: Int), tapURL: String?) async -> String {
        let written = Written()
        let controller = TUIController(io: .init(
            write: { written.append($0) }, size: { size }, clock: { now }, open: { _ in false },
            interact: { _, _, _ in tapURL }))
        for update in updates { await controller.handle(.update(update)) }
        _ = await controller.press(.tap)
        _ = await controller.press(.button(1))
        return written.text
    }
}

final class Written: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    func append(_ text: String) { lock.withLock { buffer += text } }
    var text: String { lock.withLock { buffer } }
}

/// The attributes of an SVG that hold numbers; none may be `nan` or `inf`.
final class NumericAttributes: NSObject, XMLParserDelegate {
    static let names: Set<String> = ["x", "y", "width", "height", "cx", "cy", "r", "rx", "d", "viewBox", "font-size",
                                     "fill-opacity", "stroke-width", "stroke-opacity"]
    var bad: [String] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        for (key, value) in attributes where Self.names.contains(key) {
            let lower = value.lowercased()
            if lower.contains("nan") || lower.contains("inf") { bad.append("\(name) \(key)=\"\(value)\"") }
        }
    }

    /// Nil when the document is well-formed XML whose numbers are all finite; else what is wrong.
    static func problem(in document: String) -> String? {
        let parser = XMLParser(data: Data(document.utf8))
        let delegate = NumericAttributes()
        parser.delegate = delegate
        guard parser.parse() else { return "not well-formed XML: \(String(describing: parser.parserError))" }
        return delegate.bad.isEmpty ? nil : "numbers that are not finite: \(delegate.bad)"
    }
}
