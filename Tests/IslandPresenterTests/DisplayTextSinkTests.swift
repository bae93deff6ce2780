import IslandCore
import OrderedJSON
import OrderedCollections
import IslandOverlay
import Testing
@testable import IslandPresenter

/// DisplayText's rule in every presenter sink: a producer string in any field — the type,
/// attributes, state, a layout's texts, a button's label, the chip, the app's name, an alert's
/// title and body — reaches no bar format, SVG, terminal UI frame or CLI line with a bidi control
/// (`Pay \u{202E}0001\u{202C}$` drawn as "Pay 1000$"), nor with a grapheme cluster of 1,900
/// combining marks (quadratic shaping work).
@Suite struct DisplayTextSinkTests {
    static let bidi = "Pay \u{202E}0001\u{202C}$"
    static let zalgo = "Z" + String(repeating: "\u{0301}", count: 1900) + "algo"
    static let cases: [String] = [
        bidi,
        zalgo,
        "\u{2067}abc\u{2069} \u{200F}x\u{200E} \u{061C}y \u{202A}\u{202B}\u{202D}\u{2066}\u{2068}z",
        String(repeating: "\u{0301}", count: 1900) + "marks first",  // no base: they follow the sink's own text
        bidi + zalgo,
    ]

    static func item(_ text: String) -> JSON {
        var object = HostileTextTests.item(type: text, text: text, layout: HostileTextTests.layout(chip: String(text.prefix(7)))).objectValue!
        object["appName"] = .string(text)
        return .object(object)
    }

    static func defaultItem(_ text: String) -> JSON {
        var object = HostileTextTests.item(type: text, text: text, layout: nil).objectValue!
        object["appName"] = .string(text)
        return .object(object)
    }

    /// Nil when `output` holds no bidi control and no grapheme cluster longer than two bounded
    /// ones (marks with no base of their own join the sink's character before them).
    static func problem(_ output: String) -> String? {
        if output.unicodeScalars.contains(where: DisplayText.isBidiControl) { return "a bidi control" }
        if output.contains("\\u202") || output.contains("\\u206") || output.contains("\\u200e") || output.contains("\\u200f") || output.contains("\\u061c") {
            return "an escaped bidi control"
        }
        let longest = output.reduce(0) { max($0, $1.unicodeScalars.count) }
        if longest > 2 * DisplayText.maximumScalarsPerCluster { return "a cluster of \(longest) scalars" }
        return nil
    }

    /// The strings a JSON line holds, decoded (an escaped bidi control is one too).
    static func strings(_ json: JSON) -> [String] {
        switch json {
        case .string(let s): [s]
        case .array(let a): a.flatMap(strings)
        case .object(let o): o.values.flatMap(strings)
        default: []
        }
    }

    @Test(arguments: cases)
    func everySinkDropsBidiControlsAndBoundsClusters(_ text: String) async throws {
        var found: [String] = []
        let painter = OverlayPainter(icons: nil)
        for item in [Self.item(text), Self.defaultItem(text)] {
            for alert in [nil, HostileTextTests.alert(text)] as [JSON?] {
                for (name, island) in SinkChecks.islands {
                    let updates = SinkChecks.updates(item: item, island: island, alert: alert)
                    let scene = IslandScene(model: SinkChecks.model(item: item, island: island, alert: alert), now: Fixtures.now)
                    for format in BarFormat.allCases {
                        let line = format.line(for: scene)
                        if let problem = Self.problem(line) { found.append("\(format) \(name): \(problem)") }
                        if format == .waybar || format == .i3blocks {
                            let decoded = Self.strings(try JSONParser.parse(Array(line.utf8)))
                            if let problem = decoded.lazy.compactMap(Self.problem).first { found.append("\(format) \(name) decoded: \(problem)") }
                        }
                    }
                    if let document = OverlaySnapshot.svg(scene, painter: painter) {
                        if let problem = Self.problem(document) { found.append("svg \(name): \(problem)") }
                    } else {
                        found.append("svg \(name): cairo drew nothing")
                    }
                    let terminal = await SinkChecks.terminalOutput(updates: updates, now: Fixtures.now, size: (100, 40), tapURL: "https://example.org/" + text)
                    if let problem = Self.problem(terminal) { found.append("tui \(name): \(problem)") }
                }
            }
        }
        // The CLIs' lines (`island list`, `watch`, `preview`, and island-presenter's own).
        if let problem = Self.problem(TerminalText.display(text)) { found.append("cli line: \(problem)") }
        if let problem = Self.problem(TerminalText.display(text, keepingNewlines: true)) { found.append("cli message: \(problem)") }
        #expect(found.isEmpty, "\(found)")
    }

    /// What the user reads is still the text, in its order; a JSON line keeps every character
    /// (escaped, so a terminal applies none).
    @Test func theTextStaysReadable() throws {
        let item = Fixtures.item(
            id: "a", app: "org.example.Pay", type: "T", state: ["h": .string(Self.bidi)],
            layout: ["compactLeading": ["type": "text", "template": "{{state.h}}"], "compactTrailing": ["type": "spacer"]])
        let scene = IslandScene(
            model: SinkChecks.model(item: item, island: SinkChecks.islands[1].1, alert: ["id": "a", "title": .string(Self.bidi), "body": ""]),
            now: Fixtures.now)
        #expect(BarFormat.eww.line(for: scene) == "Pay 0001$")
        // The SVG says it in its description; its drawing is glyph outlines, so no SVG viewer
        // lays the text out (Pango shapes it, isolated, as on screen).
        let document = SVGDocument.parse(OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: nil)))
        #expect(document.lines.contains("Pay 0001$"))
        #expect(!document.elements.contains("text") && document.glyphs > 0)
        #expect(TerminalText.display(Self.zalgo) == "Z" + String(repeating: "\u{0301}", count: DisplayText.maximumScalarsPerCluster - 1) + "algo")
        let json = TerminalText.json(JSON.object(["type": .string(Self.bidi)]).description)
        #expect(json.contains("\\u202e") && !json.unicodeScalars.contains(where: DisplayText.isBidiControl))
        #expect(try JSONParser.parse(Array(json.utf8)).objectValue?["type"]?.stringValue == Self.bidi)
    }
}
