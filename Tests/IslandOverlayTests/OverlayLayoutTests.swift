import IslandCore
import OrderedJSON
import IslandPresenter
import OrderedCollections
import Testing
@testable import IslandOverlay

/// Text as wide as its characters: 7 px each, so widths are predictable.
struct FixedMetrics: TextMetrics {
    func width(of text: String, font: OverlayFont) -> Double { Double(text.count) * 7 }
}

enum Scenes {
    static let now = 1_000_000.0

    static func item(_ id: String, app: String = "org.example.App", layout: JSON, state: JSONObject = [:], createdAt: Double = now) -> JSON {
        [
            "id": .string(id), "app": .string(app), "type": "T", "attributes": [:], "content": ["state": .object(state)],
            "state": "active", "createdAt": .double(createdAt), "layout": layout, "defaultLayout": false,
        ]
    }

    static func scene(_ island: JSONObject, items: [JSON], alert: JSON? = nil) -> IslandScene {
        var model = PresenterModel()
        var island = island
        if island["lockScreen"] == nil { island["lockScreen"] = .array(items.compactMap { $0["id"] }) }
        model.apply(["kind": "snapshot", "sequence": 1, "resync": false, "island": .object(island), "items": .array(items), "removed": []])
        if let alert { model.apply(["kind": "delta", "sequence": 2, "resync": false, "items": [], "removed": [], "alert": alert]) }
        return IslandScene(model: model, now: now)
    }

    static let simple: JSON = [
        "url": "https://example.org/whole",
        "keylineTint": "#ff9500",
        "compactLeading": ["type": "symbol", "name": "☕"],
        "compactTrailing": ["type": "text", "template": "{{state.trailing}}"],
        "minimal": ["type": "progress", "value": "{{state.done}}", "total": 4],
        "lockScreen": [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "Order {{state.text}}"],
                ["type": "progress", "value": "{{state.done}}", "total": 4],
            ],
        ],
        "expanded": [
            "leading": ["type": "symbol", "name": "☕", "priority": 1],
            "center": ["type": "text", "template": "{{state.text}}", "priority": 2],
            "trailing": ["type": "text", "template": "{{state.trailing}}", "priority": 0, "belowIfTooWide": true],
            "bottom": [
                "type": "hstack", "priority": 0,
                "children": [
                    ["type": "button", "action": "pause", "label": "Pause"],
                    ["type": "link", "url": "https://example.org/help", "child": ["type": "text", "template": "Help"]],
                    ["type": "button", "action": "stop", "label": "Stop"],
                ],
            ],
        ],
    ]

    static func simpleItem(_ id: String = "a", text: String = "Brewing", trailing: String = "7 min", done: Double = 1, app: String = "org.example.App") -> JSON
    {
        item(id, app: app, layout: simple, state: ["text": .string(text), "trailing": .string(trailing), "done": .double(done)])
    }
}

