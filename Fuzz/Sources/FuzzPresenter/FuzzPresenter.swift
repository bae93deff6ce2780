// libFuzzer target `fuzz-presenter`: what a producer's state and an extension's layout become
// in every presenter sink (issue #16). Built only by scripts/fuzz.sh (ISLAND_FUZZ=1); see
// Fuzz/README.md.
//
// bytes → JSONParser → an object {"type", "app", "attributes", "state", "layout", "alert",
//         "activityState", "now"} (any member may be missing or of the wrong type) → an item as
//         the daemon delivers it (the layout validated, else the default layout built from the
//         state's shape) → a presenter model in each island mode (none, compact, minimal,
//         expanded) → every sink: the four bar formats, the SVG of `snapshot` and `preview
//         --svg`, the terminal frame of `tui`, and the text `island preview` prints.
//
// Invariants (fatalError when broken): no trap anywhere (numbers of any size: timers, progress,
// segments, points); no bar line holds a control character; waybar and i3blocks lines are JSON
// objects, waybar's markup fields hold no tag and only the three entities, i3blocks says
// "markup": "none"; a polybar line has no `%{` and cannot form one with the label around it;
// the SVG is well-formed XML with no `nan` or `inf`; the terminal output holds no control
// character but the presenter's own CSI sequences.

import Foundation
import FoundationXML
import FuzzSupport
import Glibc
import IslandCore
import IslandJSON
import IslandPresenter

private func fail(_ what: String, _ output: String) -> Never {
    fatalError("\(what): \(output.debugDescription)")
}

private func fuzzOne(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(UnsafeRawBufferPointer(bytes)), let input = json.objectValue else { return }
    let type = input["type"]?.stringValue ?? "Fuzz"
    let attributes = input["attributes"]?.objectValue ?? [:]
    let state = input["state"]?.objectValue ?? [:]
    let layout = input["layout"].flatMap { try? Layout(json: $0) }
    var item: JSONObject = [
        "id": "a", "app": .string(input["app"]?.stringValue ?? "org.example.Fuzz"), "type": .string(type),
        "attributes": .object(attributes), "content": ["state": .object(state)],
        "state": .string(input["activityState"]?.stringValue ?? "active"),
        "layout": .object((layout ?? Layout.default(for: type, attributes: attributes, state: state)).json),
        "defaultLayout": .bool(layout == nil),
    ]
    if let staleDate = input["staleDate"] { item["content"] = ["state": .object(state), "staleDate": staleDate] }
    let now = input["now"]?.doubleValue ?? 1_700_000_000
    let islands: [JSON] = [
        ["mode": "none", "lockScreen": ["a"]],
        ["mode": "compact", "attached": "a", "lockScreen": ["a"]],
        ["mode": "minimal", "attached": "a", "detached": "a", "lockScreen": ["a"]],
        ["mode": "expanded", "attached": "a", "expanded": "a", "lockScreen": ["a"]],
    ]
    for island in islands {
        var model = PresenterModel()
        _ = model.apply(["kind": "snapshot", "sequence": 0, "island": island, "items": [.object(item)], "removed": []])
        if let alert = input["alert"] {
            _ = model.apply(["kind": "delta", "sequence": 1, "items": [], "removed": [], "alert": alert])
        }
        let scene = IslandScene(model: model, now: now)
        for format in BarFormat.allCases { check(format.line(for: scene), format) }
        checkSVG(SVGRenderer().render(scene))
        for size in [(20, 6), (80, 24)] {
            let frame = TerminalFrame(columns: size.0, rows: size.1)
            let chrome = TerminalChrome(selected: "a", message: state["message"]?.stringValue)
            for line in frame.render(scene, chrome: chrome) { checkTerminal(line.ansi(columns: frame.columns)) }
        }
        // `island preview` prints each region's plain text, and JSON with --json.
        for entry in [scene.primary].compactMap({ $0 }) + scene.lockScreen {
            for region in entry.layout.regions {
                checkTerminal(TerminalText.sanitize(region.view.plainText))
                checkTerminal(TerminalText.json(JSON.string(region.view.plainText).description))
            }
        }
    }
}

private func hasControl(_ text: String) -> Bool { text.unicodeScalars.contains(where: TerminalText.isControl) }

private func check(_ line: String, _ format: BarFormat) {
    if hasControl(line) { fail("\(format) line with a control character", line) }
    switch format {
    case .waybar:
        guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { fail("waybar line is no JSON object", line) }
        for key in ["text", "tooltip"] {
            guard let text = object[key]?.stringValue else { fail("waybar \(key) missing", line) }
            if text.contains("<") || text.contains(">") { fail("waybar \(key) holds markup", line) }
            var rest = Substring(text)
            while let ampersand = rest.firstIndex(of: "&") {
                let after = rest[ampersand...]
                guard after.hasPrefix("&amp;") || after.hasPrefix("&lt;") || after.hasPrefix("&gt;") else {
                    fail("waybar \(key) holds a bare &", line)
                }
                rest = rest[rest.index(after: ampersand)...]
            }
        }
    case .i3blocks:
        guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { fail("i3blocks line is no JSON object", line) }
        if object["markup"]?.stringValue != "none" { fail("i3blocks line without markup none", line) }
    case .polybar:
        // Whatever the module's label puts around it: `%` before, `{` after.
        if !line.isEmpty, ("%" + line + "{").contains("%{") { fail("polybar line forms %{", line) }
    case .eww:
        break
    }
}

private func checkSVG(_ document: String) {
    if document.unicodeScalars.contains(where: { TerminalText.isControl($0) && $0 != "\n" }) { fail("SVG with a control character", document) }
    if let problem = NumericAttributes.problem(in: document) { fail("SVG: \(problem)", document) }
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

/// Only the presenter's own CSI sequences: ESC [ parameters (digits, `;`, `?`) and a final byte
/// among the ones it writes.
private func checkTerminal(_ output: String) {
    var scalars = output.unicodeScalars.makeIterator()
    while let scalar = scalars.next() {
        guard TerminalText.isControl(scalar) else { continue }
        guard scalar == "\u{1B}", scalars.next() == "[" else { fail("a control character reaches the terminal", output) }
        while let next = scalars.next() {
            if ("0"..."9").contains(next) || next == ";" || next == "?" { continue }
            guard "HKmJhl".unicodeScalars.contains(next) else { fail("a foreign escape sequence", output) }
            break
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    onSmallStack { fuzzOne(bytes) }
    return 0
}
