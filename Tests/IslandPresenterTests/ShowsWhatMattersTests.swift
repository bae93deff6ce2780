import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import SinkRules
import Testing
@testable import IslandPresenter

/// Issue #17, "Every presenter shows what matters": alerts, live compact text, app names and
/// icons, spacers, readable colours and bounded lengths, in every sink.
@Suite struct ShowsWhatMattersTests {
    typealias F = Fixtures

    static let alertModel: PresenterModel = {
        var model = F.compactModel
        model.apply(F.delta(sequence: 4, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                            items: [F.coffee(stage: "ready", done: 4)], alert: ["id": "c1", "title": "Order up", "body": "Your flat white is ready"]))
        return model
    }()

    func svg(_ model: PresenterModel, icons: IconTheme? = nil, at now: Double = F.now) -> String {
        SVGRenderer(icons: icons).render(IslandScene(model: model, now: now))
    }

    func screen(_ model: PresenterModel, columns: Int = 100) -> String {
        TerminalFrame(columns: columns, rows: 40).render(IslandScene(model: model, now: F.now), chrome: .init())
            .map(\.plain).joined(separator: "\n")
    }

    // MARK: Alerts

    @Test func alertsShowTheirTitleAndBodyInEverySink() {
        let scene = IslandScene(model: Self.alertModel, now: F.now)
        for format in BarFormat.allCases {
            let line = format.line(for: scene)
            #expect(line.contains("Order up"), "\(format)")
            #expect(line.contains("Your flat white is ready"), "\(format)")
        }
        let terminal = screen(Self.alertModel)
        #expect(terminal.contains("Order up"))
        #expect(terminal.contains("Your flat white is ready"))
        // A long title is cut inside the box: every line of the screen is as wide as the box.
        var long = Self.alertModel
        long.apply(F.delta(sequence: 5, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                           alert: ["id": "c1", "title": .string(String(repeating: "Order up ", count: 20)), "body": "x"]))
        let frame = TerminalFrame(columns: 50, rows: 30).render(IslandScene(model: long, now: F.now), chrome: .init())
        let box = frame.map { $0.plain.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("│ 🔔") || $0.hasPrefix("│ x ") }
        #expect(box.count == 2 && displayWidth(box[0]) == displayWidth(box[1]), "\(box)")
        let texts = TextCollector.parse(svg(Self.alertModel)).texts
        #expect(texts.contains { $0.contains("Order up") })
        #expect(texts.contains("Your flat white is ready"))
        #expect(svg(Self.alertModel).contains("class=\"alert\""))
    }

    @Test func anAlertEndsWithItsExpansion() {
        var model = Self.alertModel
        model.apply(F.delta(sequence: 5, island: F.island("compact", attached: "c1", lockScreen: ["c1"])))
        #expect(!screen(model).contains("Order up"))
        #expect(!TextCollector.parse(svg(model)).texts.contains { $0.contains("Order up") })
        #expect(BarFormat.eww.line(for: IslandScene(model: model, now: F.now)) == "☕ ready")
    }

    // MARK: Compact and minimal text

