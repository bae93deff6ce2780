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

    static func item(_ id: String, app: String = "org.example.App", layout: JSON, state: JSONObject = [:]) -> JSON {
        ["id": .string(id), "app": .string(app), "type": "T", "attributes": [:], "content": ["state": .object(state)],
         "state": "active", "createdAt": .double(now), "layout": layout, "defaultLayout": false]
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
        "lockScreen": ["type": "vstack", "children": [
            ["type": "text", "template": "Order {{state.text}}"],
            ["type": "progress", "value": "{{state.done}}", "total": 4],
        ]],
        "expanded": [
            "leading": ["type": "symbol", "name": "☕", "priority": 1],
            "center": ["type": "text", "template": "{{state.text}}", "priority": 2],
            "trailing": ["type": "text", "template": "{{state.trailing}}", "priority": 0, "belowIfTooWide": true],
            "bottom": ["type": "hstack", "priority": 0, "children": [
                ["type": "button", "action": "pause", "label": "Pause"],
                ["type": "link", "url": "https://example.org/help", "child": ["type": "text", "template": "Help"]],
                ["type": "button", "action": "stop", "label": "Stop"],
            ]],
        ],
    ]

    static func simpleItem(_ id: String = "a", text: String = "Brewing", trailing: String = "7 min", done: Double = 1, app: String = "org.example.App") -> JSON {
        item(id, app: app, layout: simple, state: ["text": .string(text), "trailing": .string(trailing), "done": .double(done)])
    }
}

