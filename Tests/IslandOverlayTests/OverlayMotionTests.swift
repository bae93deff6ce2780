import CPangoCairo
import Foundation
import IslandCore
import OrderedCollections
import OrderedJSON
import IslandPresenter
import Testing
@testable import IslandOverlay

@Suite struct OverlayMotionTests {
    func frame(width: Double, height: Double, text: String = "a") -> OverlayFrame {
        OverlayFrame(
            form: .compact, listOpen: false,
            shapes: [
                OverlayShape(id: "island", kind: .island, rect: .init(x: 220 - width / 2, y: 8, width: width, height: height), radius: min(height / 2, 38))
            ],
            content: [
                OverlayPlaced(
                    rect: .init(x: 200, y: 10, width: 40, height: 20), primitive: .text(text, font: .body, ink: .primary, alignment: .leading), slot: "s")
            ],
            hits: [])
    }

    /// A little overshoot (damping ratio 0.8: about 1.5 % of the way), settled in about its
    /// response, with no second swing anyone could see.
    @Test func aSpringOvershootsALittleAndSettlesInAboutItsResponse() {
        var spring = Spring(0, response: 0.4)
        spring.target = 100
        var time = 0.0, maximum = 0.0, undershootAfterPeak = 100.0
        while !spring.isSettled && time < 3 {
            spring.step(1.0 / 60)
            time += 1.0 / 60
            if maximum > 100 { undershootAfterPeak = min(undershootAfterPeak, spring.value) }
            maximum = max(maximum, spring.value)
        }
        #expect(spring.value == 100)
        #expect(time > 0.25 && time < 1.0)
        #expect(maximum > 100.5 && maximum < 104, "overshoot \(maximum - 100) of 100")
        #expect(undershootAfterPeak > 99.5, "a visible second swing: \(undershootAfterPeak)")
    }

    /// Time is an argument: one late frame lands where sixty punctual ones do, and a frame
    /// seconds late lands on the target instead of flying off.
    @Test func aLateFrameLandsWhereManySmallOnesDo() {
        var punctual = Spring(0, response: 0.4), late = Spring(0, response: 0.4), veryLate = Spring(0, response: 0.4)
        punctual.target = 250; late.target = 250; veryLate.target = 250
        for _ in 0..<15 { punctual.step(1.0 / 60) }
        late.step(15.0 / 60)
        #expect(abs(punctual.value - late.value) < 1e-6 && abs(punctual.velocity - late.velocity) < 1e-6)
        veryLate.step(7)
        #expect(veryLate.value == 250 && veryLate.velocity == 0)
        var broken = Spring(0)
        broken.target = 10
        broken.step(.nan)
        broken.step(-1)
        #expect(broken.value == 0, "a step of no time moves nothing")
    }

    @Test func theIslandMorphsBetweenFormsAndThenStops() throws {
        var motion = OverlayMotion(enabled: true)
        motion.show(frame(width: 126, height: 37))
        #expect(!motion.isAnimating)
        motion.show(frame(width: 371, height: 160, text: "b"))
        #expect(motion.isAnimating)
        motion.step(0.1)
        let mid = try #require(motion.shapes.first).shape
        #expect(mid.rect.width > 126 && mid.rect.width < 371)
        #expect(mid.radius > 18.5 && mid.radius < 38)
        #expect(motion.fade > 0 && motion.fade < 1)
        for _ in 0..<120 { motion.step(1.0 / 60) }
        #expect(!motion.isAnimating)
        #expect(motion.shapes.first?.shape.rect.width == 371)
    }

    @Test func reducedMotionJumpsStraightToTheTarget() {
        var motion = OverlayMotion(enabled: false)
        motion.show(frame(width: 126, height: 37))
        motion.show(frame(width: 371, height: 160))
        #expect(!motion.isAnimating)
        #expect(motion.shapes.first?.shape.rect.width == 371)
        #expect(motion.neck == nil)
    }

