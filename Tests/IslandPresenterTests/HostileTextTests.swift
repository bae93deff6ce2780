import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import SinkRules
import Testing
@testable import IslandPresenter

/// Producer text through every presenter sink (docs/design.md §6): each hostile string, placed in
/// the attributes, the state, the type, a layout's constant text, a button label, the chip and an
/// alert, must reach no sink in a form its consumer interprets — polybar's `%{` tags, Pango
/// markup, XML, JSON, and escape sequences in a terminal.
@Suite struct HostileTextTests {
    static let hostile: [String] = [
        "%{A1:touch /tmp/pwned:}Coffee ready%{A}",  // polybar: runs the command on click
        "%%{A1:touch /tmp/pwned:}x%{A}",  // polybar: `%%{` is still a tag
        "%{F#ff0000}red%{F-}",
        "50%",  // then `{` from the next field: see splitAcrossFields
        "{A1:touch /tmp/pwned:}",
        "\u{1B}]0;pwned title\u{07}",  // OSC 0: the window title
        "\u{1B}]52;c;cHduZWQ=\u{07}",  // OSC 52: the clipboard
        "\u{1B}[31mred\u{1B}[0m\u{1B}[2J",  // CSI: SGR, erase
        "\u{9B}31mC1 CSI\u{9D}0;osc\u{9C}",  // C1 CSI, OSC, ST
        "del\u{7F}ete",
        "bare \u{1B} escape",
        "tab\tnew\nline\r\u{0}nul",
        "<span foreground='red'>big</span> & <b>bold</b> &amp;",  // Pango
        "<script>alert(1)</script>]]><![CDATA[x]]>",  // XML
        "\"},{\"full_text\":\"forged\\",  // JSON
        "\u{202E}desrever\u{202C}",  // bidi override (no grammar reads it; it must not break one)
    ]

    /// Every text-bearing place of a layout, and the default layout's (title from the
    /// attributes, values from the state).
    static func layout(chip: String) -> JSON {
        let text: (String) -> JSON = { ["type": "text", "template": .string($0)] }
        let region: (String) -> JSON = { ["type": "text", "template": .string($0), "priority": 0] }
        return [
            "chip": .string(chip),
            "compactLeading": text("{{state.h}}"),
            "compactTrailing": text("{{attributes.h}}"),
            "minimal": text("{{state.h}}"),
            "lockScreen": [
                "type": "vstack",
                "children": [
                    text("{{attributes.h}} {{state.h}}"),
                    ["type": "button", "action": "go", "label": "{{state.h}}"],
                ],
            ],
            "expanded": [
                "leading": region("{{state.h}}"),
                "center": region("{{attributes.h}}"),
                "trailing": region("{{state.h}}"),
                "bottom": [
                    "type": "hstack", "priority": 0,
                    "children": [
                        text("{{state.h}}"),
                        ["type": "button", "action": "go", "label": "{{state.h}}"],
                        ["type": "progress", "value": 1, "total": 2],
                    ],
                ],
            ],
        ]
    }

    static func item(type: String, text: String, layout: JSON?) -> JSON {
        Fixtures.item(
            id: "a", app: "org.example.Hostile", type: type, attributes: ["h": .string(text), "title": .string(text)],
            state: ["h": .string(text), "stage": .string(text)], layout: layout)
    }

    static func alert(_ text: String) -> JSON { ["id": "a", "title": .string(text), "body": .string(text)] }

    @Test(arguments: hostile)
    func inALayoutsTexts(_ text: String) async throws {
        let layout = Self.layout(chip: String(text.prefix(7)))
        // The hostile text reaches the views as the one display rule leaves it (no bidi
        // controls, bounded clusters): the rest is what each sink must neutralise.
        let rendered = PresenterItem(json: Self.item(type: "T", text: text, layout: layout)).map { $0.render(now: Fixtures.now) }
        #expect(PresenterItem(json: Self.item(type: "T", text: text, layout: layout))?.defaultLayout == false, "the layout is valid")
        #expect(rendered?.compactLeading?.view.plainText == DisplayText.neutralized(text))
        let found = await SinkChecks.violations(
            item: Self.item(type: text, text: text, layout: layout), alert: Self.alert(text),
            now: Fixtures.now, tapURL: "https://example.org/" + text)
        #expect(found.isEmpty, "\(found)")
        _ = try #require(rendered)
    }