@Suite struct OverlayLayoutTests {
    let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics())

    @Test func hiddenDrawsNothingAndLetsClicksThrough() {
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: []))
        #expect(frame.form == .hidden)
        #expect(frame.shapes.isEmpty)
        #expect(frame.bounds.isEmpty)
        #expect(frame.target(x: 220, y: 20) == .outside)
    }

    @Test func compactIsACentredPillThatExpandsWhenClicked() throws {
        let frame = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem()]))
        #expect(frame.form == .compact)
        let island = try #require(frame.shape("island"))
        #expect(island.rect.height == OverlayLayout.pillHeight)
        #expect(island.radius == OverlayLayout.pillHeight / 2)
        #expect(island.rect.width >= OverlayLayout.pillMinimumWidth)
        #expect(abs(island.rect.midX - 220) < 0.001)
        #expect(island.rect.y == 8)
        #expect(island.keyline == LayoutColor(hex: "#ff9500"))
        #expect(frame.target(x: island.rect.midX, y: island.rect.midY) == .expand(id: "a"))
        #expect(frame.target(x: island.rect.maxX + 2, y: island.rect.midY) == .outside)
        // Leading on the left, trailing on the right, both inside the pill.
        let texts = frame.content.compactMap { placed -> (String, OverlayRect)? in
            if case .text(let text, _, _, _) = placed.primitive { (text, placed.rect) } else { nil }
        }
        let trailing = try #require(texts.first { $0.0 == "7 min" })
        #expect(trailing.1.maxX <= island.rect.maxX - 10)
        let symbol = try #require(frame.content.first { $0.primitive == .symbol("☕") })
        #expect(symbol.rect.x >= island.rect.x + 10 && symbol.rect.maxX < trailing.1.x)
    }

    @Test func compactGrowsWithItsContentUpToACap() throws {
        let short = try #require(layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: "7 min")])).shape("island"))
        let longer = try #require(layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: "About twenty minutes")])).shape("island"))
        let huge = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem(trailing: String(repeating: "x", count: 5000))]))
        let hugeIsland = try #require(huge.shape("island"))
        #expect(longer.rect.width > short.rect.width)
        #expect(hugeIsland.rect.width == OverlayLayout.compactMaximumWidth)
        // Nothing placed outside the pill: the text is ellipsized to its region.
        for placed in huge.content {
            #expect(placed.rect.x >= hugeIsland.rect.x && placed.rect.maxX <= hugeIsland.rect.maxX + 0.001)
        }
    }

    @Test func minimalIsThePillAndASmallDetachedBubble() throws {
        let items = [Scenes.simpleItem("a"), Scenes.simpleItem("b", app: "org.example.Other")]
        let frame = layout.frame(Scenes.scene(["mode": "minimal", "attached": "a", "detached": "b"], items: items))
        #expect(frame.form == .minimal)
        let island = try #require(frame.shape("island")), bubble = try #require(frame.shape("bubble"))
        #expect(bubble.rect.width == OverlayLayout.pillHeight && bubble.rect.height == OverlayLayout.pillHeight)
        #expect(bubble.radius == bubble.rect.height / 2)
        #expect(bubble.rect.x == island.rect.maxX + OverlayLayout.bubbleGap)
        #expect(frame.target(x: bubble.rect.midX, y: bubble.rect.midY) == .expand(id: "b"))
        #expect(frame.target(x: island.rect.midX, y: island.rect.midY) == .expand(id: "a"))
        // A progress as the minimal view is a ring, in the bubble too.
        let rings = frame.content.filter { if case .ring = $0.primitive { true } else { false } }
        #expect(rings.count == 2)
        #expect(rings.contains { bubble.rect.contains(x: $0.rect.midX, y: $0.rect.midY) })
    }

    @Test func expandedPlacesRegionsAndButtonsAndTaps() throws {
        let frame = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem()]))
        #expect(frame.form == .expanded)
        let island = try #require(frame.shape("island"))
        #expect(island.rect.width == OverlayLayout.expandedWidth)
        #expect(island.rect.height > OverlayLayout.pillHeight)
        let buttons = frame.content.filter { if case .button = $0.primitive { true } else { false } }
        #expect(buttons.count == 2)
        let pause = try #require(buttons.first { if case .button("pause", _, _) = $0.primitive { true } else { false } })
        #expect(frame.target(x: pause.rect.midX, y: pause.rect.midY) == .button(id: "a", action: "pause"))
        // The link opens its own URL; the rest of the island taps with the layout's.
        let help = try #require(frame.content.first { $0.primitive == .text("Help", font: .body, ink: .primary, alignment: .leading) })
        #expect(frame.target(x: help.rect.midX, y: help.rect.midY) == .tap(id: "a", url: "https://example.org/help"))
        #expect(frame.target(x: island.rect.x + 12, y: island.rect.midY) == .tap(id: "a", url: "https://example.org/whole"))
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
        #expect((row.widths[.leading] ?? 0) + (row.widths[.center] ?? 0) + 10 <= 300)
    }

    @Test func anAlertShowsItsTitleAndBody() throws {
        let frame = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem()],
                                              alert: ["id": "a", "title": "Ready\nnow", "body": "Pick it up"]))
        #expect(frame.form == .alert)
        let texts = frame.content.compactMap { if case .text(let text, _, _, _) = $0.primitive { text } else { nil } }
        #expect(texts.contains("Ready now"))
        #expect(texts.contains("Pick it up"))
        let island = try #require(frame.shape("island"))
        #expect(frame.target(x: island.rect.midX, y: island.rect.midY) == .tap(id: "a", url: "https://example.org/whole"))
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
        #expect(frame.target(x: dismisses[1].rect.midX, y: dismisses[1].rect.midY) == .dismiss(id: "i1"))
        #expect(frame.target(x: cards[2].rect.x + 20, y: cards[2].rect.maxY - 6) == .expand(id: "i2"))
        #expect(frame.target(x: panel.rect.midX, y: panel.rect.maxY - 2) == .list)
        // Closed, it is gone.
        #expect(layout.frame(Scenes.scene(["mode": "compact", "attached": "i0"], items: items)).shape("panel") == nil)
    }

    @Test func cardsAreHeadedByTheAppsNameAndIcon() throws {
        guard case .object(var named) = Scenes.simpleItem("n") else { Issue.record("not an object"); return }
        named["appName"] = "Coffee Shop"
        named["appIcon"] = "battery-good-symbolic"
        guard case .object(var pathIcon) = Scenes.simpleItem("p") else { return }
        pathIcon["appIcon"] = "/etc/passwd"
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: [.object(named), .object(pathIcon)]), listOpen: true)
        let headers = frame.content.filter { $0.slot.hasSuffix(".header") }.compactMap { if case .text(let t, _, _, _) = $0.primitive { t } else { nil } }
        #expect(headers == ["Coffee Shop", "org.example.App"])
        let icons = frame.content.filter { $0.slot.hasSuffix(".icon") }
        #expect(icons.map(\.primitive) == [.symbol("battery-good-symbolic")])
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
            "expanded": ["bottom": ["type": "vstack", "priority": 0, "spacing": 1e300, "children": [
                ["type": "progress", "value": "{{state.big}}", "total": 1e-300, "segments": [["length": 1e300], ["length": 1e300]], "points": [["position": 1e300]]],
                ["type": "text", "template": "{{state.text}}"],
            ]]],
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
            "expanded": ["center": ["type": "text", "template": "Tea", "priority": 1],
                         "bottom": ["type": "timer", "to": "{{state.endsAt}}", "priority": 0]],
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
        let config = OverlayConfig(text: """
            # comment
            [Overlay]
            Output = HDMI-A-1
            Layer=overlay
            MarginTop=24
            Opener=/usr/local/bin/my-opener --new-window
            Motion=off
            CollapseAfter=0
            """)
        #expect(config.output == "HDMI-A-1")
        #expect(config.layer == .overlay)
        #expect(config.marginTop == 24)
        #expect(config.opener == ["/usr/local/bin/my-opener", "--new-window"])
        #expect(config.motion == false)
        #expect(config.collapseAfter == 0)
        #expect(config.warnings.isEmpty)
    }

    @Test func badValuesAreReportedAndLeaveTheDefaults() {
        let config = OverlayConfig(text: "[Overlay]\nLayer=sky\nMarginTop=1e300\nMarginTop=nan\nCollapseAfter=-1\nColour=red\njunk\n[Other]\nLayer=bottom\n")
        #expect(config.layer == .top)
        #expect(config.marginTop == 8)
        #expect(config.opener == nil)
        #expect(config.collapseAfter == 4)
        #expect(config.warnings.count == 7)
    }
}