    @Test func onlyTextThatChangedCrossfades() {
        var motion = OverlayMotion(enabled: true)
        motion.show(frame(width: 126, height: 37, text: "1:00"))
        motion.show(frame(width: 126, height: 37, text: "1:00"))
        #expect(!motion.isAnimating)
        motion.show(frame(width: 126, height: 37, text: "0:59"))
        #expect(motion.isAnimating)
        #expect(
            OverlayPainter.rolls(
                .text("1:00", font: .digits, ink: .primary, alignment: .leading), .text("0:59", font: .digits, ink: .primary, alignment: .leading)))
    }

    /// The old content has gone before the new is fully in; neither jumps.
    @Test func contentCrossfadesWithoutOverlappingAtFullStrength() {
        #expect(OverlayMotion.outgoing(0) == 1 && OverlayMotion.incoming(0) == 0)
        #expect(OverlayMotion.outgoing(1) == 0 && OverlayMotion.incoming(1) == 1)
        for step in 0...100 {
            let fade = Double(step) / 100
            #expect(OverlayMotion.outgoing(fade) + OverlayMotion.incoming(fade) <= 1.0001)
        }
    }

    // MARK: The bubble splits and merges

    /// The frames the real layout makes, measured with Pango as the overlay measures.
    struct Forms {
        let layout: OverlayLayout
        init(metrics: any TextMetrics) { layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: metrics) }

        var items: [JSON] { [Scenes.simpleItem("a"), Scenes.simpleItem("b", text: "Second", trailing: "3/5", done: 3, app: "org.example.Other")] }
        var hidden: OverlayFrame { layout.frame(Scenes.scene(["mode": "none"], items: [])) }
        var compact: OverlayFrame { layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: items)) }
        var minimal: OverlayFrame { layout.frame(Scenes.scene(["mode": "minimal", "attached": "a", "detached": "b"], items: items)) }
        var expanded: OverlayFrame { layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: items)) }
        var list: OverlayFrame { layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: items), listOpen: true) }
        /// Another activity in the place of the first: new content in much the same shape.
        var other: OverlayFrame {
            layout.frame(Scenes.scene(["mode": "compact", "attached": "c"], items: [Scenes.simpleItem("c", text: "Something wrong?", trailing: "12 min")]))
        }
    }

    /// `from` settled, then `to` shown: the motion at each 60 Hz frame until it stands still
    /// (the first as it is painted before any frame of the clock).
    static func frames(from: OverlayFrame, to: OverlayFrame) -> [OverlayMotion] {
        var motion = OverlayMotion(enabled: true)
        motion.show(from)
        motion.show(to)
        var result = [motion]
        while motion.isAnimating && result.count < 240 {
            motion.step(1.0 / 60)
            result.append(motion)
        }
        return result
    }

    @Test func theBubbleIsBornAtThePillsTrailingEndAndMovesOut() throws {
        let forms = Forms(metrics: FixedMetrics())
        let frames = Self.frames(from: forms.compact, to: forms.minimal)
        let first = try #require(frames.first)
        let island = try #require(first.shape("island")), bubble = try #require(first.shape("bubble"))
        // Inside the pill, at its trailing end, as opaque as the island: no ghost.
        #expect(bubble.shape.rect.maxX <= island.shape.rect.maxX + 0.001 && bubble.shape.rect.x >= island.shape.rect.midX)
        #expect(bubble.opacity == island.opacity)
        var necked = 0, lastX = -Double.infinity
        for motion in frames {
            let island = try #require(motion.shape("island")), bubble = try #require(motion.shape("bubble"))
            #expect(bubble.opacity == island.opacity, "the bubble is never a translucent ghost")
            let target = try #require(forms.minimal.shape("bubble"))
            #expect(bubble.shape.rect.width <= target.rect.width + 0.001 && bubble.shape.rect.height <= target.rect.height + 0.001)
            #expect(bubble.shape.rect.x >= lastX - 1, "the bubble moves out, not back and forth")
            lastX = bubble.shape.rect.x
            if motion.neck != nil { necked += 1 }
        }
        #expect(necked >= 2, "a neck joins them while they are close")
        let settled = try #require(frames.last)
        #expect(!settled.isAnimating && settled.neck == nil, "no neck on a still island")
        #expect(settled.shape("bubble")?.shape.rect == forms.minimal.shape("bubble")?.rect)
    }

    @Test func theBubbleMovesBackIntoThePillAndIsAbsorbed() throws {
        let forms = Forms(metrics: FixedMetrics())
        let frames = Self.frames(from: forms.minimal, to: forms.compact)
        var necked = 0, absorbed = false
        for motion in frames {
            let island = try #require(motion.shape("island"))
            guard let bubble = motion.shape("bubble") else {
                absorbed = true
                continue
            }
            #expect(!absorbed, "the bubble came back after it was absorbed")
            #expect(bubble.opacity == island.opacity, "the bubble is never a translucent ghost")
            if motion.neck != nil { necked += 1 }
        }
        #expect(absorbed && necked >= 2)
        #expect(frames.last?.shapes.map(\.shape.id) == ["island"])
        // When it went, it was inside the pill.
        let before = try #require(frames.last { $0.shape("bubble") != nil })
        let island = try #require(before.shape("island")).shape.rect, bubble = try #require(before.shape("bubble")).shape.rect
        #expect(bubble.x >= island.x - 0.5 && bubble.maxX <= island.maxX + 0.5)
    }

    /// The keyline is the body's outline: while the bubble is tucked in the pill (and in
    /// every frame of the split and the merge) no line is drawn inside the black. Painted
    /// without content, the middle row of every part is black from end to end.
    @Test func noKeylineIsDrawnInsideTheBody() throws {
        let painter = OverlayPainter(icons: nil)
        let forms = Forms(metrics: painter.metrics)
        let (compact, minimal) = (Owner.bare(forms.compact), Owner.bare(forms.minimal))
        for motion in Self.frames(from: compact, to: minimal) + Self.frames(from: minimal, to: compact) {
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 440, 64)!
            defer { cairo_surface_destroy(surface) }
            let cr = cairo_create(surface)!
            painter.paint(motion, cairo: cr)
            cairo_destroy(cr)
            cairo_surface_flush(surface)
            let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
            for (shape, _) in motion.shapes where shape.rect.width > 8 {
                let y = Int(shape.rect.midY)
                for x in Int(shape.rect.x) + 3..<Int(shape.rect.maxX) - 3 {
                    let pixel = data.advanced(by: y * stride + x * 4)
                    #expect(pixel[3] > 240 && pixel[2] < 30, "inside \(shape.id) at \(x),\(y): alpha \(pixel[3]), red \(pixel[2])")
                }
            }
        }
    }

    /// Between the pill and the bubble, while they are apart and close, the neck is drawn in
    /// the island's colour; once it has snapped, the desktop shows there.
    @Test func theNeckIsDrawnInTheIslandsColourBetweenThem() throws {
        let painter = OverlayPainter(icons: nil)
        let forms = Forms(metrics: painter.metrics)
        var necked = 0, snapped = 0
        for motion in Self.frames(from: forms.compact, to: forms.minimal) {
            let island = try #require(motion.shape("island")).shape.rect, bubble = try #require(motion.shape("bubble")).shape.rect
            guard bubble.x - island.maxX >= 2 else { continue }
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 440, 64)!
            let cr = cairo_create(surface)!
            painter.paint(motion, cairo: cr)
            cairo_destroy(cr)
            cairo_surface_flush(surface)
            let x = Int((island.maxX + bubble.x) / 2), y = Int(island.midY)
            let pixel = cairo_image_surface_get_data(surface)!.advanced(by: y * Int(cairo_image_surface_get_stride(surface)) + x * 4)
            let (alpha, red) = (pixel[3], pixel[2])
            cairo_surface_destroy(surface)
            if motion.neck != nil {
                #expect(alpha > 200 && red < 40, "the neck at \(x),\(y) is alpha \(alpha), red \(red)")
                necked += 1
            } else {
                #expect(alpha == 0, "nothing between them once the neck has snapped")
                snapped += 1
            }
        }
        #expect(necked >= 1 && snapped >= 1)
    }

    // MARK: Content stays in its shape (docs/design.md §10, Motion)

    /// Paints every frame of each motion with the real painter into an image and fails if any
    /// pixel of content lies outside the shape that content belongs to, as that shape is at
    /// that frame, inside its keyline (with 1 px for antialiasing), or is more opaque than its
    /// shape is then. The shapes are painted with no colour, so what is painted is content and
    /// keylines; the same motion without content gives the keylines alone. Each kind of content
    /// (the island's, the bubble's, the list's) is checked on its own: content in the wrong
    /// shape is as wrong as content over the wallpaper.
    @Test(arguments: [
        "compact>expanded", "expanded>compact", "compact>minimal", "minimal>compact", "minimal>expanded",
        "expanded>minimal", "hidden>compact", "compact>hidden", "compact>list", "list>compact", "hidden>expanded",
    ])
    func contentNeverShowsOutsideItsShape(_ motion: String) throws {
        let painter = OverlayPainter(style: Self.invisibleShapes, icons: nil)
        let forms = Forms(metrics: painter.metrics)
        let named = ["hidden": forms.hidden, "compact": forms.compact, "minimal": forms.minimal, "expanded": forms.expanded, "list": forms.list]
        let ends = motion.split(separator: ">").map(String.init)
        let from = try #require(named[ends[0]]), to = try #require(named[ends[1]])
        let bare = Self.frames(from: Owner.bare(from), to: Owner.bare(to))
        for owner in Owner.allCases {
            let frames = Self.frames(from: owner.only(from), to: owner.only(to))
            #expect(frames.count > 5 && frames.count < 120, "\(motion): \(frames.count) frames")
            for (index, state) in frames.enumerated() {
                let keylines = bare[min(index, bare.count - 1)]
                let problems = Self.contentOutside(owner, state, keylines: keylines, painter: painter)
                #expect(
                    problems.isEmpty, "\(motion), \(owner)'s content, frame \(index) (+\(index * 1000 / 60) ms): \(problems.prefix(3).joined(separator: "; "))")
                if !problems.isEmpty { break }
            }
        }
    }

    // MARK: Content travels with its shape

    /// Below this opacity a piece of content is faint: a glyph cut while it is fainter than
    /// this, or two layouts on top of each other this faint, are not read.
    static let faint = 0.05

    /// Paints every frame of each motion and fails when a glyph is cut by a moving edge while
    /// it can be read, or when the old and the new layout sit on top of each other, both
    /// readable, for more than one frame. A piece is cut when any of its pixels, drawn as it is
    /// drawn in that frame but without the clip, lies outside its shape (grown by 1 px for
    /// antialiasing) at more than a faint opacity. A number rolling in its slot is left out:
    /// its window is meant to cut it.
    @Test(arguments: [
        "compact>expanded", "expanded>compact", "compact>minimal", "minimal>compact", "minimal>expanded",
        "expanded>minimal", "hidden>compact", "compact>hidden", "compact>list", "list>compact", "hidden>expanded",
        "compact>other", "expanded>other",
    ])
    func contentTravelsWithItsShape(_ motion: String) throws {
        let painter = OverlayPainter(icons: nil)
        let forms = Forms(metrics: painter.metrics)
        let named = [
            "hidden": forms.hidden, "compact": forms.compact, "minimal": forms.minimal, "expanded": forms.expanded,
            "list": forms.list, "other": forms.other,
        ]
        let ends = motion.split(separator: ">").map(String.init)
        let from = try #require(named[ends[0]]), to = try #require(named[ends[1]])
        var overlapping: [Int] = []
        for (index, state) in Self.frames(from: from, to: to).enumerated() {
            let pieces = painter.pieces(state)
            let cuts = pieces.filter { $0.role != .rolling && $0.alpha > Self.faint }.compactMap { piece in
                Self.cut(piece, painter: painter).map { "\(piece.placed.slot) (\(piece.role), alpha \(String(format: "%.2f", piece.alpha))) \($0)" }
            }
            #expect(cuts.isEmpty, "\(motion), frame \(index) (+\(index * 1000 / 60) ms): cut by its shape's edge: \(cuts.prefix(3).joined(separator: "; "))")
            let outgoing = pieces.filter { $0.role == .outgoing && $0.alpha > Self.faint }
            let incoming = pieces.filter { $0.role == .incoming && $0.alpha > Self.faint }
            if outgoing.contains(where: { old in incoming.contains { !$0.rect.intersection(old.rect).isEmpty } }) { overlapping.append(index) }
        }
        #expect(overlapping.count <= 1, "\(motion): the old and the new layout on top of each other in frames \(overlapping)")
    }

    @Test func theIslandArrivesAsAnOpaqueShapeGrowingFromAPoint() throws {
        let forms = Forms(metrics: FixedMetrics())
        let frames = Self.frames(from: forms.hidden, to: forms.compact)
        let first = try #require(frames.first?.shape("island"))
        #expect(first.opacity == 1, "no translucent blob")
        #expect(first.shape.rect.width <= 6 && first.shape.rect.height <= 6, "a point: \(first.shape.rect)")
        var lastWidth = 0.0
        for motion in frames.prefix(8) {
            let island = try #require(motion.shape("island"))
            #expect(island.opacity == 1)
            #expect(island.shape.rect.width >= lastWidth, "it grows")
            lastWidth = island.shape.rect.width
        }
    }

    /// The list comes out from under the island as one body: the panel starts as the island
    /// and as opaque, and every card keeps its place in the panel in proportion in every frame.
    @Test func theListGrowsOutOfTheIslandAsOneBody() throws {
        let forms = Forms(metrics: FixedMetrics())
        for (from, to) in [(forms.compact, forms.list), (forms.list, forms.compact)] {
            let frames = Self.frames(from: from, to: to)
            let island = try #require(forms.compact.shape("island")).rect
            let panelTarget = try #require(forms.list.shape("panel")).rect
            for motion in frames {
                guard let panel = motion.shape("panel") else { continue }
                #expect(panel.opacity == 1, "the panel is as opaque as the island, never a translucent slab")
                for card in motion.shapes where card.shape.kind == .card {
                    let target = try #require(forms.list.shape(card.shape.id)).rect
                    let expected = OverlayMotion.mapped(target, from: panelTarget, to: panel.shape.rect)
                    #expect(
                        abs(card.shape.rect.y - expected.y) < 0.5 && abs(card.shape.rect.height - expected.height) < 0.5,
                        "\(card.shape.id) at \(card.shape.rect), the panel's proportion puts it at \(expected)")
                }
            }
            if from == forms.compact {
                let start = try #require(frames.first?.shape("panel")).shape.rect
                #expect(start == island, "the panel starts as the island: \(start)")
            }
        }
    }

    /// Where `piece`, drawn without its clip, shows outside its shape grown by 1 px at more than
    /// a faint opacity ("at x,y alpha a"); nil when it is whole.
    static func cut(_ piece: OverlayPainter.DrawnPiece, painter: OverlayPainter) -> String? {
        let r = piece.rect
        // Ink may reach past the placed rectangle (a glyph's overhang): look well around it.
        let x0 = Int((r.x - r.width * 0.25 - 8).rounded(.down)), y0 = Int((r.y - r.height * 0.5 - 8).rounded(.down))
        let width = Int(r.width * 1.5 + 16) + 2, height = Int(r.height * 2 + 16) + 2
        guard width > 0, height > 0, width < 4000, height < 4000 else { return nil }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        cairo_translate(cr, -Double(x0), -Double(y0))
        // Only what lies outside the shape (grown by 1 px) is painted.
        cairo_new_path(cr)
        cairo_rectangle(cr, -1e5, -1e5, 2e5, 2e5)
        painter.contentPath(piece.shape, grownBy: 1, cr: cr)
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
        cairo_clip(cr)
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
        painter.draw(piece, hovered: nil, scale: 1, cr: cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        let data = UnsafeRawPointer(cairo_image_surface_get_data(surface)!), stride = Int(cairo_image_surface_get_stride(surface))
        for y in 0..<height {
            for x in 0..<width {
                let alpha = Double(data.load(fromByteOffset: y * stride + x * 4 + 3, as: UInt8.self)) / 255
                if alpha > faint { return "at \(x + x0),\(y + y0) alpha \(String(format: "%.2f", alpha))" }
            }
        }
        return nil
    }

    /// The shapes drawn with no colour at all (and no keylines in the frames): what remains is content.
    static var invisibleShapes: OverlayStyle {
        var style = OverlayStyle()
        style.background = style.background.with(alpha: 0)
        style.panel = style.panel.with(alpha: 0)
        style.card = style.card.with(alpha: 0)
        return style
    }

    /// Whose content a check keeps, by the slots the layout names.
    enum Owner: String, CaseIterable, CustomStringConvertible {
        case island, bubble, list
        var description: String { rawValue }

        func owns(_ placed: OverlayPlaced) -> Bool {
            switch self {
            case .bubble: placed.slot.hasPrefix("minimal.detached")
            case .list: placed.slot.hasPrefix("list.")
            case .island: !placed.slot.hasPrefix("minimal.detached") && !placed.slot.hasPrefix("list.")
            }
        }

        func holds(_ shape: OverlayShape) -> Bool {
            switch self {
            case .island: shape.kind == .island
            case .bubble: shape.kind == .bubble
            case .list: shape.kind == .panel || shape.kind == .card
            }
        }

        /// `frame` with only this owner's content, and no card tints (they are shapes).
        func only(_ frame: OverlayFrame) -> OverlayFrame {
            var bare = Self.bare(frame)
            bare.content = frame.content.filter(owns)
            return bare
        }

        /// `frame` with its content as it is, no card tints.
        static func bare(_ frame: OverlayFrame) -> OverlayFrame {
            var frame = frame
            frame.content = []
            frame.shapes = frame.shapes.map { shape in
                var shape = shape
                shape.fill = nil
                return shape
            }
            return frame
        }
    }

    /// Where `owner`'s content lies outside its shapes, inside their keylines (or is more
    /// opaque than they are) in the motion's current state, as "x,y alpha a > allowed b"
    /// descriptions. `keylines` is the same moment with no content.
    static func contentOutside(_ owner: Owner, _ motion: OverlayMotion, keylines: OverlayMotion, painter: OverlayPainter) -> [String] {
        // Every piece of content is placed inside its own frame's shapes: below them nothing
        // can be drawn, so the images end a little below the lowest.
        let lowest = ([motion.target, motion.previous, keylines.target].compactMap { $0?.bounds.maxY } + motion.shapes.map(\.shape.rect.maxY)).max() ?? 0
        let width = 440, height = min(640, Int(lowest) + 24)
        func paint(_ motion: OverlayMotion) -> OpaquePointer {
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
            let cr = cairo_create(surface)!
            painter.paint(motion, cairo: cr)
            cairo_destroy(cr)
            cairo_surface_flush(surface)
            return surface
        }
        let surface = paint(motion), bare = paint(keylines)
        defer { cairo_surface_destroy(surface); cairo_surface_destroy(bare) }
        // What each pixel may hold: its shape's opacity where one of the owner's shapes covers
        // it inside its keyline (whole pixels, rounded outwards: the input region's rows),
        // nothing elsewhere.
        var allowed = [Double](repeating: 0, count: width * height)
        for (shape, opacity) in motion.shapes where owner.holds(shape) {
            var inside = shape
            inside.kind = .island
            if shape.keyline != nil {
                let k = OverlayPainter.keylineWidth
                inside.rect = .init(
                    x: shape.rect.x + k, y: shape.rect.y + k, width: max(0, shape.rect.width - 2 * k), height: max(0, shape.rect.height - 2 * k))
                inside.radius = max(0, shape.radius - k)
            }
            for row in OverlayLayout.pixelRows([inside]) {
                for y in max(0, Int(row.y))..<min(height, Int(row.maxY)) {
                    for x in max(0, Int(row.x))..<min(width, Int(row.maxX)) { allowed[y * width + x] = max(allowed[y * width + x], opacity) }
                }
            }
        }
        let bareData = UnsafeRawPointer(cairo_image_surface_get_data(bare)!)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = UnsafeRawPointer(cairo_image_surface_get_data(surface)!)
        var problems: [String] = []
        for y in 0..<height {
            // Most rows hold no content: a row the same in both images is passed over whole
            // (per pixel, this loop was a tenth of the Swift suites' CPU in a debug build).
            guard memcmp(data + y * stride, bareData + y * stride, width * 4) != 0 else { continue }
            for x in 0..<width {
                // Content is where the frame differs from the same moment without content (over
                // a keyline too): by as much as its most changed channel (premultiplied ARGB32).
                let offset = y * stride + x * 4
                guard data.load(fromByteOffset: offset, as: UInt32.self) != bareData.load(fromByteOffset: offset, as: UInt32.self) else { continue }
                var alpha = 0.0
                for channel in 0..<4 {
                    alpha = max(
                        alpha,
                        abs(
                            Double(data.load(fromByteOffset: offset + channel, as: UInt8.self))
                                - Double(bareData.load(fromByteOffset: offset + channel, as: UInt8.self))) / 255)
                }
                guard alpha > 0.06 else { continue }
                // 1 px of antialiasing around each shape.
                var bound = 0.0
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) { bound = max(bound, allowed[ny * width + nx]) }
                }
                if alpha > bound + 0.06 {
                    problems.append("\(x),\(y) alpha \(String(format: "%.2f", alpha)) > allowed \(String(format: "%.2f", bound))")
                    if problems.count >= 10 { return problems }
                }
            }
        }
        return problems
    }
}
