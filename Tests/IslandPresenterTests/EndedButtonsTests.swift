import IslandCore
import OrderedJSON
import OrderedCollections
@testable import IslandOverlay
import Testing
@testable import IslandPresenter

/// An ended activity takes no button press (the daemon refuses it), so no presenter
/// draws its buttons — the terminal UI, the bars, SVG — and `island-presenter click button
/// ACTION` presses a button of the island's activity only when it has one, and says which it
/// has when it does not.
@Suite struct EndedButtonsTests {
    typealias F = Fixtures

    /// A button in every region a presenter draws: the compact trailing (bars), the lock screen
    /// (the terminal's list, SVG's card) and the expanded bottom.
    static let stopLayout: JSON = [
        "compactLeading": ["type": "symbol", "name": "☕"],
        "compactTrailing": [
            "type": "hstack",
            "children": [
                ["type": "text", "template": "{{state.stage}}"],
                ["type": "button", "action": "stop", "label": "Stop"],
            ],
        ],
        "lockScreen": [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "Order {{state.stage}}"],
                ["type": "button", "action": "stop", "label": "Stop"],
            ],
        ],
        "expanded": [
            "center": ["type": "text", "template": "Order", "priority": 1],
            "bottom": [
                "type": "hstack", "priority": 0,
                "children": [
                    ["type": "button", "action": "stop", "label": "Stop"],
                    ["type": "button", "action": "again", "label": "Again"],
                ],
            ],
        ],
    ]

    static func model(_ activityState: String, mode: String = "expanded") -> PresenterModel {
        let item = F.item(
            id: "o1", app: "org.example.Orders", type: "Order", state: ["stage": "ready"],
            activityState: activityState, layout: stopLayout)
        let island =
            mode == "expanded"
            ? F.island("expanded", attached: "o1", expanded: "o1", lockScreen: ["o1"])
            : F.island("compact", attached: "o1", lockScreen: ["o1"])
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: island, items: [item]))
        return model
    }

    static func terminal(_ model: PresenterModel) -> String {
        TerminalFrame(columns: 100, rows: 40).render(IslandScene(model: model, now: F.now), chrome: TerminalChrome())
            .map(\.plain).joined(separator: "\n")
    }

    @Test func theLayoutIsValidSoTheButtonsAreItsOwn() throws {
        _ = try Layout(json: Self.stopLayout)
        let live = IslandScene(model: Self.model("active"), now: F.now)
        #expect(live.primary?.layout.expandedButtons.map(\.action) == ["stop", "again"])
    }

    @Test func anEndedCardDrawsNoButtonsInAnyPresenter() throws {
        for state in ["ended", "dismissed"] {
            let ended = IslandScene(model: Self.model(state), now: F.now)
            #expect(ended.primary?.layout.expandedButtons.isEmpty == true, "\(state)")
            #expect(ended.primary?.layout.regions.allSatisfy { $0.view.buttons.isEmpty } == true, "\(state)")
            // What else the regions held stays.
            #expect(ended.lockScreenLines.first?.contains("Order ready") == true, "\(state)")
        }
        // The terminal UI: the numbered buttons of the expanded island and the card.
        #expect(Self.terminal(Self.model("active")).contains("[1 Stop]"))
        let endedTerminal = Self.terminal(Self.model("ended"))
        #expect(!endedTerminal.contains("Stop") && !endedTerminal.contains("Again"))
        #expect(endedTerminal.contains("Order ready"))
        // The bars: the compact text.
        for format in BarFormat.allCases {
            #expect(format.line(for: IslandScene(model: Self.model("active", mode: "compact"), now: F.now)).contains("Stop"), "\(format)")
            let line = format.line(for: IslandScene(model: Self.model("ended", mode: "compact"), now: F.now))
            #expect(!line.contains("Stop") && line.contains("ready"), "\(format): \(line)")
        }
        // SVG (the overlay's painter, as island-presenter snapshot draws it): its description
        // names every region drawn, a button's label alone.
        let live = SVGDocument.parse(OverlaySnapshot.svg(IslandScene(model: Self.model("active"), now: F.now), painter: OverlayPainter(icons: nil)))
        #expect(live.lines.contains("Stop"))
        let endedSVG = SVGDocument.parse(OverlaySnapshot.svg(IslandScene(model: Self.model("ended"), now: F.now), painter: OverlayPainter(icons: nil)))
        #expect(endedSVG.ok)
        #expect(!endedSVG.lines.contains("Stop") && !endedSVG.lines.contains("Again"))
    }

    @Test func aViewOfButtonsAloneLeavesNoRegion() {
        let buttons = RenderedView.hstack([.button(action: "a", label: "A", symbol: nil), .button(action: "b", label: "B", symbol: nil)], spacing: nil)
        #expect(buttons.withoutButtons == nil)
        #expect(RenderedView.link(url: "https://example.org", child: .button(action: "a", label: "A", symbol: nil)).withoutButtons == nil)
        let mixed = RenderedView.vstack([.text("x"), .button(action: "a", label: "A", symbol: nil)], spacing: 2)
        #expect(mixed.withoutButtons == .vstack([.text("x")], spacing: 2))
        #expect(RenderedView.hstack([], spacing: nil).withoutButtons == .hstack([], spacing: nil))
        #expect(RenderedView.text("t").withoutButtons == .text("t"))
    }

    // MARK: click button ACTION

    @Test func aButtonIsFoundOnlyOnALiveActivityThatHasIt() {
        let live = IslandScene(model: Self.model("active"), now: F.now)
        #expect(live.button("stop") == .found(id: "o1"))
        #expect(live.button("again") == .found(id: "o1"))
        #expect(live.button("pause") == .missing(id: "o1", available: ["stop", "again"]))
        // Found in any region: the compact island has the button in its trailing view.
        #expect(IslandScene(model: Self.model("active", mode: "compact"), now: F.now).button("stop") == .found(id: "o1"))
        #expect(IslandScene(model: Self.model("ended"), now: F.now).button("stop") == .ended(id: "o1"))
        #expect(IslandScene(model: F.emptyModel, now: F.now).button("stop") == .noActivity)
        // Another activity's buttons are its own; an activity without any has none to list.
        #expect(IslandScene(model: F.compactModel, now: F.now).button("stop") == .missing(id: "c1", available: ["pause", "cancel"]))
        var timer = PresenterModel()
        timer.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "t1"), items: [F.timer()]))
        #expect(IslandScene(model: timer, now: F.now).button("stop") == .missing(id: "t1", available: []))
    }

    @Test func aButtonPressWithBarsRunningWaitsForTheBarsActivityToStandStill() {
        let island = Self.model("active", mode: "compact").island
        let shown = BarShown(pid: 1, id: "o1", actionableAt: ["expand": 10, "tap": 10, "dismiss": 10])
        #expect(BarClick.button.interaction(on: island)! == ("button", "o1"))
        #expect(shown.decide(.button, island: island, at: 9) != .act(action: "button", id: "o1"))
        #expect(shown.decide(.button, island: island, at: 10) == .act(action: "button", id: "o1"))
        // Another activity on the bar: not this one's button.
        let other = BarShown(pid: 1, id: "x9", actionableAt: ["expand": 0, "tap": 0, "dismiss": 0])
        #expect(other.decide(.button, island: island, at: 10) != .act(action: "button", id: "o1"))
    }
}