@Suite struct OverlayLayoutTests {
    let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics())

    @Test func hiddenDrawsNothingAndLetsClicksThrough() {
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: []))
        expectForm(frame.form, .hidden)
        #expect(frame.shapes.isEmpty)
        #expect(frame.bounds.isEmpty)
        expectTarget(frame.target(x: 220, y: 20), .outside)
    }

    @Test func compactIsACentredPillThatExpandsWhenClicked() throws {
        let frame = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem()]))
        expectForm(frame.form, .compact)
        let island = try #require(frame.shape("island"))
        #expect(island.rect.height == OverlayLayout.pillHeight)
        #expect(island.radius == OverlayLayout.pillHeight / 2)
        #expect(island.rect.width >= layout.geometry.compactMinimumWidth)
        #expect(abs(island.rect.midX - 220) < 0.001)
        #expect(island.rect.y == 8)
        #expect(island.keyline == LayoutColor(hex: "#ff9500"))
        expectTarget(frame.target(x: island.rect.midX, y: island.rect.midY), .expand(id: "a"))
        expectTarget(frame.target(x: island.rect.maxX + 2, y: island.rect.midY), .outside)
        // Leading on the left, trailing on the right, both inside the pill.
        let texts = frame.content.compactMap { placed -> (String, OverlayRect)? in
            if case .text(let text, _, _, _) = placed.primitive { (text, placed.rect) } else { nil }
        }
        let trailing = try #require(texts.first { $0.0 == "7 min" })
        #expect(trailing.1.maxX <= island.rect.maxX - 10)
        let symbol = try #require(frame.content.first { $0.primitive == .symbol("☕") })
        #expect(symbol.rect.x >= island.rect.x + layout.geometry.compactSymbolInset - 0.001 && symbol.rect.maxX < trailing.1.x)
    }

    @Test func compactGrowsWithItsContentUpToACap() throws {
        let short = try #require(
            layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: "7 min")])).shape("island"))
        let longer = try #require(
            layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: "About twenty minutes")])).shape("island"))
        let huge = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: String(repeating: "x", count: 5000))]))
        let hugeIsland = try #require(huge.shape("island"))
        #expect(longer.rect.width > short.rect.width)
        #expect(hugeIsland.rect.width == layout.geometry.compactMaximumWidth)
        // Nothing placed outside the pill: the text is ellipsized to its region.
        for placed in huge.content {
            #expect(placed.rect.x >= hugeIsland.rect.x && placed.rect.maxX <= hugeIsland.rect.maxX + 0.001)
        }
    }

    @Test func minimalIsTheCompactPillAndADetachedCircle() throws {
        let items = [Scenes.simpleItem("a"), Scenes.simpleItem("b", app: "org.example.Other")]
        let frame = layout.frame(Scenes.scene(["mode": "minimal", "attached": "a", "detached": "b"], items: items))
        expectForm(frame.form, .minimal)
        let island = try #require(frame.shape("island")), bubble = try #require(frame.shape("bubble"))
        #expect(bubble.rect.width == OverlayLayout.pillHeight && bubble.rect.height == OverlayLayout.pillHeight)
        #expect(bubble.radius == bubble.rect.height / 2)
        #expect(bubble.rect.x == island.rect.maxX + layout.geometry.bubbleGap)
        expectTarget(frame.target(x: bubble.rect.midX, y: bubble.rect.midY), .expand(id: "b"))
        expectTarget(frame.target(x: island.rect.midX, y: island.rect.midY), .expand(id: "a"))
        // The pill shows the attached activity as compact does; a progress as the detached
        // one's minimal view is a ring in the bubble.
        let compact = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: items))
        #expect(island == compact.shape("island"))
        let rings = frame.content.filter { if case .ring = $0.primitive { true } else { false } }
        #expect(rings.count == 1)
        #expect(rings.allSatisfy { bubble.rect.contains(x: $0.rect.midX, y: $0.rect.midY) })
    }

    @Test func expandedPlacesRegionsAndButtonsAndTaps() throws {
        let frame = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem()]))
        expectForm(frame.form, .expanded)
        let island = try #require(frame.shape("island"))
        #expect(island.rect.width == layout.geometry.expandedWidth)
        #expect(island.rect.height > layout.geometry.pillHeight)
        let buttons = frame.content.filter { if case .button = $0.primitive { true } else { false } }
        #expect(buttons.count == 2)
        let pause = try #require(buttons.first { if case .button("pause", _, _) = $0.primitive { true } else { false } })
        expectTarget(frame.target(x: pause.rect.midX, y: pause.rect.midY), .button(id: "a", action: "pause"))
        // The link opens its own URL; the rest of the island taps with the layout's.
        let help = try #require(frame.content.first { $0.primitive == .text("Help", font: .body, ink: .primary, alignment: .leading) })
        expectTarget(frame.target(x: help.rect.midX, y: help.rect.midY), .tap(id: "a", url: "https://example.org/help"))
        expectTarget(frame.target(x: island.rect.x + 12, y: island.rect.midY), .tap(id: "a", url: "https://example.org/whole"))
        // Centre text centred on the island.
        let center = try #require(frame.content.first { $0.slot.hasPrefix("expanded.center") })
        #expect(abs(center.rect.midX - island.rect.midX) < 1)
    }

    @Test func aTrailingRegionThatIsTooWideGoesBelowTheCentre() throws {
        let wide = String(repeating: "w", count: 40)
        let frame = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem(trailing: wide)]))
        let center = try #require(frame.content.first { $0.slot.hasPrefix("expanded.center") })
        let trailing = try #require(frame.content.first { $0.slot.hasPrefix("expanded.trailing") })
        #expect(trailing.rect.y > center.rect.maxY - 0.001)
        let narrow = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem(trailing: "7 min")]))
        let c2 = try #require(narrow.content.first { $0.slot.hasPrefix("expanded.center") })
        let t2 = try #require(narrow.content.first { $0.slot.hasPrefix("expanded.trailing") })
        #expect(t2.rect.y == c2.rect.y)
    }

    @Test func priorityDecidesWhoKeepsItsWidth() {
        let region = { (text: String, priority: Double) in RenderedRegion(view: .text(text), priority: priority) }
        let long = String(repeating: "a", count: 60)  // 420 px: more than the row
        let row = layout.allocateTopRow([(.leading, region(long, 2)), (.center, region("Centre", 1))], room: 300, gap: 10)
        let centerFirst = layout.allocateTopRow([(.leading, region(long, 0)), (.center, region("Centre", 1))], room: 300, gap: 10)
        #expect(row.widths[.leading]! > centerFirst.widths[.leading]!)
        #expect(centerFirst.widths[.center] == 42)
        #expect(row.widths[.center]! <= 42)
        // Typed apart: inside one #expect, this sum took 4.4 s to type-check.
        let leading: Double = row.widths[.leading] ?? 0, center: Double = row.widths[.center] ?? 0
        #expect(leading + center + 10 <= 300)
    }

    @Test func anAlertShowsItsTitleAndBody() throws {
        let frame = layout.frame(
            Scenes.scene(
                ["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem()],
                alert: ["id": "a", "title": "Ready\nnow", "body": "Pick it up"]))
        expectForm(frame.form, .alert)
        let texts = frame.content.compactMap { if case .text(let text, _, _, _) = $0.primitive { text } else { nil } }
        #expect(texts.contains("Ready now"))
        #expect(texts.contains("Pick it up"))
        let island = try #require(frame.shape("island"))
        expectTarget(frame.target(x: island.rect.midX, y: island.rect.midY), .tap(id: "a", url: "https://example.org/whole"))
    }

    @Test func theListIsAPanelUnderTheIslandWithDismissButtons() throws {
        let items = (0..<3).map { Scenes.simpleItem("i\($0)") }
        let frame = layout.frame(Scenes.scene(["mode": "compact", "attached": "i0"], items: items), listOpen: true)
        let island = try #require(frame.shape("island")), panel = try #require(frame.shape("panel"))
        #expect(panel.rect.y > island.rect.maxY)
        let cards = frame.shapes.filter { $0.kind == .card }
        #expect(cards.count == 3)
        for card in cards { #expect(card.rect.y >= panel.rect.y && card.rect.maxY <= panel.rect.maxY) }
        let dismisses = frame.content.filter { $0.primitive == .dismiss }
        #expect(dismisses.count == 3)
        expectTarget(frame.target(x: dismisses[1].rect.midX, y: dismisses[1].rect.midY), .dismiss(id: "i1"))
        expectTarget(frame.target(x: cards[2].rect.x + 20, y: cards[2].rect.maxY - 6), .expand(id: "i2"))
        expectTarget(frame.target(x: panel.rect.midX, y: panel.rect.maxY - 2), .list)
        // Closed, it is gone.
        #expect(layout.frame(Scenes.scene(["mode": "compact", "attached": "i0"], items: items)).shape("panel") == nil)
    }

    @Test func groupsAreHeadedByTheAppsNameAndIcon() throws {
        guard case .object(var named) = Scenes.simpleItem("n", app: "org.example.Coffee") else { Issue.record("not an object"); return }
        named["appName"] = "Coffee Shop"
        named["appIcon"] = "battery-good-symbolic"
        guard case .object(var pathIcon) = Scenes.simpleItem("p") else { return }
        pathIcon["appIcon"] = "/etc/passwd"
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: [.object(named), .object(pathIcon)]), listOpen: true)
        let headings = frame.content.filter { $0.slot.hasSuffix(".heading") }.compactMap { if case .text(let t, _, _, _) = $0.primitive { t } else { nil } }
        #expect(headings == ["Coffee Shop", "org.example.App"])
        let icons = frame.content.filter { $0.slot.hasSuffix(".icon") }
        #expect(icons.map(\.primitive) == [.symbol("battery-good-symbolic")])
    }

    @Test func theListGroupsByAppNewestFirst() throws {
        let items = [
            Scenes.simpleItem("a1", app: "org.example.A").with(createdAt: 100), Scenes.simpleItem("b1", app: "org.example.B").with(createdAt: 300),
            Scenes.simpleItem("a2", app: "org.example.A").with(createdAt: 200), Scenes.simpleItem("c1", app: "org.example.C").with(createdAt: 50),
        ]
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: items), listOpen: true)
        let headings = frame.content.filter { $0.slot.hasSuffix(".heading") }
        #expect(headings.compactMap { if case .text(let t, _, _, _) = $0.primitive { t } else { nil } } == ["org.example.B", "org.example.A", "org.example.C"])
        // Top to bottom: B's card, A's heading, A's newest card, then its older one, then C.
        let cards = frame.shapes.filter { $0.kind == .card }
        #expect(cards.map(\.id) == ["card.b1", "card.a2", "card.a1", "card.c1"])
        #expect(zip(cards, cards.dropFirst()).allSatisfy { $0.rect.maxY < $1.rect.y })
        #expect(headings[1].rect.y > cards[0].rect.maxY && headings[1].rect.maxY <= cards[1].rect.y)
        // The two cards of one app are one group: no heading between them.
        #expect(!headings.contains { $0.rect.y > cards[1].rect.y && $0.rect.y < cards[2].rect.y })
    }

    @Test func aBridgesCardsAreGroupedByTheAppItSpeaksForAndSayWhatTheyCameThrough() throws {
        func bridged(_ id: String, source: String?, name: String) -> JSON {
            guard case .object(var item) = Scenes.simpleItem(id, app: "org.island.bridge") else { return .null }
            item["appName"] = .string(name)
            item["producerName"] = "Island Bridge"
            if let source { item["sourceApp"] = .string(source) }
            return .object(item)
        }
        let items = [
            bridged("m", source: "mpv", name: "mpv Media Player"), bridged("f", source: "firefox", name: "Firefox"),
            bridged("u", source: nil, name: "Island Bridge"),
        ]
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: items), listOpen: true)
        let headings = frame.content.filter { $0.slot.hasSuffix(".heading") }.compactMap { if case .text(let t, _, _, _) = $0.primitive { t } else { nil } }
        #expect(headings == ["\u{2068}mpv Media Player\u{2069} · via Island Bridge", "\u{2068}Firefox\u{2069} · via Island Bridge", "Island Bridge"])
    }

    @Test func aCardsDismissIsABigEnoughTargetOnThatCardAlone() throws {
        let items = (0..<2).map { Scenes.simpleItem("i\($0)") }
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: items), listOpen: true)
        let g = layout.geometry
        for id in ["i0", "i1"] {
            let card = try #require(frame.shape("card.\(id)")).rect
            let drawn = try #require(frame.content.first { $0.slot == "list.\(id).dismiss" }).rect
            let target = try #require(frame.hits.first { $0.target == .dismiss(id: id) }).rect
            #expect(drawn.width >= 24 && target.width >= g.dismissTarget - 0.001 && target.height >= 32)
            #expect(target.contains(x: drawn.midX, y: drawn.midY))
            #expect(card.intersection(target) == target, "the target stays on its own card")
            // A click a little off the drawn circle still dismisses.
            expectTarget(frame.target(x: drawn.minX - 4, y: drawn.maxY + 4), .dismiss(id: id))
        }
    }

    @Test func aLongListStopsAtTheCanvasAndCountsTheRest() {
        let items = (0..<40).map { Scenes.simpleItem("i\($0)") }
        let short = OverlayLayout(canvasWidth: 440, canvasHeight: 400, top: 8, metrics: FixedMetrics())
        let frame = short.frame(Scenes.scene(["mode": "none"], items: items), listOpen: true)
        #expect(frame.bounds.maxY <= 400)
        let cards = frame.shapes.filter { $0.kind == .card }.count
        #expect(cards > 0 && cards < 40)
        #expect(frame.content.contains { $0.primitive == .text("\(40 - cards) more", font: .caption, ink: .secondary, alignment: .center) })
    }

    @Test func hostileValuesNeitherCrashNorEscapeTheirRegion() throws {
        let hostile: JSON = [
            "compactLeading": ["type": "text", "template": "{{state.text}}"],
            "compactTrailing": ["type": "progress", "value": "{{state.big}}", "total": "{{state.nan}}"],
            "expanded": [
                "bottom": [
                    "type": "vstack", "priority": 0, "spacing": 1e300,
                    "children": [
                        [
                            "type": "progress", "value": "{{state.big}}", "total": 1e-300, "segments": [["length": 1e300], ["length": 1e300]],
                            "points": [["position": 1e300]],
                        ],
                        ["type": "text", "template": "{{state.text}}"],
                    ],
                ]
            ],
        ]
        _ = try Layout(json: hostile)
        let text = "<b>\u{1B}]0;x\u{07}\n" + String(repeating: "🍕", count: 20_000)
        let item = Scenes.item("h", layout: hostile, state: ["text": .string(text), "big": 1e300, "nan": "NaN"])
        for island: JSONObject in [["mode": "compact", "attached": "h"], ["mode": "expanded", "attached": "h", "expanded": "h"]] {
            let frame = layout.frame(Scenes.scene(island, items: [item]), listOpen: true)
            for placed in frame.content {
                #expect(placed.rect.x.isFinite && placed.rect.width.isFinite && placed.rect.height.isFinite)
                if case .text(let line, _, _, _) = placed.primitive {
                    #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
                    #expect(line.unicodeScalars.count <= 513)
                }
            }
        }
    }
}

