import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import IslandOverlay
import SinkRules
import Testing
@testable import IslandPresenter

/// Every presenter shows what matters (docs/design.md §10): alerts, live compact text, app names
/// and icons, spacers, readable colours and bounded lengths, in every sink.
@Suite struct ShowsWhatMattersTests {
    typealias F = Fixtures

    static let alertModel: PresenterModel = {
        var model = F.compactModel
        model.apply(
            F.delta(
                sequence: 4, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "ready", done: 4)], alert: ["id": "c1", "title": "Order up", "body": "Your flat white is ready"]))
        return model
    }()

    func svg(_ model: PresenterModel, at now: Double = F.now) -> SVGDocument { SVGDocument.parse(SVGTests.svg(model, at: now)) }

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
        long.apply(
            F.delta(
                sequence: 5, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                alert: ["id": "c1", "title": .string(String(repeating: "Order up ", count: 20)), "body": "x"]))
        let frame = TerminalFrame(columns: 50, rows: 30).render(IslandScene(model: long, now: F.now), chrome: .init())
        let box = frame.map { $0.plain.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("│ 🔔") || $0.hasPrefix("│ x ") }
        #expect(box.count == 2 && displayWidth(box[0]) == displayWidth(box[1]), "\(box)")
        // The SVG draws the overlay's alert form; its description says what it shows.
        #expect(svg(Self.alertModel).lines.contains("Order up") && svg(Self.alertModel).lines.contains("Your flat white is ready"))
    }

    @Test func anAlertEndsWithItsExpansion() {
        var model = Self.alertModel
        model.apply(F.delta(sequence: 5, island: F.island("compact", attached: "c1", lockScreen: ["c1"])))
        #expect(!screen(model).contains("Order up"))
        #expect(svg(model).desc?.contains("Order up") == false)
        #expect(BarFormat.eww.line(for: IslandScene(model: model, now: F.now)) == "☕ ready")
    }

    // MARK: Compact and minimal text

    @Test func compactBarTextFollowsUpdatesEvenWithAChip() {
        var layout = F.coffeeLayout.objectValue!
        layout["chip"] = "Coffee"
        var model = PresenterModel()
        let item = { (stage: String) in
            F.item(
                id: "c1", app: "org.example.Coffee", type: "Coffee", attributes: ["name": "Ada"],
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
        let battery = F.item(
            id: "b1", app: "org.example.Battery", type: "Charge",
            state: ["symbol": "battery-good-symbolic", "progress": 0.02], layout: nil)
        let copy = F.item(id: "p1", app: "org.example.Copy", type: "Copy", state: ["progress": 0.7], layout: nil)
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("minimal", attached: "b1", detached: "p1", lockScreen: ["b1", "p1"]),
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
        #expect(svg(model).lines.contains("Corner Café"))
        #expect(svg(model).desc?.contains("org.example.Coffee") == false)
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
        model.apply(
            F.delta(
                sequence: 2, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [.object(item)], alert: ["id": "c1", "title": .string(huge), "body": .string(huge)]))
        #expect(model.alert != nil)
        let scene = IslandScene(model: model, now: F.now)
        #expect(SinkRules.violation(svg: OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: nil)) ?? "") == nil)
        let frame = TerminalFrame(columns: 80, rows: 24).render(scene, chrome: .init())
        #expect(frame.allSatisfy { !$0.plain.unicodeScalars.contains(where: SinkRules.isControl) })
        for format in BarFormat.allCases { #expect(SinkRules.violation(bar: format.line(for: scene), format) == nil) }
    }

    // MARK: Icons

    /// A theme cairo can draw from (PNG, as ThemeIconSource reads): a symbolic battery and
    /// pause icon and an app icon, in a data home of a temporary directory; the environment
    /// that makes it the only one.
    static func pngTheme() throws -> ([String: String], URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("png-icons-\(UUID().uuidString)")
        let theme = root.appendingPathComponent("data/icons/Adwaita")
        let status = theme.appendingPathComponent("16x16/status"), actions = theme.appendingPathComponent("16x16/actions")
        let apps = theme.appendingPathComponent("48x48/apps")
        for directory in [status, actions, apps] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        // Any PNG will do: an empty frame on an opaque background, drawn by the painter.
        let painter = OverlayPainter(icons: nil)
        let empty = OverlaySnapshot.frame(IslandScene(model: F.emptyModel, now: F.now), metrics: painter.metrics)
        for file in [
            status.appendingPathComponent("battery-good-symbolic.symbolic.png"),
            actions.appendingPathComponent("media-playback-pause-symbolic.symbolic.png"),
            apps.appendingPathComponent("org.example.Coffee.png"),
        ] {
            #expect(
                painter.writePNG(
                    empty, crop: OverlayRect(x: 0, y: 0, width: 16, height: 16), background: OverlayColor(red: 1, green: 0.5, blue: 0), to: file.path))
        }
        let environment = [
            "HOME": root.path, "XDG_DATA_HOME": root.appendingPathComponent("data").path, "XDG_DATA_DIRS": root.appendingPathComponent("none").path,
        ]
        return (environment, root)
    }

    @Test func svgDrawsThemeIconsRecolouredAndFallsBackToGlyphs() throws {
        let (environment, root) = try Self.pngTheme()
        defer { try? FileManager.default.removeItem(at: root) }
        var model = PresenterModel()
        var item = F.item(
            id: "b1", app: "org.example.Coffee", type: "Charge", state: ["symbol": "battery-good-symbolic", "progress": 0.5],
            layout: nil
        ).objectValue!
        item["appIcon"] = "org.example.Coffee"
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "b1", lockScreen: ["b1"]), items: [.object(item)]))
        let scene = IslandScene(model: model, now: F.now)
        let text = try #require(OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: ThemeIconSource(environment: environment))))
        let document = SVGDocument.parse(text)
        #expect(document.ok)
        // The app's icon as an image; the symbolic one recoloured in the text's colour, also
        // an image: each placed on the page away from its origin, none only inside a mask
        // (which cairo 1.16 writes at the origin, where it shows nowhere).
        #expect(document.images >= 2)
        #expect(document.placedImages.count >= 2 && document.maskedImages == 0)
        #expect(document.placedImages.allSatisfy { $0.x > 0 && $0.y > 0 })
        #expect(SinkRules.violation(svg: text) == nil)
        // Without the icon the symbol is its glyph (🔋), never nothing; no icon is masked.
        let plain = SVGDocument.parse(OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: nil)))
        #expect(plain.ok && !plain.elements.contains("mask"))
        #expect(plain.lines.contains { $0.contains("🔋") })
    }

    /// Whether cairo's fill in a style, `fill:rgb(r%,g%,b%)`, is dark enough for text on white
    /// (WCAG contrast against white of at least 4.5:1).
    static func isDark(_ style: String) -> Bool {
        guard let range = style.range(of: #"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)"#, options: .regularExpression) else { return false }
        let channels = style[range].dropFirst("fill:rgb(".count).dropLast(1).split(separator: ",").compactMap { Double($0.dropLast()) }
        guard channels.count == 3 else { return false }
        let rgb = channels.map { Int(($0 / 100 * 255).rounded()) }
        let onBlack = contrastOnBlack(rgb[0], rgb[1], rgb[2])
        // Contrast on white from contrast on black: L + 0.05 = 0.05 × onBlack.
        return 1.05 / (0.05 * onBlack) >= 4.5
    }

    /// WCAG contrast of an sRGB colour against black.
    static func contrastOnBlack(_ red: Int, _ green: Int, _ blue: Int) -> Double {
        func linear(_ c: Int) -> Double {
            let v = Double(c) / 255
            return v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        return (0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue) + 0.05) / 0.05
    }

    // MARK: Spacer, colours, lengths

    @Test func spacerPushesItsNeighboursApart() {
        let layout: JSON = [
            "lockScreen": [
                "type": "hstack",
                "children": [
                    ["type": "text", "template": "Gate B12"], ["type": "spacer"], ["type": "text", "template": "Boarding"],
                ],
            ]
        ]
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "f1", lockScreen: ["f1"]),
                items: [F.item(id: "f1", app: "org.example.Flights", type: "Flight", state: [:], layout: layout)]))
        let row = screen(model, columns: 60).split(separator: "\n").first { $0.contains("Gate B12") }.map(String.init) ?? ""
        // The card's inner width is 52 at 60 columns: the two parts at its two edges.
        #expect(row.contains("│ Gate B12"))
        #expect(row.contains("Boarding │"))
        #expect(displayWidth(row) - displayWidth("Gate B12") - displayWidth("Boarding") > 30)
        // In the SVG (the overlay's frame): the two parts at the card's two edges.
        let frame = OverlaySnapshot.frame(IslandScene(model: model, now: F.now), metrics: OverlayPainter(icons: nil).metrics)
        let card = frame.shapes.first { $0.kind == .card }?.rect ?? .zero
        func placed(_ text: String) -> OverlayRect? {
            frame.content.first { if case .text(let shown, _, _, _) = $0.primitive { shown.contains(text) } else { false } }?.rect
        }
        let gate = placed("Gate B12"), boarding = placed("Boarding")
        #expect(gate != nil && boarding != nil)
        if let gate, let boarding { #expect(boarding.x - gate.maxX > card.width * 0.3, "\(gate) \(boarding) in \(card)") }
    }

    @Test func svgTextIsReadableWhateverTheKeyline() {
        var layout = F.coffeeLayout.objectValue!
        layout["keylineTint"] = "#5a3a1a"  // brown: 2.2:1 on black
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                items: [F.item(id: "c1", app: "a.b", type: "Coffee", state: ["stage": "brewing"], layout: .object(layout))]))
        let document = svg(model)
        let brown = SVGDocument.rgb(LayoutColor(red: 0x5A, green: 0x3A, blue: 0x1A))
        // The keyline keeps a little of its tint; the text never takes it.
        #expect(
            document.styles.contains { $0.contains("stroke:" + SVGDocument.rgb(OverlayStyle().keyline(tint: LayoutColor(red: 0x5A, green: 0x3A, blue: 0x1A)))) }
        )
        #expect(!document.glyphFills.isEmpty && !document.glyphFills.contains { $0.contains(brown) })
        #expect(Self.contrastOnBlack(0x5A, 0x3A, 0x1A) < 4.5)
        // A light card background gets dark text.
        layout["backgroundTint"] = "#ffffff"
        model.apply(
            F.snapshot(
                sequence: 2, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                items: [F.item(id: "c1", app: "a.b", type: "Coffee", state: ["stage": "brewing"], layout: .object(layout))]))
        #expect(svg(model).glyphFills.contains { Self.isDark($0) })
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
        // The compact pill stays a pill: more text does not widen it, and it is narrower than
        // the drawing; the SVG draws it as the overlay lays it out.
        func island(_ stage: String) throws -> OverlayRect {
            var longer = PresenterModel()
            longer.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee(stage: stage)]))
            let scene = IslandScene(model: longer, now: F.now)
            let frame = OverlaySnapshot.frame(scene, metrics: OverlayPainter(icons: nil).metrics)
            #expect(SVGTests.missingShapes(frame, in: svg(longer)).isEmpty)
            return try #require(frame.shape("island")).rect
        }
        let pill = try island(long)
        #expect(try island(long + long + long).width == pill.width)
        #expect(pill.width < OverlaySnapshot.layout(metrics: OverlayPainter(icons: nil).metrics).canvasWidth * 0.8)
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
        let item = F.item(
            id: "t1", app: "org.island.cli", type: "Timer", attributes: ["title": "Tea", "duration": 300.0],
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
        let described = svg(Self.pausedTimer)
        #expect(described.desc?.contains("⏸") == true && described.desc?.contains("4:32") == true && described.desc?.contains("true") == false)
        // With an icon theme, the pause symbol is the theme's icon: drawn as an image (in the
        // text's colour), placed where the symbol is, not as the glyph.
        let (environment, root) = try Self.pngTheme()
        defer { try? FileManager.default.removeItem(at: root) }
        let document = SVGDocument.parse(OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: ThemeIconSource(environment: environment))))
        #expect(document.images >= 1 && document.maskedImages == 0)
        #expect(!document.placedImages.isEmpty && document.placedImages.allSatisfy { $0.x > 0 && $0.y > 0 })
        #expect(!svg(Self.pausedTimer).elements.contains("mask"))
    }
}