    @Test func compactBarTextFollowsUpdatesEvenWithAChip() {
        var layout = F.coffeeLayout.objectValue!
        layout["chip"] = "Coffee"
        var model = PresenterModel()
        let item = { (stage: String) in
            F.item(id: "c1", app: "org.example.Coffee", type: "Coffee", attributes: ["name": "Ada"],
                   state: ["stage": .string(stage), "done": 1], layout: .object(layout))
        }
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [item("ordered")]))
        #expect(BarFormat.eww.line(for: IslandScene(model: model, now: F.now)) == "☕ ordered")
        model.apply(F.delta(sequence: 2, island: nil, items: [item("brewing")]))
        let scene = IslandScene(model: model, now: F.now)
        #expect(BarFormat.polybar.line(for: scene) == "☕ brewing")
        // The chip is the short form, where space is short.
        #expect(BarFormat.i3blocks.line(for: scene) == #"{"full_text":"☕ brewing","short_text":"Coffee","markup":"none"}"#)
        #expect(BarFormat.waybar.line(for: scene).hasPrefix(#"{"text":"☕ brewing","alt":"Coffee","#))
    }

    @Test func minimalTextKeepsEachActivitysSymbol() {
        var model = PresenterModel()
        let battery = F.item(id: "b1", app: "org.example.Battery", type: "Charge",
                             state: ["symbol": "battery-good-symbolic", "progress": 0.02], layout: nil)
        let copy = F.item(id: "p1", app: "org.example.Copy", type: "Copy", state: ["progress": 0.7], layout: nil)
        model.apply(F.snapshot(sequence: 1, island: F.island("minimal", attached: "b1", detached: "p1", lockScreen: ["b1", "p1"]),
                               items: [battery, copy]))
        let text = BarFormat.eww.line(for: IslandScene(model: model, now: F.now))
        let parts = text.components(separatedBy: " · ")
        #expect(parts.count == 2)
        #expect(parts[0] == "🔋 2%", "\(text)")
        #expect(parts[1].hasSuffix("70%"), "\(text)")
    }

    // MARK: App name and icon

    @Test func cardsAreHeadedByTheAppName() throws {
        var item = F.coffee().objectValue!
        item["appName"] = "Corner Café"
        item["appIcon"] = "coffee"
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [.object(item)]))
        let terminal = screen(model)
        #expect(terminal.contains("╭─ ☕ Corner Café "))
        #expect(!terminal.contains("org.example.Coffee"))
        let texts = TextCollector.parse(svg(model)).texts
        #expect(texts.contains("Corner Café"))
        #expect(!texts.contains { $0.contains("org.example.Coffee") })
        // Without a name the id heads it, as before.
        #expect(screen(F.compactModel).contains("╭─ org.example.Coffee "))
    }

    @Test func hostileAppNamesAreNeutralised() {
        var item = F.coffee().objectValue!
        item["appName"] = "\u{1B}]0;owned\u{7}<b>&"
        item["appIcon"] = "../../\u{9B}31m%{A1:rm -rf ~:}"
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [.object(item)]))
        let huge = String(repeating: "%{A1:x:}<i>&\u{1B}[2J\u{9D}", count: 20_000)
        model.apply(F.delta(sequence: 2, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                            items: [.object(item)], alert: ["id": "c1", "title": .string(huge), "body": .string(huge)]))
        #expect(model.alert != nil)
        let scene = IslandScene(model: model, now: F.now)
        #expect(SinkRules.violation(svg: SVGRenderer(icons: nil).render(scene)) == nil)
        let frame = TerminalFrame(columns: 80, rows: 24).render(scene, chrome: .init())
        #expect(frame.allSatisfy { !$0.plain.unicodeScalars.contains(where: SinkRules.isControl) })
        for format in BarFormat.allCases { #expect(SinkRules.violation(bar: format.line(for: scene), format) == nil) }
    }

    // MARK: Icons

    /// A theme in a temporary directory: Adwaita's layout, one symbolic SVG and one PNG.
    static func theme() throws -> (IconTheme, URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("icons-\(UUID().uuidString)")
        let status = root.appendingPathComponent("Adwaita/scalable/status")
        try FileManager.default.createDirectory(at: status, withIntermediateDirectories: true)
        try ##"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path d="M0 0h16v16H0z" fill="#2e3436"/></svg>"##
            .write(to: status.appendingPathComponent("battery-good-symbolic.svg"), atomically: true, encoding: .utf8)
        let apps = root.appendingPathComponent("hicolor/48x48/apps")
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        try Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3]).write(to: apps.appendingPathComponent("org.example.Coffee.png"))
        // Larger than any icon is allowed to be.
        try Data(count: IconTheme.maximumFileSize + 1).write(to: status.appendingPathComponent("huge.svg"))
        return (IconTheme(roots: [root.path]), root)
    }

    @Test func iconThemeFindsSymbolicAndAppIconsAndRefusesTheRest() throws {
        let (theme, root) = try Self.theme()
        defer { try? FileManager.default.removeItem(at: root) }
        let battery = try #require(theme.icon(named: "battery-good-symbolic"))
        #expect(battery.isSymbolic && battery.mimeType == "image/svg+xml")
        // The full-colour name finds the symbolic twin.
        #expect(theme.icon(named: "battery-good")?.isSymbolic == true)
        let app = try #require(theme.icon(named: "org.example.Coffee"))
        #expect(!app.isSymbolic && app.mimeType == "image/png")
        #expect(theme.icon(named: "huge") == nil)
        #expect(theme.icon(named: "../../../etc/passwd") == nil)
        #expect(theme.icon(named: "/etc/passwd") == nil)
        #expect(theme.icon(named: "no-such-icon") == nil)
        // An app's Icon= may be a path to an image, within the same bounds.
        let path = root.appendingPathComponent("hicolor/48x48/apps/org.example.Coffee.png").path
        #expect(theme.appIcon(path)?.mimeType == "image/png")
        #expect(theme.appIcon(root.appendingPathComponent("Adwaita/scalable/status/huge.svg").path) == nil)
        #expect(theme.appIcon("/etc/passwd") == nil)
        #expect(theme.appIcon("org.example.Coffee") == app)
    }

    @Test func svgDrawsThemeIconsRecolouredAndFallsBackToGlyphs() throws {
        let (theme, root) = try Self.theme()
        defer { try? FileManager.default.removeItem(at: root) }
        var model = PresenterModel()
        var item = F.item(id: "b1", app: "org.example.Coffee", type: "Charge", state: ["symbol": "battery-good-symbolic", "progress": 0.5],
                          layout: nil).objectValue!
        item["appIcon"] = "org.example.Coffee"
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "b1", lockScreen: ["b1"]), items: [.object(item)]))
        let document = svg(model, icons: theme)
        let result = TextCollector.parse(document)
        #expect(result.ok)
        #expect(result.elements.filter { $0 == "image" }.count >= 2)
        #expect(document.contains("href=\"data:image/svg+xml;base64,"))
        #expect(document.contains("filter=\"url(#symbolic-white)\""))
        #expect(document.contains("href=\"data:image/png;base64,"))
        #expect(SinkRules.violation(svg: document) == nil)
        // Without the icon the symbol is a glyph, never nothing.
        let plain = TextCollector.parse(svg(model, icons: IconTheme(roots: []))).texts
        #expect(plain.contains { $0.hasPrefix("🔋") })
        #expect(!svg(model, icons: IconTheme(roots: [])).contains("<image"))
    }

    // MARK: Spacer, colours, lengths

    @Test func spacerPushesItsNeighboursApart() {
        let layout: JSON = [
            "lockScreen": ["type": "hstack", "children": [
                ["type": "text", "template": "Gate B12"], ["type": "spacer"], ["type": "text", "template": "Boarding"],
            ]],
        ]
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "f1", lockScreen: ["f1"]),
                               items: [F.item(id: "f1", app: "org.example.Flights", type: "Flight", state: [:], layout: layout)]))
        let row = screen(model, columns: 60).split(separator: "\n").first { $0.contains("Gate B12") }.map(String.init) ?? ""
        // The card's inner width is 52 at 60 columns: the two parts at its two edges.
        #expect(row.contains("│ Gate B12"))
        #expect(row.contains("Boarding │"))
        #expect(displayWidth(row) - displayWidth("Gate B12") - displayWidth("Boarding") > 30)
        let document = svg(model)
        #expect(document.contains("text-anchor=\"end\">Boarding</text>"))
    }

    @Test func svgTextIsReadableWhateverTheKeyline() {
        var layout = F.coffeeLayout.objectValue!
        layout["keylineTint"] = "#5a3a1a"  // brown: 2.2:1 on black
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                               items: [F.item(id: "c1", app: "a.b", type: "Coffee", state: ["stage": "brewing"], layout: .object(layout))]))
        let document = svg(model)
        #expect(document.contains("stroke=\"#5a3a1a\""))  // the keyline keeps its colour
        let textTags = document.components(separatedBy: "<text ").dropFirst().map { $0.prefix { $0 != ">" } }
        #expect(!textTags.isEmpty && !textTags.contains { $0.contains("#5a3a1a") })
        #expect(SVGRenderer.contrast(SVGRenderer.luminance((0x5A, 0x3A, 0x1A)), 0) < 4.5)
        // A light card background gets dark text.
        layout["backgroundTint"] = "#ffffff"
        model.apply(F.snapshot(sequence: 2, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                               items: [F.item(id: "c1", app: "a.b", type: "Coffee", state: ["stage": "brewing"], layout: .object(layout))]))
        #expect(svg(model).contains("fill=\"#000000\">Coffee for"))
    }

    @Test func lengthsAreCappedPerRegionAndPerBarLine() throws {
        let long = String(repeating: "very long stage ", count: 4)
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee(stage: long)]))
        let scene = IslandScene(model: model, now: F.now)
        let eww = BarFormat.eww.line(for: scene)
        #expect(displayWidth(eww) == BarFormat.defaultMaxLength && eww.hasSuffix("…"))
        #expect(displayWidth(BarFormat.polybar.line(for: scene, maxLength: 12)) == 12)
        let i3 = try #require(try JSONParser.parse(Array(BarFormat.i3blocks.line(for: scene, maxLength: 10).utf8)).objectValue)
        #expect(i3["full_text"]?.stringValue.map(displayWidth) == 10)
        // The compact pill stays a pill: far narrower than the 430-point drawing.
        let document = svg(model)
        // The path starts at the top edge's left end ("M x,y") and runs to its right end ("H x").
        let path = try #require(document.components(separatedBy: "class=\"island compact\" d=\"M").dropFirst().first)
        let start = try #require(Double(path.prefix { $0 != "," }))
        let end = try #require(Double(path.components(separatedBy: " H").dropFirst().first?.prefix { $0 != " " } ?? ""))
        #expect(end - start > 0 && end - start <= SVGRenderer.compactMaximumWidth)
        #expect(screen(model).split(separator: "\n").allSatisfy { displayWidth(String($0)) <= 100 })
        #expect(screen(model).split(separator: "\n")[1].trimmingCharacters(in: .whitespaces).count <= TerminalFrame.compactMaximumWidth + 4)
    }

    // MARK: Clicks

    @Test func barClicksActOnTheIslandsActivity() {
        let compact = IslandState(mode: .compact, attached: "c1", lockScreen: ["c1"])
        let expanded = IslandState(mode: .expanded, attached: "c1", expanded: "e1", lockScreen: ["c1", "e1"])
        #expect(BarClick.toggle.interaction(on: compact)! == ("expand", "c1"))
        #expect(BarClick.toggle.interaction(on: expanded)! == ("collapse", "e1"))
        #expect(BarClick.tap.interaction(on: expanded)! == ("tap", "e1"))
        #expect(BarClick.expand.interaction(on: .empty) == nil)
        #expect(BarClick.list.interaction(on: compact) == nil)
        #expect([1, 2, 3, 4].map(BarClick.forButton) == [.toggle, .list, .tap, nil])
        // i3blocks writes a persistent block's clicks to its stdin: JSON, or the number alone.
        #expect(BarClick.i3blocksButton(in: #"{"":"","name":"island","full_text":"☕ x","button":3,"x":10}"#) == 3)
        #expect(BarClick.i3blocksButton(in: #"{"button":"2"}"#) == 2)
        #expect(BarClick.i3blocksButton(in: "1") == 1)
        #expect(BarClick.i3blocksButton(in: "{not json") == nil)
    }

    // MARK: A paused timer

    /// `island timer` paused: state {paused: true, remaining} in the default layout.
    static let pausedTimer: PresenterModel = {
        var model = PresenterModel()
        let item = F.item(id: "t1", app: "org.island.cli", type: "Timer", attributes: ["title": "Tea", "duration": 300.0],
                          state: ["paused": true, "remaining": 272.3], layout: nil)
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "t1", lockScreen: ["t1"]), items: [item]))
        return model
    }()

    @Test func aPausedTimerReadsAsPausedInEverySink() throws {
        let scene = IslandScene(model: Self.pausedTimer, now: F.now)
        for format in BarFormat.allCases {
            let line = format.line(for: scene)
            #expect(line.contains("⏸") && line.contains("4:32") && !line.contains("true"), "\(format): \(line)")
        }
        let terminal = screen(Self.pausedTimer)
        #expect(terminal.contains("⏸") && !terminal.contains("true"))
        let texts = TextCollector.parse(svg(Self.pausedTimer, icons: IconTheme(roots: []))).texts
        #expect(texts.contains { $0.contains("⏸") } && !texts.contains { $0.contains("true") })
        // With an icon theme, the pause symbol is the theme's icon.
        let (theme, root) = try Self.theme()
        defer { try? FileManager.default.removeItem(at: root) }
        let actions = root.appendingPathComponent("Adwaita/scalable/actions")
        try FileManager.default.createDirectory(at: actions, withIntermediateDirectories: true)
        try ##"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path d="M3 2h3v12H3zM10 2h3v12h-3z"/></svg>"##
            .write(to: actions.appendingPathComponent("media-playback-pause-symbolic.svg"), atomically: true, encoding: .utf8)
        let document = svg(Self.pausedTimer, icons: theme)
        #expect(document.contains("<image class=\"icon\""))
        #expect(TextCollector.parse(document).texts.contains("4:32"))
    }
}