extension JSON {
    func with(createdAt: Double) -> JSON {
        guard case .object(var object) = self else { return self }
        object["createdAt"] = .double(createdAt)
        return .object(object)
    }
}

extension OverlayRect {
    var minX: Double { x }
}

/// The content rules of the desktop island (docs/design.md §10), with text 7 px a character.
@Suite struct OverlayContentRuleTests {
    let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics())

    static func texts(_ frame: OverlayFrame, _ prefix: String) -> [(text: String, font: OverlayFont, ink: OverlayInk, rect: OverlayRect)] {
        frame.content.filter { $0.slot.hasPrefix(prefix) }.compactMap {
            if case .text(let text, let font, let ink, _) = $0.primitive { (text, font, ink, $0.rect) } else { nil }
        }
    }

    static func expanded(_ regions: JSONObject, state: JSONObject = [:]) -> IslandScene {
        let layout: JSON = ["compactLeading": ["type": "text", "template": "x"], "expanded": .object(regions)]
        return Scenes.scene(["mode": "expanded", "attached": "e", "expanded": "e"], items: [Scenes.item("e", layout: layout, state: state)])
    }

    @Test func aVstackInAnExpandedRegionKeepsItsLinesTitleOverSubtitle() throws {
        let scene = Self.expanded([
            "leading": ["type": "symbol", "name": "🎵", "priority": 1],
            "center": [
                "type": "vstack", "priority": 2,
                "children": [
                    ["type": "text", "template": "Clair de Lune"], ["type": "text", "template": "Debussy — Suite bergamasque"],
                ],
            ],
        ])
        let frame = layout.frame(scene)
        let lines = Self.texts(frame, "expanded.center")
        #expect(lines.map(\.text) == ["Clair de Lune", "Debussy — Suite bergamasque"])
        #expect(!lines.contains { $0.text == "·" })
        #expect(lines[0].rect.maxY <= lines[1].rect.y + 0.001, "the subtitle is under the title")
        #expect(lines[0].font == .title && lines[0].ink == .primary)
        #expect(lines[1].ink == .secondary)
        #expect(abs(lines[0].rect.x - lines[1].rect.x) < 0.001)
    }

    @Test func aShortTrailingValueIsNeverCutTheCentreGivesWayFirst() throws {
        let long = String(repeating: "Downloading a very long file name ", count: 4)
        for (short, center, trailing): (String, Double, Double) in [("35%", 2, 1), ("35%", 2, 0), ("35%", 5, 0), ("1:02:45", 2, 1), ("100%", 9, 0)] {
            let scene = Self.expanded(
                [
                    "leading": ["type": "symbol", "name": "📥", "priority": 1],
                    "center": ["type": "text", "template": "{{state.title}}", "priority": .double(center)],
                    "trailing": ["type": "text", "template": .string(short), "priority": .double(trailing)],
                ], state: ["title": .string(long)])
            let frame = layout.frame(scene)
            let value = try #require(Self.texts(frame, "expanded.trailing").first)
            #expect(value.text == short)
            #expect(value.rect.width >= FixedMetrics().width(of: short, font: .body), "\(short) was given \(value.rect.width) px")
            let title = try #require(Self.texts(frame, "expanded.center").first)
            #expect(title.rect.maxX <= value.rect.x, "the centre ends before the value")
            #expect(title.rect.width < FixedMetrics().width(of: long, font: .title), "the centre is the one cut")
        }
    }

    @Test func anExpandedTimerIsDrawnInLargeTabularDigits() throws {
        let scene = Self.expanded(
            [
                "center": ["type": "text", "template": "Tea", "priority": 1],
                "trailing": ["type": "timer", "to": "{{state.endsAt}}", "priority": 1],
            ], state: ["endsAt": .double(Scenes.now + 299)])
        let timer = try #require(Self.texts(layout.frame(scene), "expanded.trailing").first)
        #expect(timer.text == "4:59" && timer.font == .largeDigits)
        let title = try #require(Self.texts(layout.frame(scene), "expanded.center").first)
        #expect(timer.rect.height > title.rect.height)
        #expect(layout.geometry.fontSize(.largeDigits) >= 1.6 * layout.geometry.fontSize(.body))
    }

    @Test func theMinimalBubbleIsACircleOfAtMost45AndScalesWithSize() throws {
        let items = [Scenes.simpleItem("a"), Scenes.simpleItem("b", app: "org.example.Other")]
        let scene = Scenes.scene(["mode": "minimal", "attached": "a", "detached": "b"], items: items)
        var diameters: [IslandGeometry.Size: Double] = [:]
        for size in IslandGeometry.Size.allCases {
            let sized = OverlayLayout(top: 8, geometry: IslandGeometry(size: size), metrics: FixedMetrics())
            let bubble = try #require(sized.frame(scene).shape("bubble"))
            #expect(bubble.rect.width == bubble.rect.height && bubble.radius == bubble.rect.width / 2, "a true circle at \(size)")
            diameters[size] = bubble.rect.width
        }
        #expect(diameters[.medium]! <= 45)
        #expect(diameters[.large]! == diameters[.medium]! * IslandGeometry.Size.large.factor)
        #expect(diameters[.small]! < diameters[.medium]!)
        // Text the circle cannot hold does not stretch it: the bubble falls back to an icon.
        let timer: JSON = ["compactLeading": ["type": "symbol", "name": "🍅"], "minimal": ["type": "timer", "to": "{{state.endsAt}}"]]
        let long = Scenes.scene(
            ["mode": "minimal", "attached": "a", "detached": "t"],
            items: [Scenes.simpleItem("a"), Scenes.item("t", app: "org.example.Timer", layout: timer, state: ["endsAt": .double(Scenes.now + 1499)])])
        let frame = layout.frame(long)
        let bubble = try #require(frame.shape("bubble"))
        #expect(bubble.rect.width == layout.geometry.minimalDiameter)
        #expect(frame.content.filter { $0.slot.hasPrefix("minimal.detached") }.map(\.primitive) == [.symbol("🍅")])
        // Short text that fits stays text.
        let short: JSON = ["minimal": ["type": "text", "template": "18′"]]
        let fits = layout.frame(
            Scenes.scene(
                ["mode": "minimal", "attached": "a", "detached": "s"],
                items: [Scenes.simpleItem("a"), Scenes.item("s", app: "org.example.S", layout: short)]))
        #expect(Self.texts(fits, "minimal.detached").map(\.text) == ["18′"])
    }

    @Test func compactLeavesNoGapWiderThanTheGapConstant() throws {
        let g = layout.geometry
        for trailing in ["7", "7 min", "About twenty minutes"] {
            let frame = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: trailing)]))
            let island = try #require(frame.shape("island")).rect
            let leading = try #require(frame.content.first { $0.slot.hasPrefix("compact.leading") }).rect
            let value = try #require(Self.texts(frame, "compact.trailing").first)
            let textWidth = min(value.rect.width, FixedMetrics().width(of: value.text, font: .body))
            let valueStart = value.rect.maxX - textWidth
            #expect(valueStart - leading.maxX <= g.compactGap + 0.001, "\(trailing): \(valueStart - leading.maxX) px between leading and trailing")
            // Balanced: the content's outer margins differ by no more than text's extra air.
            let left = leading.x - island.x, right = island.maxX - value.rect.maxX
            #expect(abs(left - right) <= g.compactTextInset - g.compactSymbolInset + 0.001)
        }
    }

    @Test func compactProgressIsARing() throws {
        let progress: JSON = [
            "compactLeading": ["type": "symbol", "name": "📥"],
            "compactTrailing": ["type": "progress", "value": "{{state.percent}}", "total": 100],
        ]
        let frame = layout.frame(Scenes.scene(["mode": "compact", "attached": "p"], items: [Scenes.item("p", layout: progress, state: ["percent": 35])]))
        let trailing = frame.content.filter { $0.slot.hasPrefix("compact.trailing") }
        #expect(trailing.map(\.primitive) == [.ring(0.35, tint: nil)])
        #expect(trailing[0].rect.width == trailing[0].rect.height)
        #expect(Self.texts(frame, "compact").isEmpty, "no percentage unless the layout asks for text")
        // At a side of the expanded island's top row too; a bar in the centre and below.
        let expanded = layout.frame(
            Self.expanded([
                "leading": ["type": "progress", "value": 35, "total": 100, "priority": 1],
                "center": ["type": "progress", "value": 35, "total": 100, "priority": 1],
                "bottom": ["type": "progress", "value": 35, "total": 100, "priority": 0],
            ]))
        let kinds = expanded.content.map { placed -> String in
            switch placed.primitive {
            case .ring: "ring \(placed.slot)"
            case .bar: "bar \(placed.slot)"
            default: "other"
            }
        }
        #expect(kinds.sorted() == ["bar expanded.bottom.0", "bar expanded.center.0", "ring expanded.leading.0"])
    }

    @Test func aButtonWithASymbolIsAFixedWidthIconButton() throws {
        func buttons(_ label: String) -> [OverlayPlaced] {
            let scene = Self.expanded([
                "bottom": [
                    "type": "hstack", "priority": 0,
                    "children": [
                        ["type": "button", "action": "playPause", "label": .string(label), "symbol": "media-playback-pause-symbolic"],
                        ["type": "button", "action": "skip", "label": .string("Skip " + label)],
                    ],
                ]
            ])
            return layout.frame(scene).content.filter { if case .button = $0.primitive { true } else { false } }
        }
        let short = buttons("Pause"), long = buttons("Pause the music now")
        #expect(short[0].rect == long[0].rect, "the icon button neither moves nor grows with its label")
        #expect(short[0].rect.width == layout.geometry.iconButton && short[0].rect.width == short[0].rect.height)
        #expect(long[1].rect.width > short[1].rect.width, "a button without a symbol is a pill as wide as its label")
        // The label is still the button's accessible name.
        let frame = layout.frame(
            Self.expanded([
                "bottom": [
                    "type": "button", "action": "playPause", "label": "Pause", "symbol": "media-playback-pause-symbolic",
                    "priority": 0,
                ]
            ]))
        #expect(frame.hits.contains { $0.target == .button(id: "e", action: "playPause") && $0.name == "Pause" })
    }

    @Test func everyFormScalesWithSize() throws {
        let scene = Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem()])
        let medium = try #require(OverlayLayout(top: 8, metrics: FixedMetrics()).frame(scene).shape("island")).rect
        let large = try #require(OverlayLayout(top: 8, geometry: IslandGeometry(size: .large), metrics: FixedMetrics()).frame(scene).shape("island")).rect
        #expect(large.width == medium.width * 1.25)
        #expect(IslandGeometry(size: .large).canvasWidth >= large.width)
        #expect(IslandGeometry(size: .large).fontSize(.body) == 1.25 * IslandGeometry.medium.fontSize(.body))
        #expect(IslandGeometry(factor: 50).factor == IslandGeometry.factors.upperBound)
        #expect(IslandGeometry(factor: .nan).factor == 1)
    }

    @Test func aLightCardGetsDarkInk() throws {
        func tinted(_ hex: String) -> JSON {
            guard case .object(var object) = Scenes.simple else { return Scenes.simple }
            object["backgroundTint"] = .string(hex)
            return .object(object)
        }
        let light = tinted("#FFFFFF"), dim = tinted("#1B1B1BE6")
        let items = [
            Scenes.item("l", app: "org.example.L", layout: light, state: ["text": "Latte"]),
            Scenes.item("d", app: "org.example.D", layout: dim, state: ["text": "Dark"]),
        ]
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: items), listOpen: true)
        let onLight = frame.content.filter { $0.slot.hasPrefix("list.l.") && $0.slot != "list.l.dismiss" }
        #expect(!onLight.isEmpty && onLight.allSatisfy(\.onLight))
        #expect(!frame.content.contains { $0.slot.hasPrefix("list.d.") && $0.onLight })
        #expect(!frame.content.contains { $0.slot.hasSuffix(".heading") && $0.onLight }, "headings sit on the panel")
        #expect(OverlayStyle.isLight(LayoutColor(hex: "#FFD60A")!) && !OverlayStyle.isLight(LayoutColor(hex: "#6F4E37")!))
    }

    @Test func textKeepsItsContrastAndTheKeylineStaysQuiet() {
        let style = OverlayStyle()
        for ground in [style.background, style.card, style.panel.with(alpha: 1)] {
            #expect(OverlayStyle.contrast(style.foreground, ground) >= 4.5)
            #expect(OverlayStyle.contrast(style.secondary, ground) >= 4.5)
        }
        // On a light card, dark ink.
        for light in [OverlayColor(red: 1, green: 1, blue: 1), OverlayColor(red: 0.75, green: 0.75, blue: 0.75)] {
            #expect(OverlayStyle.contrast(style.foregroundOnLight, light) >= 4.5)
            #expect(OverlayStyle.contrast(style.secondaryOnLight, light) >= 4.5)
        }
        for tint in [LayoutColor(hex: "#1DB954"), LayoutColor(hex: "#E53935"), nil] {
            let keyline = style.keyline(tint: tint)
            #expect(keyline.alpha <= 0.5, "a thin translucent line, not a sticker")
            #expect(min(keyline.red, keyline.green, keyline.blue) >= 0.7, "mostly white: a little of the tint")
        }
    }
}

