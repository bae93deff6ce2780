import IslandCore
import OrderedJSON
import IslandPresenter
import OrderedCollections
import Testing
@testable import IslandOverlay

/// The overlay's trust boundaries: clicks act only on what was on screen and still, every
/// form's size is bounded (and nothing outside what is drawn is clickable), producer text is
/// bounded before Pango shapes it and isolated in direction. Time is injected: `t` is seconds
/// of a monotonic clock the tests advance themselves.
@Suite struct OverlayClickGuardTests {
    let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics())

    /// The overlay's paint loop without a display: each frame painted is recorded, as
    /// `OverlayController` does on `.painted`, at the test's clock.
    struct Screen {
        var motion: OverlayMotion
        var clicks = OverlayClicks()
        var t = 0.0

        init(motion enabled: Bool = true) { motion = OverlayMotion(enabled: enabled) }

        /// A change of scene: the next frame is the target (nothing painted yet).
        mutating func show(_ frame: OverlayFrame) { motion.show(frame) }

        /// One frame painted `dt` seconds later.
        mutating func paint(after dt: Double = 1.0 / 60) {
            t += dt
            motion.step(dt)
            clicks.painted(motion.target, shapesMoving: motion.shapesMoving, at: t)
        }

        /// Frames at 60 Hz until the morph has ended (one more frame paints the rest).
        mutating func paintUntilSettled() {
            var frames = 0
            repeat { paint(); frames += 1 } while motion.isAnimating && frames < 600
            #expect(!motion.isAnimating)
        }

        /// Time passing with nothing to paint (the overlay sleeps while nothing changes).
        mutating func wait(_ dt: Double) { t += dt }

        func click(_ x: Double, _ y: Double) -> OverlayClicks.Decision { clicks.click(x: x, y: y, at: t) }
    }

    static let other: JSON = [
        "url": "https://b.example/steal",
        "compactLeading": ["type": "symbol", "name": "🚀"],
        "compactTrailing": ["type": "text", "template": "{{state.trailing}}"],
        "minimal": ["type": "symbol", "name": "🚀"],
        "lockScreen": [
            "type": "hstack",
            "children": [
                ["type": "text", "template": "{{state.text}}"],
                ["type": "button", "action": "confirm-transfer", "label": "Confirm"],
            ],
        ],
    ]

    static func b(_ text: String = "Rocket") -> JSON {
        Scenes.item("b", app: "org.example.B", layout: other, state: ["text": .string(text), "trailing": "3/5"])
    }

    static func a() -> JSON {
        Scenes.item("a", app: "org.example.A", layout: other, state: ["text": "Rocket", "trailing": "1/2"])
    }

    // MARK: 1. Clickjacking

    /// The attack the click guard stops: A's pill is on screen, B sends an alerting update just
    /// before the user clicks it. The click acts on what was painted (A's pill, whose click only
    /// expands), never on B's alert before it has been on screen, still, for the settle time.
    @Test func anAlertJustBeforeAClickOnAnotherAppsPillGetsNoTap() throws {
        let pill = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem("a"), Self.b()]))
        let alert = layout.frame(
            Scenes.scene(
                ["mode": "expanded", "attached": "a", "expanded": "b"], items: [Scenes.simpleItem("a"), Self.b()],
                alert: ["id": "b", "title": "Tap to continue", "body": "Now"]))
        expectForm(alert.form, .alert)
        let island = try #require(pill.shape("island")).rect
        let (x, y) = (island.midX, island.midY)
        for delay in [0.05, 0.15, 0.3] {
            var screen = Screen()
            screen.show(pill)
            screen.paint()
            screen.wait(60)
            expectClick(screen.click(x, y), .init(target: .expand(id: "a"), actionable: true))

            screen.show(alert)
            // Not painted yet: the screen still shows A's pill, and that is what is clicked.
            expectTarget(screen.click(x, y).target, .expand(id: "a"))
            screen.paint()
            // Painted mid-morph: B's tap is under the pointer but not actionable.
            expectClick(screen.click(x, y), .init(target: .tap(id: "b", url: "https://b.example/steal"), actionable: false))
            screen.wait(delay)
            expectClick(screen.click(x, y), .init(target: .tap(id: "b", url: "https://b.example/steal"), actionable: false))
        }
    }

    @Test func aTargetActsOnlyAfterTheMorphEndedAndItStoodStillForTheSettleTime() {
        let pill = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem("a"), Self.b()]))
        let alert = layout.frame(
            Scenes.scene(
                ["mode": "expanded", "attached": "a", "expanded": "b"], items: [Scenes.simpleItem("a"), Self.b()],
                alert: ["id": "b", "title": "Tap to continue", "body": "Now"]))
        let rect = alert.shape("island")!.rect
        var screen = Screen()
        screen.show(pill)
        screen.paint()
        screen.show(alert)
        screen.paint()
        let start = screen.t
        screen.paintUntilSettled()
        let settledAt = screen.t
        #expect(settledAt - start > 0.1, "the morph takes frames")
        let tap = OverlayTarget.tap(id: "b", url: "https://b.example/steal")
        #expect(screen.clicks.nextActionable(after: settledAt) == settledAt + 0.5)
        screen.wait(0.49)
        expectClick(screen.click(rect.midX, rect.midY), .init(target: tap, actionable: false))
        #expect(screen.clicks.actionable(at: screen.t).isEmpty)
        screen.wait(0.01)
        expectClick(screen.click(rect.midX, rect.midY), .init(target: tap, actionable: true))
        #expect(screen.clicks.actionable(at: screen.t) == [tap])
        // A redraw of the same frame (a hover, a second's tick) does not restart the wait.
        screen.paint()
        #expect(screen.click(rect.midX, rect.midY).actionable)
    }

    /// The list attack: B lowers its relevance just before the user clicks B's "Confirm"; the
    /// cards swap and A's "Confirm" comes under the pointer. It must not be pressed.
    @Test func aCardThatMovedUnderThePointerIsNotPressed() throws {
        let before = layout.frame(Scenes.scene(["mode": "none", "lockScreen": ["b", "a"]], items: [Self.a(), Self.b()]), listOpen: true)
        let after = layout.frame(Scenes.scene(["mode": "none", "lockScreen": ["a", "b"]], items: [Self.a(), Self.b()]), listOpen: true)
        let confirmB = try #require(before.hits.first { $0.target == .button(id: "b", action: "confirm-transfer") }).rect
        let (x, y) = (confirmB.midX, confirmB.midY)
        var screen = Screen()
        screen.show(before)
        screen.paint()
        screen.wait(5)
        expectClick(screen.click(x, y), .init(target: .button(id: "b", action: "confirm-transfer"), actionable: true))
        screen.show(after)
        screen.wait(0.108)
        // Before the next paint the screen still shows B's button where it was: that is what a
        // click presses.
        expectClick(screen.click(x, y), .init(target: .button(id: "b", action: "confirm-transfer"), actionable: true))
        screen.paint()
        expectClick(screen.click(x, y), .init(target: .button(id: "a", action: "confirm-transfer"), actionable: false))
        screen.paintUntilSettled()
        expectClick(screen.click(x, y), .init(target: .button(id: "a", action: "confirm-transfer"), actionable: false))
        screen.wait(0.5)
        expectClick(screen.click(x, y), .init(target: .button(id: "a", action: "confirm-transfer"), actionable: true))
    }

    /// B flips its relevance twice a second: clicks at any time on the button under the pointer
    /// press only a button that stood there, still, for the settle time, and never A's within
    /// half a second of it arriving.
    @Test func flippingRelevanceNeverGetsAnotherAppsButtonPressed() throws {
        let orders: [[JSON]] = [["b", "a"], ["a", "b"]]
        let frames = orders.map { layout.frame(Scenes.scene(["mode": "none", "lockScreen": .array($0)], items: [Self.a(), Self.b()]), listOpen: true) }
        let confirmB = try #require(frames[0].hits.first { $0.target == .button(id: "b", action: "confirm-transfer") }).rect
        var screen = Screen()
        screen.show(frames[0])
        screen.paintUntilSettled()
        var arrived: [OverlayTarget: Double] = [:]
        var last: OverlayTarget?
        for flip in 1...20 {
            screen.show(frames[flip % 2])
            // 30 frames, 0.5 s: a click on every frame.
            for _ in 0..<30 {
                screen.paint()
                let decision = screen.click(confirmB.midX, confirmB.midY)
                if decision.target != last { arrived[decision.target] = screen.t; last = decision.target }
                if decision.actionable, case .button(let id, _) = decision.target {
                    #expect(
                        screen.t - arrived[decision.target]! >= 0.5,
                        "\(id)'s button pressed \(screen.t - arrived[decision.target]!) s after it came under the pointer")
                }
            }
        }
    }

    @Test func contentThatOnlyCrossfadesKeepsItsTargetsButANewButtonWaits() throws {
        let first = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem("a", text: "Brewing")]))
        let second = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem("a", text: "Brewed!")]))
        #expect(first.shapes == second.shapes && first.content != second.content)
        let pause = try #require(first.hits.first { $0.target == .button(id: "a", action: "pause") }).rect
        var screen = Screen()
        screen.show(first)
        screen.paintUntilSettled()
        screen.wait(1)
        screen.show(second)
        screen.paint()
        #expect(screen.motion.isAnimating && !screen.motion.shapesMoving)
        expectClick(screen.click(pause.midX, pause.midY), .init(target: .button(id: "a", action: "pause"), actionable: true))
    }

    @Test func withReducedMotionANewTargetStillWaits() {
        let pill = layout.frame(Scenes.scene(["mode": "compact", "attached": "a"], items: [Scenes.simpleItem("a"), Self.b()]))
        let alert = layout.frame(
            Scenes.scene(
                ["mode": "expanded", "attached": "a", "expanded": "b"], items: [Scenes.simpleItem("a"), Self.b()],
                alert: ["id": "b", "title": "Tap", "body": "Now"]))
        let island = pill.shape("island")!.rect
        var screen = Screen(motion: false)
        screen.show(pill)
        screen.paint()
        screen.show(alert)
        screen.paint()
        #expect(!screen.motion.isAnimating)
        screen.wait(0.3)
        #expect(!screen.click(island.midX, island.midY).actionable)
        screen.wait(0.2)
        #expect(screen.click(island.midX, island.midY).actionable)
    }

    @Test func aTargetThatDisappearsAndComesBackIsNewAgain() {
        let expanded = layout.frame(Scenes.scene(["mode": "expanded", "attached": "a", "expanded": "a"], items: [Scenes.simpleItem("a")]))
        let hidden = layout.frame(Scenes.scene(["mode": "none"], items: []))
        let island = expanded.shape("island")!.rect
        var screen = Screen(motion: false)
        screen.show(expanded)
        screen.paint()
        screen.wait(1)
        #expect(screen.click(island.midX, island.midY).actionable)
        screen.show(hidden)
        screen.paint()
        expectClick(screen.click(island.midX, island.midY), .init(target: .outside, actionable: true))
        screen.show(expanded)
        screen.paint()
        #expect(!screen.click(island.midX, island.midY).actionable)
    }

    @Test func placementsAreWholePixelsSoSubpixelDriftIsNotAMove() {
        #expect(PixelRect(.init(x: 10.2, y: 7.9, width: 100.1, height: 30.3)) == PixelRect(.init(x: 9.9, y: 8.1, width: 100.2, height: 29.9)))
        #expect(PixelRect(.init(x: 10, y: 8, width: 100, height: 30)) != PixelRect(.init(x: 11, y: 8, width: 100, height: 30)))
        #expect(PixelRect(.init(x: .nan, y: .infinity, width: 1, height: 1)) == PixelRect(.init(x: 0, y: 0, width: 0, height: 0)))
        #expect(OverlayClicks.actsForApp(.dismiss(id: "a")) && !OverlayClicks.actsForApp(.expand(id: "a")))
    }

    // MARK: 2. Bounded size

    static let rows: JSON = .array(
        (0..<60).map { row -> JSON in
            row == 59 ? ["type": "button", "action": "last", "label": "Last row"] : ["type": "text", "template": .string("Row \(row)")]
        })

    /// Legal layouts (62 views of the 64 allowed): the expanded bottom, or the card, a 60-row vstack.
    static let tall: JSON = [
        "url": "https://example.org/tall",
        "compactLeading": ["type": "text", "template": "Tall"],
        "expanded": ["bottom": ["type": "vstack", "priority": 0, "children": rows]],
    ]
    static let tallCard: JSON = [
        "compactLeading": ["type": "text", "template": "Tall"],
        "lockScreen": ["type": "vstack", "children": rows],
    ]

    @Test func aSixtyRowVstackIsCutAtTheExpandedIslandsMaximumHeight() throws {
        _ = try Layout(json: Self.tall)
        let tall = OverlayLayout(canvasWidth: 440, canvasHeight: 720, top: 1, metrics: FixedMetrics())
        let frame = tall.frame(Scenes.scene(["mode": "expanded", "attached": "t", "expanded": "t"], items: [Scenes.item("t", layout: Self.tall)]))
        let island = try #require(frame.shape("island")).rect
        #expect(island.height <= IslandGeometry.medium.expandedMaximumHeight)
        #expect(frame.bounds.maxY <= 1 + 160)
        // Nothing is placed, nor clickable, outside the island.
        for placed in frame.content { #expect(placed.rect.y >= island.y && placed.rect.maxY <= island.maxY, "\(placed.slot) at \(placed.rect)") }
        for hit in frame.hits { #expect(hit.rect.y >= island.y && hit.rect.maxY <= island.maxY, "\(hit.target) at \(hit.rect)") }
        #expect(!frame.hits.contains { $0.target == .button(id: "t", action: "last") })
        // The attacker's click far below: nothing of the island is there, and the input region
        // (what the compositor gives the overlay) does not reach it.
        expectTarget(frame.target(x: 220, y: 600), .outside)
        #expect(OverlayLayout.pixelRows(frame.shapes).allSatisfy { $0.maxY <= island.maxY + 1 })
        // Some rows are shown: the first ones.
        let texts = frame.content.compactMap { if case .text(let t, _, _, _) = $0.primitive { t } else { nil } }
        #expect(texts.first == "Row 0" && texts.count >= 4 && texts.count < 10, "\(texts)")
    }

    @Test func aCardInTheListIsBoundedToo() throws {
        _ = try Layout(json: Self.tallCard)
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: [Scenes.item("t", layout: Self.tallCard), Scenes.simpleItem("s")]), listOpen: true)
        let card = try #require(frame.shape("card.t")).rect
        #expect(card.height <= IslandGeometry.medium.cardMaximumHeight)
        for placed in frame.content where placed.slot.hasPrefix("list.t.") { #expect(placed.rect.maxY <= card.maxY) }
        #expect(!frame.hits.contains { $0.target == .button(id: "t", action: "last") })
        // The next card follows right under it.
        #expect(try #require(frame.shape("card.s")).rect.y < card.maxY + 20)
    }

    // MARK: 3, 4. Hostile text

    static func texts(_ frame: OverlayFrame) -> [String] {
        frame.content.compactMap { placed -> String? in
            switch placed.primitive {
            case .text(let text, _, _, _): text
            case .symbol(let name): name
            case .button(_, let label, let symbol): label + (symbol ?? "")
            default: nil
            }
        }
    }

    @Test func everyProducerStringIsNeutralizedAndBoundedBeforeItIsDrawn() throws {
        let marks = "a" + String(repeating: "\u{0301}", count: 1900)
        let bidi = "Pay \u{202E}0001\u{202C}$"
        let long = String(repeating: "x", count: 5000)
        let hostile: JSON = [
            "chip": .string(marks),
            "compactLeading": ["type": "text", "template": "{{state.marks}}"],
            "compactTrailing": ["type": "text", "template": "{{state.bidi}}"],
            "lockScreen": [
                "type": "hstack",
                "children": [
                    ["type": "text", "template": "{{state.long}}"],
                    ["type": "button", "action": "go", "label": .string(marks)],
                ],
            ],
        ]
        let state: JSONObject = ["marks": .string(marks), "bidi": .string(bidi), "long": .string(long)]
        guard case .object(var item) = Scenes.item("h", layout: hostile, state: state) else { Issue.record("not an object"); return }
        item["appName"] = .string(bidi + marks)
        item["state"] = "stale"
        let scenes = [
            Scenes.scene(["mode": "compact", "attached": "h"], items: [.object(item)]),
            Scenes.scene(
                ["mode": "expanded", "attached": "h", "expanded": "h"], items: [.object(item)],
                alert: ["id": "h", "title": .string(marks), "body": .string(bidi + long)]),
        ]
        var seen = 0
        for scene in scenes {
            let frame = layout.frame(scene, listOpen: true)
            for text in Self.texts(frame) {
                seen += 1
                let producer = text.unicodeScalars.filter { $0 != "\u{2068}" && $0 != "\u{2069}" }
                #expect(!producer.contains(where: DisplayText.isBidiControl), "bidi control in \(text.debugDescription.prefix(80))")
                #expect(text.allSatisfy { $0.unicodeScalars.count <= DisplayText.maximumScalarsPerCluster })
                #expect(text.count <= ViewPlacement.maximumClusters + 3)
            }
        }
        #expect(seen > 6)
    }

    @Test func pangoIsGivenBoundedTextWithItsDirectionIsolated() {
        let shaped = OverlayPainter.shaped("שלום 123")
        #expect(shaped == "\u{2068}שלום 123\u{2069}")
        let long = OverlayPainter.shaped(String(repeating: "é", count: 10_000))
        #expect(long.count <= ViewPlacement.maximumClusters + 3)
        // A right-to-left name heading a group is a text of its own, and so is our word for a
        // stale card: nothing of ours is composed with producer text (the painter isolates each).
        guard case .object(var item) = Scenes.simpleItem("r") else { return }
        item["appName"] = "שלום"
        item["state"] = "stale"
        let frame = layout.frame(Scenes.scene(["mode": "none"], items: [.object(item)]), listOpen: true)
        let heading = frame.content.first { $0.slot.hasSuffix(".heading") }?.primitive
        #expect(heading == .text("שלום", font: .caption, ink: .secondary, alignment: .leading))
        let status = frame.content.first { $0.slot == "list.r.status" }?.primitive
        #expect(status == .text("Not updated lately", font: .caption, ink: .secondary, alignment: .leading))
    }
}
