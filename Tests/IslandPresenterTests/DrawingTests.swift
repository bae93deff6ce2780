#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import OrderedJSON
import OrderedCollections
import IslandCore
@testable import IslandOverlay
import SinkRules
import Testing
@testable import IslandPresenter

/// An SVG of the snapshot as a test reads it: its title and description (the only text it
/// holds), its paths with their bounding boxes and styles, and how many glyphs and images cairo
/// drew.
final class SVGDocument: NSObject, XMLParserDelegate {
    /// One outline of a path (from an `M` to the next): a path may hold several, as the
    /// island, the bubble and the neck between them make one body.
    struct Path {
        var style: String
        var points: [(x: Double, y: Double)]
        /// The bounding box of every point, control points included (they lie inside a
        /// rounded rectangle's box).
        var box: OverlayRect? {
            guard let first = points.first else { return nil }
            var (minX, minY, maxX, maxY) = (first.x, first.y, first.x, first.y)
            for point in points {
                (minX, minY, maxX, maxY) = (min(minX, point.x), min(minY, point.y), max(maxX, point.x), max(maxY, point.y))
            }
            return OverlayRect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
        }
    }

    var ok = false
    var elements: [String] = []
    var title: String?
    var desc: String?
    var paths: [Path] = []
    /// Every `style` of the document: glyphs take their colour from their group's.
    var styles: [String] = []
    /// The fill of each glyph drawn: the style of the nearest group around it that has one.
    var glyphFills: [String] = []
    /// Where each picture is drawn (a `use` of an `image`, outside any mask): the origin of
    /// its transform, in the document's coordinates.
    var placedImages: [(x: Double, y: Double)] = []
    /// Pictures used only inside a `mask`: cairo 1.16 writes them there without their matrix,
    /// at the page's origin, so they show nowhere.
    var maskedImages = 0
    private var masks = 0
    private var open: [String?] = []
    private var current: String?
    private var text = ""

    var glyphs: Int { elements.filter { $0 == "use" }.count }
    var images: Int { elements.filter { $0 == "image" }.count }
    /// The description's lines: the text of one region of the drawing each (a button's alone).
    var lines: [String] { desc?.split(separator: "\n").map(String.init) ?? [] }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        elements.append(name)
        if let style = attributes["style"] { styles.append(style) }
        if name == "use", let fill = open.last(where: { $0?.contains("fill:") == true }) ?? nil { glyphFills.append(fill) }
        open.append(attributes["style"])
        if name == "mask" { masks += 1 }
        if name == "use", (attributes["xlink:href"] ?? attributes["href"])?.hasPrefix("#image") == true {
            let matrix = (attributes["transform"] ?? "").split(whereSeparator: { "(), ".contains($0) }).compactMap { Double($0) }
            if masks > 0 {
                maskedImages += 1
            } else {
                placedImages.append(matrix.count == 6 ? (x: matrix[4], y: matrix[5]) : (x: 0, y: 0))
            }
        }
        if name == "title" || name == "desc" { current = name; text = "" }
        // Cairo writes fills in the document's coordinates; a path with a transform (a stroke)
        // is in other ones, and is left out.
        if name == "path", attributes["transform"] == nil, let d = attributes["d"], !(attributes["style"] ?? "").contains("stroke:rgb") {
            // Each subpath on its own; the lone point cairo moves to after closing one is none.
            for subpath in d.split(separator: "M") {
                let numbers = subpath.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
                let points = stride(from: 0, to: numbers.count - 1, by: 2).map { (x: numbers[$0], y: numbers[$0 + 1]) }
                if points.count > 1 { paths.append(Path(style: attributes["style"] ?? "", points: points)) }
            }
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if current != nil { text += string } }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
        if name == "mask" { masks -= 1 }
        if name == "title" { title = text }
        if name == "desc" { desc = text }
        if name == current { current = nil }
    }

    static func parse(_ document: String?) -> SVGDocument {
        let result = SVGDocument()
        guard let document else { return result }
        let parser = XMLParser(data: Data(document.utf8))
        parser.delegate = result
        result.ok = parser.parse()
        return result
    }

    /// Cairo's colour in a style, `rgb(100%,58.431373%,0%)`, as 0-255 channels.
    static func rgb(_ colour: LayoutColor) -> String {
        func percent(_ channel: UInt8) -> String {
            let value = Double(channel) / 255 * 100
            return value == value.rounded()
                ? String(Int(value)) : String(format: "%f", value).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
        }
        return "rgb(\(percent(colour.red))%,\(percent(colour.green))%,\(percent(colour.blue))%)"
    }

    /// How cairo writes a colour of the painter's (the keyline: the style's quiet mix of white
    /// and the layout's tint).
    static func rgb(_ colour: OverlayColor) -> String {
        func percent(_ channel: Double) -> String {
            let value = channel * 100
            return value == value.rounded()
                ? String(Int(value)) : String(format: "%f", value).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
        }
        return "rgb(\(percent(colour.red))%,\(percent(colour.green))%,\(percent(colour.blue))%)"
    }
}