@Suite struct OverlayRegionTests {
    @Test func theInputRegionIsTheRoundedShapeAndNothingElse() {
        let pill = OverlayShape(id: "island", kind: .island, rect: .init(x: 157, y: 1, width: 126, height: 37), radius: 18.5)
        let rows = OverlayLayout.pixelRows([pill])
        func inside(_ x: Double, _ y: Double) -> Bool { rows.contains { $0.contains(x: x, y: y) } }
        #expect(inside(220, 19))
        #expect(inside(158, 19))
        #expect(!inside(157.5, 1.5), "the rounded corner lets clicks through")
        #expect(!inside(282.5, 37.5))
        #expect(!inside(156, 19) && !inside(284, 19) && !inside(220, 39))
        let bounds = rows.reduce(OverlayRect.zero) { $0.union($1) }
        #expect(bounds == OverlayRect(x: 157, y: 1, width: 126, height: 37))
        #expect(OverlayLayout.pixelRows([]).isEmpty)
        let card = OverlayShape(id: "card.a", kind: .card, rect: .init(x: 0, y: 0, width: 50, height: 50), radius: 4)
        #expect(OverlayLayout.pixelRows([card]).isEmpty)
    }

    @Test func onlyWhatIsOnScreenTicks() {
        let timer: JSON = [
            "compactLeading": ["type": "symbol", "name": "⏱"],
            "compactTrailing": ["type": "text", "template": "Tea"],
            "lockScreen": ["type": "timer", "to": "{{state.endsAt}}"],
            "expanded": [
                "center": ["type": "text", "template": "Tea", "priority": 1],
                "bottom": ["type": "timer", "to": "{{state.endsAt}}", "priority": 0],
            ],
        ]
        let items = [Scenes.simpleItem("a"), Scenes.item("t", app: "org.example.Timer", layout: timer, state: ["endsAt": .double(Scenes.now + 100)])]
        let compact = Scenes.scene(["mode": "compact", "attached": "a"], items: items)
        #expect(!OverlayLayout.isTicking(compact, listOpen: false))
        #expect(OverlayLayout.isTicking(compact, listOpen: true))
        // The timer's compact view does not tick; its lock-screen view (in the list) does.
        let timerCompact = Scenes.scene(["mode": "compact", "attached": "t"], items: items)
        #expect(!OverlayLayout.isTicking(timerCompact, listOpen: false))
        let expanded = Scenes.scene(["mode": "expanded", "attached": "t", "expanded": "t"], items: [items[1]])
        #expect(OverlayLayout.isTicking(expanded, listOpen: false))
    }
}

