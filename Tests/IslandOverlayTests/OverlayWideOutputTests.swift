import IslandCore
import IslandPresenter
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandOverlay

/// On a wide output the expanded island may grow, so that Now Playing's "artist — album"
/// fits before a large clock takes the room: a pure decision from the output's width, bounded
/// by a share of it and by an absolute maximum, and a canvas that holds what it decides.
@Suite struct OverlayWideOutputTests {
    @Test("the widest expanded island is a quarter of the output, between the standard one and a maximum")
    func theWidthDecision() {
        let g = IslandGeometry.medium
        let standard = g.canvasWidth - 2 * IslandGeometry.canvasMargin
        #expect(standard == 384)
        #expect(g.expandedMaximumWidth(outputWidth: nil) == standard, "no output known: as today")
        #expect(g.expandedMaximumWidth(outputWidth: 1280) == standard, "a narrow output keeps the standard island")
        #expect(g.expandedMaximumWidth(outputWidth: 1536) == standard)
        #expect(g.expandedMaximumWidth(outputWidth: 1920) == 480, "a quarter of 1920")
        #expect(g.expandedMaximumWidth(outputWidth: 2560) == 520, "no wider than the maximum")
        #expect(g.expandedMaximumWidth(outputWidth: 7680) == g.expandedWidestWidth)
        for nonsense in [0.0, -1920, .nan, .infinity] {
            #expect(g.expandedMaximumWidth(outputWidth: nonsense) == standard, "\(nonsense)")
        }
        // The canvas holds it with the layout's margin either side, and never shrinks.
        #expect(g.canvasWidth(outputWidth: nil) == g.canvasWidth)
        #expect(g.canvasWidth(outputWidth: 1280) == g.canvasWidth)
        #expect(g.canvasWidth(outputWidth: 1920) == 496)
        // Size= scales the bound as it scales the island.
        let large = IslandGeometry(size: .large)
        #expect(large.expandedWidestWidth == 650)
        #expect(large.expandedMaximumWidth(outputWidth: 1920) == large.canvasWidth - 16, "at large, a 1920 output's quarter is less than its standard canvas")
        #expect(large.expandedMaximumWidth(outputWidth: 3840) == 650)
    }

    static let nowPlaying: JSONObject = [
        "leading": ["type": "symbol", "name": "🎵", "priority": 1],
        "center": [
            "type": "vstack", "priority": 2, "children": [["type": "text", "template": "{{state.title}}"], ["type": "text", "template": "{{state.line}}"]],
        ],
        "trailing": ["type": "timer", "from": "{{state.startedAt}}", "countsDown": false, "priority": 0],
    ]

    @Test func theLayoutIsValid() throws {
        _ = try Layout(json: ["expanded": .object(Self.nowPlaying)])
    }

    static func expanded(on outputWidth: Double?, line: String) throws -> (island: OverlayRect, line: OverlayRect, clock: OverlayFont, canvas: Double) {
        let g = IslandGeometry.medium
        let layout = OverlayLayout(canvasWidth: g.canvasWidth(outputWidth: outputWidth), canvasHeight: 640, top: 8, metrics: FixedMetrics())
        // An hour and more of elapsed time: "1:02:33" in large digits.
        let scene = OverlayContentRuleTests.expanded(
            Self.nowPlaying, state: ["title": "Clair de Lune", "line": .string(line), "startedAt": .double(Scenes.now - 3753)])
        let frame = layout.frame(scene)
        let text = try #require(OverlayContentRuleTests.texts(frame, "expanded.center").last)
        let clock = try #require(OverlayContentRuleTests.texts(frame, "expanded.trailing").first)
        return (try #require(frame.shape("island")).rect, text.rect, clock.font, layout.canvasWidth)
    }

    @Test("on a 1920 px output, artist and album beside a large clock are whole; on a narrow one the island stays as it was")
    func nowPlayingOnAWideOutput() throws {
        let line = "Claude Debussy — Suite bergamasque, L 75"
        let natural = FixedMetrics().width(of: line, font: .body)
        let wide = try Self.expanded(on: 1920, line: line)
        #expect(wide.line.width == natural, "the line whole: \(wide.line.width) of \(natural)")
        #expect(wide.clock == .largeDigits, "and the clock keeps its large digits")
        #expect(wide.island.width > 384 && wide.island.width <= 480)
        #expect(abs(wide.island.midX - wide.canvas / 2) < 0.001, "centred in its canvas")
        let narrow = try Self.expanded(on: 1280, line: line)
        #expect(narrow.island.width <= 384, "bounded as before on a narrow output")
        #expect(narrow.line.width < natural || narrow.clock == .digits)
        // A short line never widens it, however wide the output.
        let short = try Self.expanded(on: 3840, line: "Debussy")
        #expect(short.island.width == IslandGeometry.medium.expandedWidth)
    }

    /// The widened island moves as one body like any other: in every frame of its expansion
    /// from the pill and of its collapse, no readable glyph is cut by the moving edge and the
    /// shape stays inside its canvas (OverlayMotionTests' rule, on the wide canvas, measured
    /// with Pango as the overlay measures).
    @Test(arguments: [true, false])
    func theWideIslandTravelsWithItsContent(expanding: Bool) throws {
        let painter = OverlayPainter(icons: nil)
        let layout = OverlayLayout(canvasWidth: IslandGeometry.medium.canvasWidth(outputWidth: 1920), canvasHeight: 640, top: 8, metrics: painter.metrics)
        let state: JSONObject = ["title": "Clair de Lune", "line": "Claude Debussy — Suite bergamasque, L 75", "startedAt": .double(Scenes.now - 3753)]
        let nowPlaying: JSON = [
            "compactLeading": ["type": "symbol", "name": "🎵"], "compactTrailing": ["type": "text", "template": "1:02:33"],
            "expanded": .object(Self.nowPlaying),
        ]
        let items = [Scenes.item("e", layout: nowPlaying, state: state)]
        let expanded = layout.frame(Scenes.scene(["mode": "expanded", "attached": "e", "expanded": "e"], items: items))
        let compact = layout.frame(Scenes.scene(["mode": "compact", "attached": "e"], items: items))
        #expect(try #require(expanded.shape("island")).rect.width > 384, "the island is widened")
        let frames = expanding ? OverlayMotionTests.frames(from: compact, to: expanded) : OverlayMotionTests.frames(from: expanded, to: compact)
        #expect(frames.count > 5)
        for (index, state) in frames.enumerated() {
            let island = try #require(state.shape("island")).shape.rect
            #expect(island.x >= 0 && island.maxX <= layout.canvasWidth, "frame \(index): \(island) outside the canvas")
            let cuts = painter.pieces(state).filter { $0.role != .rolling && $0.alpha > OverlayMotionTests.faint }.compactMap { piece in
                OverlayMotionTests.cut(piece, painter: painter).map { "\(piece.placed.slot) \($0)" }
            }
            #expect(cuts.isEmpty, "frame \(index): \(cuts.prefix(3))")
        }
    }
}