/// The SVG presenter: the overlay's frame painted by the overlay's painter on a cairo SVG
/// surface (one geometry, one painter: docs/design.md §10).
@Suite struct SVGTests {
    typealias F = Fixtures

    static func svg(_ model: PresenterModel, at now: Double = F.now) -> String? {
        OverlaySnapshot.svg(IslandScene(model: model, now: now), painter: OverlayPainter(icons: nil))
    }

    func svg(_ model: PresenterModel, at now: Double = F.now) -> SVGDocument { SVGDocument.parse(Self.svg(model, at: now)) }

    @Test func compactIsTitledAndDescribedAndDrawnInGlyphs() throws {
        let document = svg(F.compactModel)
        #expect(document.ok)
        #expect(document.elements.first == "svg")
        #expect(document.title == "Island: compact")
        #expect(document.lines.contains("☕") && document.lines.contains("brewing"))
        #expect(document.lines.contains("Coffee for Ada: brewing") && document.lines.contains("25%"))  // the card's bar, 1 of 4
        // The text is drawn, as glyph outlines; none of it is a text element.
        #expect(document.glyphs > 10)
        #expect(!document.elements.contains("text"))
        // The keyline: the style's quiet line, with a little of the layout's tint, as a vector.
        let keyline = OverlayStyle().keyline(tint: LayoutColor(red: 0xFF, green: 0x95, blue: 0))
        #expect(document.styles.contains { $0.contains("stroke:" + SVGDocument.rgb(keyline)) })
        #expect(SinkRules.violation(svg: try #require(Self.svg(F.compactModel))) == nil)
    }

    @Test func minimalDrawsTheDetachedBubbleAndTimersAtNow() throws {
        let document = svg(F.minimalModel, at: F.now + 5)
        #expect(document.ok)
        #expect(document.title == "Island: minimal")
        // The timer, attached, at now, and on its card in the list. The coffee's minimal view
        // ("brewing") does not fit the round bubble: its compact symbol stands for it there.
        #expect(document.lines.filter { $0 == "2:00" }.count == 2 && document.lines.contains("Tea"))
        #expect(!document.lines.contains("brewing") && document.lines.contains("☕"))
        let scene = IslandScene(model: F.minimalModel, now: F.now + 5)
        let frame = OverlaySnapshot.frame(scene, metrics: OverlayPainter(icons: nil).metrics)
        #expect(frame.shape("bubble") != nil)
        #expect(Self.missingShapes(frame, in: document).isEmpty)
    }

    @Test func expandedDescribesItsRegionsAndButtons() {
        let document = svg(F.expandedModel)
        #expect(document.ok)
        #expect(document.title == "Island: expanded")
        #expect(document.lines.contains("Ada's order"))
        #expect(document.lines.contains("Pause") && document.lines.contains("Cancel"))
    }

    @Test func emptyIslandShowsTheListAlone() {
        let document = svg(F.emptyModel)
        #expect(document.ok)
        #expect(document.title == "Island: none")
        #expect(document.lines == ["No Live Activities"])
    }