@Suite struct OverlayConfigTests {
    @Test func readsEveryKeyOfTheOverlaySection() {
        let config = OverlayConfig(
            text: """
                # comment
                [Overlay]
                Output = HDMI-A-1
                Layer=overlay
                MarginTop=24
                Opener=/usr/local/bin/my-opener --new-window
                Motion=off
                CollapseAfter=0
                """)
        #expect(config.output == .named("HDMI-A-1"))
        #expect(config.layer == .overlay)
        #expect(config.marginTop == 24)
        #expect(config.opener == ["/usr/local/bin/my-opener", "--new-window"])
        #expect(config.motion == false)
        #expect(config.collapseAfter == 0)
        #expect(config.geometry == .medium)
        #expect(config.warnings.isEmpty)
        #expect(OverlayConfig(text: "[Overlay]\nSize=large\n").geometry == IslandGeometry(size: .large))
        #expect(OverlayConfig(text: "[Overlay]\nSize=Small\n").geometry == IslandGeometry(size: .small))
        #expect(OverlayConfig(text: "[Overlay]\nSize=1.5\n").geometry.factor == 1.5)
    }

    @Test func badValuesAreReportedAndLeaveTheDefaults() {
        let config = OverlayConfig(
            text: "[Overlay]\nLayer=sky\nMarginTop=1e300\nMarginTop=nan\nCollapseAfter=-1\nColour=red\njunk\nSize=huge\nSize=9\n[Other]\nLayer=bottom\n")
        #expect(config.layer == .top)
        #expect(config.geometry == .medium)
        #expect(config.warnings.filter { $0.contains("Size must be small, medium, large or a factor from 0.75 to 2") }.count == 2)
        #expect(config.marginTop == 8)
        #expect(config.opener == nil)
        #expect(config.collapseAfter == 4)
        #expect(config.warnings.count == 9)
    }