    /// The default layout (no registered one) shows the type, the attributes' title and the
    /// state's values; the lock-screen card falls back to the type when nothing renders.
    @Test(arguments: hostile)
    func inTheDefaultLayout(_ text: String) async {
        let found = await SinkChecks.violations(item: Self.item(type: text, text: text, layout: nil), alert: Self.alert(text), now: Fixtures.now)
        #expect(found.isEmpty, "\(found)")
        let typeOnly = Fixtures.item(
            id: "a", app: "org.example.Hostile", type: text, state: [:],
            layout: ["compactLeading": ["type": "spacer"], "lockScreen": ["type": "spacer"]])
        let typeFound = await SinkChecks.violations(item: typeOnly, now: Fixtures.now)
        #expect(typeFound.isEmpty, "\(typeFound)")
    }

    /// `%` and `{` from different values meet in one rendered text, and at the edges of the
    /// line where polybar's label continues.
    @Test func splitAcrossFields() {
        let layout: JSON = [
            "compactLeading": ["type": "text", "template": "{{state.a}}{{state.b}}"],
            "compactTrailing": ["type": "text", "template": "{{state.c}}"],
        ]
        let item = Fixtures.item(
            id: "a", app: "org.example.Hostile", type: "T",
            state: ["a": "%", "b": "{A1:touch /tmp/pwned:}x", "c": "100%"], layout: layout)
        let scene = IslandScene(model: SinkChecks.model(item: item, island: SinkChecks.islands[1].1), now: Fixtures.now)
        let line = BarFormat.polybar.line(for: scene)
        #expect(!("%" + line + "{").contains("%{"), "\(line.debugDescription)")
        // What is shown is still the text: only invisible characters were added.
        #expect(line.replacingOccurrences(of: "\u{200B}", with: "") == "%{A1:touch /tmp/pwned:}x 100%")
    }

    @Test func controlCharactersBecomeSpacesInBarText() {
        let item = Self.item(
            type: "T", text: "a\u{1B}]0;t\u{07}b\u{9B}c",
            layout: [
                "compactLeading": ["type": "text", "template": "{{state.h}}"],
                "compactTrailing": ["type": "spacer"],
            ])
        let scene = IslandScene(model: SinkChecks.model(item: item, island: SinkChecks.islands[1].1), now: Fixtures.now)
        #expect(BarFormat.eww.line(for: scene) == "a ]0;t b c")
    }

    /// What the CLIs print: text loses its controls; JSON escapes them and means the same.
    @Test(arguments: hostile)
    func cliOutput(_ text: String) throws {
        let line = TerminalText.sanitize(text)
        #expect(!line.unicodeScalars.contains(where: SinkRules.isControl))
        #expect(line.unicodeScalars.count == text.unicodeScalars.count)
        let json = TerminalText.json(JSON.object(["type": .string(text), "n": 1]).description)
        #expect(!json.unicodeScalars.contains(where: SinkRules.isControl))
        #expect(try JSONParser.parse(Array(json.utf8)).objectValue?["type"]?.stringValue == text)
    }

    @Test func pangoAndJSONKeepTheText() throws {
        let text = "<b>a</b> & \"q\" \\"
        let item = Self.item(
            type: "T", text: text,
            layout: [
                "compactLeading": ["type": "text", "template": "{{state.h}}"],
                "compactTrailing": ["type": "spacer"],
            ])
        let scene = IslandScene(model: SinkChecks.model(item: item, island: SinkChecks.islands[1].1), now: Fixtures.now)
        let waybar = try #require(try JSONParser.parse(Array(BarFormat.waybar.line(for: scene).utf8)).objectValue)
        #expect(waybar["text"]?.stringValue == "&lt;b&gt;a&lt;/b&gt; &amp; \"q\" \\")
        // i3blocks 1.4 cuts a string at its first escaped quote and doubles backslashes: the
        // line holds neither, the same text with lookalikes.
        let line = BarFormat.i3blocks.line(for: scene)
        let i3blocks = try #require(try JSONParser.parse(Array(line.utf8)).objectValue)
        #expect(i3blocks["full_text"]?.stringValue == "<b>a</b> & \u{2033}q\u{2033} \u{2216}")
        #expect(!line.contains("\\"), "no escape: \(line)")
        #expect(line.filter { $0 == "\"" }.count == 12, "only the quotes of the three keys and values: \(line)")
    }
}