    @Test func textIsEscapedInTheDescription() throws {
        var model = PresenterModel()
        let nasty = "<script>&\"'\u{1}]]>"
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "x", name: nasty)]))
        let text = try #require(Self.svg(model))
        let document = SVGDocument.parse(text)
        #expect(document.ok)
        #expect(SinkRules.violation(svg: text) == nil)
        // Control characters become spaces in a line of text; markup survives the round trip.
        #expect(document.lines.contains("Coffee for <script>&\"' ]]>: x"))
        #expect(OverlaySnapshot.escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;")
        #expect(OverlaySnapshot.escape("bell\u{7}") == "bell\u{FFFD}")
        // Controls XML allows become references: the document is safe on a terminal too.
        #expect(OverlaySnapshot.escape("csi\u{9B}del\u{7F}\ttab\rcr") == "csi&#x9B;del&#x7F;&#x9;tab&#xD;cr")
    }

    /// What a producer can make the description hold is bounded: lines, their length, the
    /// whole; and a document with no `<svg>` to title is refused, not written untitled.
    @Test func theDescriptionIsBounded() throws {
        let lines = (0..<1000).map { "line \($0) " + String(repeating: "x", count: 1000) }
        let empty = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"></svg>"
        let document = try #require(OverlaySnapshot.titled(empty, title: "Island: <x>", description: lines))
        let parsed = SVGDocument.parse(document)
        #expect(parsed.ok && parsed.title == "Island: <x>")
        #expect(!parsed.lines.isEmpty && parsed.lines.count <= OverlaySnapshot.maximumDescriptionLines)
        #expect(parsed.lines.allSatisfy { $0.unicodeScalars.count <= OverlaySnapshot.maximumLineScalars + 1 })
        #expect((parsed.desc?.unicodeScalars.count ?? .max) <= OverlaySnapshot.maximumDescriptionScalars + OverlaySnapshot.maximumDescriptionLines)
        #expect(OverlaySnapshot.titled("<svg", title: "x", description: []) == nil)
        #expect(OverlaySnapshot.titled("<html></html>", title: "x", description: []) == nil)
    }

    /// The frame's shapes the document has no path for: each shape is a filled path whose box
    /// is the shape's rectangle and whose points are the painter's outline of the shape (so its
    /// corner radius too). Empty when the SVG draws the frame's geometry.
    static func missingShapes(_ frame: OverlayFrame, in document: SVGDocument, crop: OverlayRect? = nil) -> [String] {
        let painter = OverlayPainter(icons: nil)
        let crop = crop ?? OverlaySnapshot.crop(of: frame, canvasWidth: OverlaySnapshot.layout(metrics: painter.metrics).canvasWidth)
        func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 0.01 }
        return frame.shapes.filter { $0.rect.width > 0.5 && $0.rect.height > 0.5 }.compactMap { shape in
            let rect = shape.rect
            let outline = OverlaySnapshot.outline(of: shape, painter: painter).map { (x: $0.x - crop.x, y: $0.y - crop.y) }
            let found =
                !outline.isEmpty
                && document.paths.contains { path in
                    guard let box = path.box, path.points.count == outline.count else { return false }
                    return near(box.x, rect.x - crop.x) && near(box.y, rect.y - crop.y) && near(box.width, rect.width) && near(box.height, rect.height)
                        && zip(path.points, outline).allSatisfy { near($0.x, $1.x) && near($0.y, $1.y) }
                }
            return found ? nil : "\(shape.id) \(rect) radius \(shape.radius)"
        }
    }

    /// One geometry: every form of every example app, and the list, has in its SVG
    /// exactly the shapes — rectangles and corner radii — of the overlay's frame for the scene.
    @Test func everyExampleFormHasTheOverlaysShapes() throws {
        let painter = OverlayPainter(icons: nil)
        let scenes = try OverlayGallery.scenes(layoutsDirectory: OverlayGallery.defaultLayoutsDirectory())
        #expect(scenes.count >= 20)
        for (name, scene, _) in scenes {
            let frame = OverlaySnapshot.frame(scene, metrics: painter.metrics)
            let text = try #require(OverlaySnapshot.svg(scene, painter: painter), "\(name)")
            let document = SVGDocument.parse(text)
            #expect(document.ok, "\(name)")
            #expect(SinkRules.violation(svg: text) == nil, "\(name)")
            #expect(frame.shapes.contains { $0.kind == .panel }, "\(name): the list is open")
            #expect(frame.shapes.contains { $0.id == "island" }, "\(name)")
            let missing = Self.missingShapes(frame, in: document)
            #expect(missing.isEmpty, "\(name): \(missing)")
            #expect(document.glyphs > 0, "\(name)")
        }
    }
}

@Suite struct TerminalTests {
    typealias F = Fixtures

