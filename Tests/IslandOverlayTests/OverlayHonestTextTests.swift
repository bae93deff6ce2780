import CPangoCairo
import Foundation
import IslandCore
import IslandPresenter
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandOverlay

/// What the island says is never less true than what it was told: a value that does not fit
/// is dropped whole, never cut to a letter; a stale activity looks stale and an ended one
/// final; right-to-left text reads from the right; an icon nobody has draws nothing; the
/// keyline shows over dark windows without ringing the island on light ones.
@Suite struct OverlayHonestTextTests {
    let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics())

    static func item(_ id: String, layout: JSON, state: JSONObject = [:], activityState: String = "active") -> JSON {
        guard case .object(var object) = Scenes.item(id, layout: layout, state: state) else { return .null }
        object["state"] = .string(activityState)
        return .object(object)
    }

    /// Every text placed is its whole natural width, or cut to no less than a few letters.
    static func cutTexts(_ placed: [OverlayPlaced], placement: ViewPlacement) -> [String] {
        placed.compactMap { piece in
            guard case .text(let text, let font, _, _) = piece.primitive else { return nil }
            let natural = placement.metrics.width(of: text, font: font)
            return piece.rect.width + 0.001 < min(natural, placement.readableWidth(font)) ? "\(text) in \(piece.rect.width) px" : nil
        }
    }

    @Test("a value that does not fit is dropped whole, never cut to a letter or two")
    func aValueThatDoesNotFitIsDroppedWhole() throws {
        let placement = layout.placement
        var links: [(OverlayRect, String?)] = []
        // 77 px and 112 px of text: in 130 both are cut, to a few letters at least; in 70 the
        // second would be "u…" and goes whole, and the first takes the room it leaves.
        let line = RenderedView.hstack([.text("Downloading"), .text("ubuntu-24.04.iso")], spacing: nil)
        let both = placement.inline(line, in: OverlayRect(x: 0, y: 0, width: 130, height: 20), slot: "t", links: &links)
        #expect(both.count == 2 && Self.cutTexts(both, placement: placement).isEmpty, "\(both)")
        let placed = placement.inline(line, in: OverlayRect(x: 0, y: 0, width: 70, height: 20), slot: "t", links: &links)
        #expect(placed.map(\.primitive) == [.text("Downloading", font: .body, ink: .primary, alignment: .leading)])
        #expect(placed.first?.rect.width == 70)
        // A long text may be ellipsized, but to a few letters at least.
        let long = placement.inline(.text(String(repeating: "abc ", count: 30)), in: OverlayRect(x: 0, y: 0, width: 120, height: 20), slot: "l", links: &links)
        #expect(long.count == 1 && long[0].rect.width == 120)
        let narrow = placement.inline(.text("connection lost"), in: OverlayRect(x: 0, y: 0, width: 20, height: 20), slot: "n", links: &links)
        #expect(narrow.isEmpty, "20 px holds no readable part of it: \(narrow)")
        // In the island: a long leading text and a long trailing value in the compact pill.
        let compact: JSON = ["compactLeading": ["type": "text", "template": "{{state.a}}"], "compactTrailing": ["type": "text", "template": "{{state.b}}"]]
        for (a, b) in [
            ("Something went wrong with the upload", "connection lost"), ("Copy", String(repeating: "x", count: 80)),
            ("Brewing your order now", "ready at the counter in about seven minutes"),
        ] {
            let frame = layout.frame(
                Scenes.scene(["mode": "compact", "attached": "c"], items: [Self.item("c", layout: compact, state: ["a": .string(a), "b": .string(b)])]))
            #expect(Self.cutTexts(frame.content, placement: placement).isEmpty, "\(a) / \(b): \(Self.cutTexts(frame.content, placement: placement))")
            #expect(!frame.content.isEmpty)
        }
    }

    @Test("the expanded island widens, as far as its canvas allows, before its centre is cut")
    func theExpandedIslandWidensBeforeTheCentreIsCut() throws {
        let regions: JSONObject = [
            "leading": ["type": "symbol", "name": "🎵", "priority": 1],
            "center": [
                "type": "vstack", "priority": 2,
                "children": [["type": "text", "template": "{{state.title}}"], ["type": "text", "template": "{{state.line}}"]],
            ],
            "trailing": ["type": "text", "template": "12:34", "priority": 0],
        ]
        func frame(_ line: String, canvas: Double) throws -> (island: OverlayRect, line: OverlayRect) {
            let layout = OverlayLayout(canvasWidth: canvas, canvasHeight: 640, top: 8, metrics: FixedMetrics())
            let frame = layout.frame(OverlayContentRuleTests.expanded(regions, state: ["title": "Clair de Lune", "line": .string(line)]))
            let text = try #require(OverlayContentRuleTests.texts(frame, "expanded.center").last)
            return (try #require(frame.shape("island")).rect, text.rect)
        }
        let short = try frame("Debussy", canvas: 440)
        #expect(short.island.width == layout.geometry.expandedWidth, "a centre that fits leaves the island as it is")
        // 38 letters, 266 px: cut in 360 px beside the clock, whole in a wider island.
        let line = "Claude Debussy — Suite bergamasque, L 75"
        let wide = try frame(line, canvas: 440)
        #expect(wide.island.width > layout.geometry.expandedWidth && wide.island.width <= 440 - 16)
        #expect(wide.line.width == FixedMetrics().width(of: line, font: .body), "the line is whole: \(wide.line.width)")
        #expect(abs(wide.island.midX - 220) < 0.001, "still centred")
        let narrow = try frame(line, canvas: 376)
        #expect(narrow.island.width == 360, "no wider than its canvas allows")
    }

    /// 7 px a character, 15 in large digits.
    struct ClockMetrics: TextMetrics {
        func width(of text: String, font: OverlayFont) -> Double { Double(text.count) * (font == .largeDigits ? 15 : 7) }
    }

    @Test("a clock in large digits takes the body's digits when that makes the centre whole, and only then")
    func aLargeClockGivesWayToTheWords() throws {
        let regions: JSONObject = [
            "center": [
                "type": "vstack", "priority": 2, "children": [["type": "text", "template": "Clair de Lune"], ["type": "text", "template": "{{state.line}}"]],
            ],
            "trailing": ["type": "timer", "to": "{{state.endsAt}}", "priority": 0],
        ]
        // No room to widen: the canvas is as wide as the island.
        let layout = OverlayLayout(canvasWidth: 376, canvasHeight: 640, top: 8, metrics: ClockMetrics())
        func clock(_ line: String) throws -> (font: OverlayFont, line: Double) {
            let frame = layout.frame(OverlayContentRuleTests.expanded(regions, state: ["line": .string(line), "endsAt": .double(Scenes.now + 3599)]))
            let clock = try #require(OverlayContentRuleTests.texts(frame, "expanded.trailing").first)
            return (clock.font, try #require(OverlayContentRuleTests.texts(frame, "expanded.center").last).rect.width)
        }
        let g = layout.geometry
        // "59:59": 75 px in large digits, 35 in the body's. What the centre is given beside each:
        let besideLarge = 360 - 2 * g.expandedPadding - 75 - g.expandedGap
        #expect(try clock("Debussy").font == .largeDigits, "a centre that fits leaves the clock large")
        let fitsBesideSmall = String(repeating: "a", count: Int(besideLarge / 7) + 3)
        let shrunk = try clock(fitsBesideSmall)
        #expect(shrunk.font == .digits && shrunk.line == Double(fitsBesideSmall.count) * 7, "the words whole, the clock smaller")
        let cutAnyway = String(repeating: "a", count: Int(besideLarge / 7) + 20)
        #expect(try clock(cutAnyway).font == .largeDigits, "cut either way: the clock keeps its size")
    }

    @Test("a line reads from the side its first strong character starts on")
    func rightToLeftLinesReadFromTheRight() throws {
        #expect(ViewPlacement.isRightToLeft("مرحبا بالعالم"))
        #expect(ViewPlacement.isRightToLeft("שלום"))
        #expect(ViewPlacement.isRightToLeft("12:30 مرحبا Hello"), "digits are weak: the first strong character is Arabic")
        #expect(!ViewPlacement.isRightToLeft("Hello مرحبا"))
        #expect(!ViewPlacement.isRightToLeft("12:30"))
        #expect(!ViewPlacement.isRightToLeft("下载中"))
        let placement = layout.placement
        var links: [(OverlayRect, String?)] = []
        let rect = OverlayRect(x: 10, y: 0, width: 300, height: 20)
        let arabic = placement.inline(.hstack([.symbol("📥"), .text("تنزيل الملف")], spacing: nil), in: rect, slot: "r", links: &links)
        let text = try #require(arabic.first { if case .text = $0.primitive { true } else { false } })
        let symbol = try #require(arabic.first { if case .symbol = $0.primitive { true } else { false } })
        #expect(abs(symbol.rect.maxX - rect.maxX) < 0.001, "what leads stands at the right")
        #expect(text.rect.maxX <= symbol.rect.x + 0.001 && text.rect.x > rect.midX)
        let english = placement.inline(.text("Downloading"), in: rect, slot: "e", links: &links)
        #expect(english.first?.rect.x == rect.x)
        // In a card of the list: the Arabic body at the card's right.
        let card: JSON = ["lockScreen": ["type": "text", "template": "{{state.t}}"], "compactLeading": ["type": "text", "template": "x"]]
        let frame = layout.frame(
            Scenes.scene(["mode": "compact", "attached": "a"], items: [Self.item("a", layout: card, state: ["t": "تنزيل الملف"])]), listOpen: true)
        let body = try #require(frame.content.first { $0.slot.hasPrefix("list.a.body") })
        let cardRect = try #require(frame.shape("card.a")).rect
        #expect(body.rect.x > cardRect.midX, "\(body.rect) in \(cardRect)")
    }

    @Test("painted, right-to-left text is right-aligned in its rectangle, left-to-right text left-aligned")
    func paintedRightToLeftTextStartsAtTheRight() throws {
        let painter = OverlayPainter(icons: nil)
        func ink(_ text: String) -> (left: Int, right: Int) {
            let placed = OverlayPlaced(
                rect: .init(x: 0, y: 0, width: 400, height: 24), primitive: .text(text, font: .body, ink: .primary, alignment: .leading), slot: "t")
            let frame = OverlayFrame(
                form: .alert, listOpen: false,
                shapes: [OverlayShape(id: "island", kind: .island, rect: .init(x: -10, y: -10, width: 420, height: 44), radius: 0)],
                content: [placed], hits: [])
            var motion = OverlayMotion(enabled: false)
            motion.show(frame)
            return Self.inkColumns(painter: painter, motion: motion, width: 400, height: 24)
        }
        let arabic = ink("مرحبا بالعالم")
        #expect(arabic.left > 200 && arabic.right > 380, "Arabic ink from \(arabic.left) to \(arabic.right)")
        let english = ink("Hello world")
        #expect(english.left < 20 && english.right < 200, "English ink from \(english.left) to \(english.right)")
    }

    /// The leftmost and rightmost columns with light ink over the black island.
    static func inkColumns(painter: OverlayPainter, motion: OverlayMotion, width: Int, height: Int) -> (left: Int, right: Int) {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        painter.paint(motion, cairo: cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
        var left = width, right = -1
        for y in 0..<height {
            for x in 0..<width where data[y * stride + x * 4 + 1] > 100 {
                left = min(left, x)
                right = max(right, x)
            }
        }
        return (left, right)
    }

    @Test("a stale activity looks stale in every form: its content dimmed, its outline dashed")
    func staleLooksStaleEverywhere() throws {
        let live = Scenes.simpleItem("a")
        let stale = Self.item("b", layout: Scenes.simple, state: ["text": "Second", "trailing": "3/5", "done": 3], activityState: "stale")
        let forms: [(JSONObject, String, Bool)] = [
            (["mode": "compact", "attached": "b"], "island", false), (["mode": "expanded", "attached": "b", "expanded": "b"], "island", false),
            (["mode": "minimal", "attached": "a", "detached": "b"], "bubble", false), (["mode": "compact", "attached": "a"], "card.b", true),
        ]
        for (island, shape, listOpen) in forms {
            let frame = layout.frame(Scenes.scene(island, items: [live, stale]), listOpen: listOpen)
            let marked = try #require(frame.shape(shape))
            #expect(marked.stale, "\(island): \(shape) is not marked stale")
            let owned = frame.content.filter { frame.owner(of: $0)?.id == shape && $0.primitive != .dismiss }
            #expect(!owned.isEmpty && owned.allSatisfy { $0.standing == .stale }, "\(island): \(owned.map(\.slot))")
            #expect(frame.shapes.filter { $0.id != shape }.allSatisfy { !$0.stale }, "only the stale activity's shape")
        }
        let fresh = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [live]))
        #expect(fresh.content.allSatisfy { $0.standing == .live } && !(fresh.shape("island")?.stale ?? true))
    }

    @Test("an ended activity's bar and ring are drawn in the secondary colour, never the live accent")
    func endedProgressIsNotLive() {
        let painter = OverlayPainter(icons: nil)
        func accentPixels(_ standing: OverlayStanding) -> Int {
            let content = [
                OverlayPlaced(
                    rect: .init(x: 20, y: 10, width: 200, height: 6), primitive: .bar(RenderedProgress(fraction: 0.4), tint: nil), slot: "b", standing: standing
                ),
                OverlayPlaced(rect: .init(x: 240, y: 2, width: 24, height: 24), primitive: .ring(0.4, tint: nil), slot: "r", standing: standing),
            ]
            let frame = OverlayFrame(
                form: .expanded, listOpen: false,
                shapes: [OverlayShape(id: "island", kind: .island, rect: .init(x: 0, y: 0, width: 300, height: 30), radius: 0)],
                content: content, hits: [])
            var motion = OverlayMotion(enabled: false)
            motion.show(frame)
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 300, 30)!
            defer { cairo_surface_destroy(surface) }
            let cr = cairo_create(surface)!
            painter.paint(motion, cairo: cr)
            cairo_destroy(cr)
            cairo_surface_flush(surface)
            let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
            var count = 0
            for y in 0..<30 {
                for x in 0..<300 {
                    let (blue, red) = (Int(data[y * stride + x * 4]), Int(data[y * stride + x * 4 + 2]))
                    if blue > 120 && blue > red + 60 { count += 1 }
                }
            }
            return count
        }
        #expect(accentPixels(.live) > 100)
        #expect(accentPixels(.ended) == 0)
    }

    @Test("an icon neither the theme nor the glyph table knows draws nothing; a known one draws its glyph")
    func aMissingSymbolDrawsNothing() {
        let painter = OverlayPainter(icons: nil)
        func inked(_ name: String) -> Int {
            let frame = OverlayFrame(
                form: .compact, listOpen: false, shapes: [OverlayShape(id: "island", kind: .island, rect: .init(x: 0, y: 0, width: 40, height: 40), radius: 0)],
                content: [OverlayPlaced(rect: .init(x: 4, y: 4, width: 32, height: 32), primitive: .symbol(name), slot: "s")], hits: [])
            var motion = OverlayMotion(enabled: false)
            motion.show(frame)
            let columns = Self.inkColumns(painter: painter, motion: motion, width: 40, height: 40)
            return max(0, columns.right - columns.left + 1)
        }
        #expect(inked("org.example.no-such-stage-symbolic") == 0)
        #expect(inked("media-playback-start-symbolic") > 4)
    }

    @Test("the keyline is the island's edge over a dark window and all but vanishes over a light one")
    func theKeylineShowsOverDarkWithoutRingingOnLight() throws {
        let painter = OverlayPainter(icons: nil)
        var frame = OverlayFrame(
            form: .compact, listOpen: false,
            shapes: [OverlayShape(id: "island", kind: .island, rect: .init(x: 20, y: 10, width: 160, height: 36), radius: 18)], content: [], hits: [])
        func row(over ground: Double) -> [Double] {
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 200, 56)!
            defer { cairo_surface_destroy(surface) }
            let cr = cairo_create(surface)!
            cairo_set_source_rgb(cr, ground, ground, ground)
            cairo_paint(cr)
            painter.paint(frame, cairo: cr)
            cairo_destroy(cr)
            cairo_surface_flush(surface)
            let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
            // Across the top edge at the middle: rows 7 (outside) to 12 (inside).
            return (7...12).map { Double(data[$0 * stride + 100 * 4 + 1]) / 255 }
        }
        let dark = 0.118, light = 0.96
        let overDark = row(over: dark), overLight = row(over: light)
        // Over a dark terminal: a line brighter than the window by a visible step, at the edge.
        #expect(overDark.max()! - dark > 0.2, "over dark: \(overDark)")
        // Over a light window: the window, then the black; no grey line between them.
        #expect(overLight.allSatisfy { $0 < 0.05 || $0 > light - 0.05 }, "over light: \(overLight)")
        #expect(overLight[4...5].allSatisfy { $0 < 0.02 }, "no light ring inside the edge: \(overLight)")
        #expect(overDark[4...5].allSatisfy { $0 < 0.02 }, "the island is black to its edge: \(overDark)")
        // Over a black window, and dark terminals (foot's #111111, #1e1e1e), with or without a
        // layout's tint (a dark brown one dims it most): the edge is a component's boundary,
        // at least 3:1 against the window (WCAG 1.4.11), so the island never merges with it.
        for tint in [nil, LayoutColor(hex: "#6F4E37"), LayoutColor(hex: "#1DB954"), LayoutColor(hex: "#E53935")] {
            frame.shapes[0].keyline = tint
            for ground in [0.0, 0x11 / 255.0, 0x1e / 255.0] {
                let edge = row(over: ground).max()!
                let contrast = OverlayStyle.contrast(OverlayColor(red: edge, green: edge, blue: edge), OverlayColor(red: ground, green: ground, blue: ground))
                #expect(contrast >= 3, "tint \(tint.map { "\($0)" } ?? "none") over \(ground): the edge at \(edge), \(contrast):1")
            }
            // Over white: the window, then the black; what lies between is no line anyone sees
            // (under 1.1:1 against the window).
            let overWhite = row(over: 1)
            let ring = overWhite.filter { $0 >= 0.05 }.map {
                OverlayStyle.contrast(OverlayColor(red: $0, green: $0, blue: $0), OverlayColor(red: 1, green: 1, blue: 1))
            }
            #expect(ring.allSatisfy { $0 < 1.1 }, "no ring over white: \(overWhite)")
        }
    }
}