    /// Reserve=yes: the compact capsule's strip (from the window's top, with a gap under it)
    /// is the exclusive zone, scaled with Size=; no (the default) takes none.
    @Test func reserveTakesTheCompactStrip() {
        #expect(OverlayConfig().reserve == false)
        #expect(OverlayConfig().exclusiveZone == 0)
        let medium = OverlayConfig(text: "[Overlay]\nReserve=yes\n")
        #expect(medium.reserve && medium.warnings.isEmpty)
        #expect(medium.exclusiveZone == 41)  // 1 above the capsule, 34 of it, 6 below
        #expect(Double(medium.exclusiveZone) >= medium.geometry.top + medium.geometry.pillHeight)
        let large = OverlayConfig(text: "[Overlay]\nReserve=yes\nSize=large\n")
        #expect(Double(large.exclusiveZone) >= large.geometry.top + large.geometry.pillHeight)
        #expect(large.exclusiveZone > medium.exclusiveZone)
        #expect(OverlayConfig(text: "[Overlay]\nReserve=yes\nReserve=No\n").exclusiveZone == 0)
        let bad = OverlayConfig(text: "[Overlay]\nReserve=maybe\n")
        #expect(!bad.reserve)
        #expect(bad.warnings == ["overlay.conf:2: Reserve must be yes or no"])
    }

    @Test func fullscreenAndOutputChoices() {
        #expect(OverlayConfig().fullscreen == .alerts)
        #expect(OverlayConfig().output == .primary)
        let config = OverlayConfig(text: "[Overlay]\nFullscreen=Hide\nOutput=focused\n")
        #expect(config.fullscreen == .hide)
        #expect(config.output == .focused)
        #expect(config.warnings.isEmpty)
        let bad = OverlayConfig(text: "[Overlay]\nFullscreen=sometimes\n")
        #expect(bad.fullscreen == .alerts)
        #expect(bad.warnings == ["overlay.conf:2: Fullscreen must be hide, alerts or always"])
        #expect(OverlayOutputChoice("1") == .number(1))
        #expect(OverlayOutputChoice("Primary") == .primary)
        #expect(OverlayOutputChoice("-1") == .named("-1"))
        #expect(OverlayOutputChoice("DP-2") == .named("DP-2"))
        #expect(OverlayOutputChoice("all") == .all)
    }
}