    func screen(_ model: PresenterModel, chrome: TerminalChrome = .init(), columns: Int = 100, rows: Int = 30) -> [String] {
        TerminalFrame(columns: columns, rows: rows).render(IslandScene(model: model, now: F.now), chrome: chrome).map(\.plain)
    }

    @Test func compactPillIsCentredAtTheTop() {
        let lines = screen(F.compactModel)
        #expect(lines.count == 30)
        let pill = lines[2]
        #expect(pill.contains("☕") && pill.contains("brewing"))
        #expect(pill.hasPrefix(String(repeating: " ", count: 30)))
        #expect(lines.contains { $0.contains("Coffee for Ada: brewing") })
        #expect(lines.contains { $0.contains("█") && $0.contains("25%") })
        #expect(lines.last!.hasPrefix(" compact │ "))
    }

    @Test func minimalHasTheDetachedBubble() {
        let lines = screen(F.minimalModel)
        #expect(lines[2].contains("2:05"))
        #expect(lines[2].contains("│ ☕ brewing │"))
        #expect(lines.last!.hasPrefix(" minimal │"))
    }

    @Test func expandedNumbersItsButtons() {
        let lines = screen(F.expandedModel)
        #expect(lines.contains { $0.contains("Ada's order") })
        #expect(lines.contains { $0.contains("[1 Pause] [2 Cancel]") })
    }

    @Test func selectionMessageAndDisconnection() {
        let selected = screen(F.minimalModel, chrome: .init(selected: "c1", message: "URL: https://example.org/order"))
        #expect(selected.contains { $0.hasPrefix("▶ ╭─ org.example.Coffee") })
        #expect(selected[selected.count - 2] == " URL: https://example.org/order")
        let away = screen(PresenterModel(), chrome: .init(link: .lost(reason: "the daemon is shutting down")))
        #expect(away.contains { $0.contains("reconnecting… the daemon is shutting down") })
        // Before the first connection nothing was lost: the line does not say "reconnecting".
        let first = screen(PresenterModel(), chrome: .init(link: .connecting))
        #expect(first[first.count - 2] == " connecting to islandd…")
        #expect(!first.contains { $0.contains("reconnecting") })
    }

    @Test func theStatusLineSaysWhenDoNotDisturbIsOn() {
        var model = F.compactModel
        var focus = F.delta(sequence: 100, island: nil)
        focus["focus"] = ["on": true, "since": .double(F.now - 60)]
        model.apply(focus)
        #expect(screen(model).last!.hasPrefix(" compact │ Do Not Disturb │ ←"))
        #expect(!screen(F.compactModel).last!.contains("Do Not Disturb"))
    }

    @Test func theStatusLineSaysWhenContentIsHiddenWhileSharing() {
        let lines = screen(F.sharedModel)
        #expect(lines.last!.hasPrefix(" compact │ Screen shared: content hidden │ ←"))
        #expect(lines.contains { $0.contains("Hidden while sharing") })
        #expect(!screen(F.compactModel).last!.contains("Screen shared"))
    }

    @Test func smallTerminalsAreCut() {
        let lines = screen(F.minimalModel, columns: 30, rows: 8)
        #expect(lines.count == 8)
        let frame = TerminalFrame(columns: 30, rows: 8).render(IslandScene(model: F.minimalModel, now: F.now), chrome: .init())
        #expect(frame.allSatisfy { displayWidth(ansiStripped($0.ansi(columns: 30))) <= 30 })
    }

    @Test func keys() {
        #expect(
            TUIKey.parse(Array("\u{1B}[C\u{1B}[D\t\recdq19x".utf8)) == [
                .next, .previous, .next, .tap, .expand, .collapse, .dismiss, .quit, .button(1), .button(9),
            ])
        #expect(TUIKey.parse([0x03]) == [.quit])
    }

    @Test func displayWidths() {
        #expect(displayWidth("abc") == 3)
        #expect(displayWidth("☕") == 2)
        #expect(displayWidth("e\u{301}") == 1)
        // Controls are drawn as a space each; joiners, variation selectors and format characters
        // take no cell; box drawing one; emoji and every East Asian wide range, at both its ends, two.
        #expect(displayWidth("a\u{7}\u{9B}\u{AD}") == 4)
        #expect(displayWidth("\u{200D}\u{FE0F}\u{2060}\u{20DD}") == 0)
        #expect(displayWidth("╭─│╯") == 4)
        #expect(displayWidth("😀\u{3000}") == 4)
        let wide: [UInt32] = [
            0x1100, 0x115F, 0x2E80, 0x303E, 0x3041, 0x33FF, 0x3400, 0x4DBF, 0x4E00, 0x9FFF, 0xA000, 0xA4CF, 0xAC00, 0xD7A3,
            0xF900, 0xFAFF, 0xFE30, 0xFE4F, 0xFF00, 0xFF60, 0xFFE0, 0xFFE6, 0x20000, 0x3FFFD,
        ]
        for value in wide { #expect(displayWidth(String(Character(Unicode.Scalar(value)!))) == 2, "U+\(String(value, radix: 16))") }
        #expect(displayWidth("\u{10FF}\u{1160}\u{2E7F}\u{303F}\u{FF61}\u{FFE7}") == 6)
        #expect(truncate("brewing coffee", toWidth: 8) == "brewing…")
        // Never cut to a letter or two: a value that does not fit in four cells is dropped whole.
        #expect(truncate("connection lost", toWidth: 4) == "con…")
        #expect(truncate("connection lost", toWidth: 3) == "")
        #expect(truncate("connection lost", toWidth: 2) == "")
        #expect(truncate("7 min", toWidth: 5) == "7 min")
    }

    func ansiStripped(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }
}

@Suite struct TUIControllerTests {
    typealias F = Fixtures

    final class Recorder: Sendable {
        let calls = Mutex<[String]>([])
        let opened = Mutex<[String]>([])
        let screen = Mutex<String>("")
    }

    func controller(_ recorder: Recorder, url: String? = "https://example.org/order", canOpen: Bool = false) -> TUIController {
        TUIController(
            io: .init(
                write: { text in recorder.screen.withLock { $0 = text } },
                size: { (100, 30) },
                clock: { F.now },
                open: { url in
                    recorder.opened.withLock { $0.append(url) }; return canOpen
                },
                interact: { action, id, button in
                    recorder.calls.withLock { $0.append([action, id ?? "-", button ?? "-"].joined(separator: " ")) }
                    return action == "tap" ? url : nil
                },
                monotonic: Self.aSecondPerRead()))
    }

    /// A click-guard clock on which a second passes between any two reads: every key comes
    /// well after the frame it acts on (ClickGuardPresenterTests covers keys that come early).
    static func aSecondPerRead() -> @Sendable () -> Double {
        let time = Mutex<Double>(0)
        return {
            time.withLock {
                $0 += 1; return $0
            }
        }
    }

    @Test func keysSendInteractions() async {
        let recorder = Recorder()
        let tui = controller(recorder)
        await tui.handle(
            .update(
                F.snapshot(
                    sequence: 5, island: F.island("minimal", attached: "t1", detached: "c1", lockScreen: ["t1", "c1"]),
                    items: [F.timer(), F.coffee()])))
        #expect(await tui.press(.expand))  // the attached activity
        #expect(await tui.press(.next))  // select c1
        #expect(await tui.press(.expand))
        await tui.handle(.update(F.delta(sequence: 6, island: F.island("expanded", attached: "t1", detached: "c1", expanded: "c1", lockScreen: ["t1", "c1"]))))
        #expect(await tui.press(.button(2)))
        #expect(await tui.press(.button(7)))  // no such button: nothing sent
        #expect(await tui.press(.collapse))
        #expect(await tui.press(.tap))
        #expect(await tui.press(.dismiss))
        #expect(await !tui.press(.quit))
        #expect(
            recorder.calls.withLock { $0 } == [
                "expand t1 -", "expand c1 -", "button c1 cancel", "collapse c1 -", "tap c1 -", "dismiss c1 -",
            ])
        #expect(recorder.opened.withLock { $0 } == ["https://example.org/order"])
    }

    @Test func aTapShowsTheURLWhenNothingOpensIt() async {
        let recorder = Recorder()
        let tui = controller(recorder)
        await tui.handle(.update(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()])))
        _ = await tui.press(.tap)
        #expect(recorder.screen.withLock { $0 }.contains("URL: https://example.org/order"))
    }
}

import Synchronization
