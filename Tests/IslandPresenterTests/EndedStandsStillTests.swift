import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
@testable import IslandOverlay
import Testing
@testable import IslandPresenter

/// An ended activity shows its final state: what depends on time (a countdown, a count-up, a
/// progress over a time range, a template's time of day) is drawn as it stood when the
/// activity ended (`endedAt`), so nothing on its card keeps counting, in every presenter — the
/// terminal, the bars, SVG — and none of them redraws every second for it. The clock is the
/// test's: scenes are resolved at instants it chooses.
@Suite struct EndedStandsStillTests {
    typealias F = Fixtures

    /// Every kind of time-driven view, in every region a presenter draws.
    static let clockLayout: JSON = [
        "compactLeading": ["type": "timer", "from": "{{state.startedAt}}", "countsDown": false],
        "compactTrailing": ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true],
        "minimal": ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true],
        "lockScreen": [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "Ends {{time(state.endsAt)}}"],
                ["type": "timer", "from": "{{state.startedAt}}", "countsDown": false],
                ["type": "progress", "from": "{{state.startedAt}}", "to": "{{state.endsAt}}"],
            ],
        ],
        "expanded": [
            "center": ["type": "text", "template": "Fast", "priority": 1],
            "trailing": ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true, "priority": 0],
            "bottom": ["type": "progress", "from": "{{state.startedAt}}", "to": "{{state.endsAt}}", "priority": 0],
        ],
    ]

    /// Started an hour before `F.now`, due two hours after; ended (when `endedAt` is given)
    /// then, in the `activityState` given.
    static func item(_ activityState: String = "ended", endedAt: Double? = F.now) -> JSON {
        var object = F.item(
            id: "f1", app: "org.example.Fasting", type: "Fast",
            state: ["startedAt": .double(F.now - 3600), "endsAt": .double(F.now + 7200)],
            activityState: activityState, layout: clockLayout
        ).objectValue!
        if let endedAt { object["endedAt"] = .double(endedAt) }
        return .object(object)
    }

    /// Another app's activity, with nothing on it that changes with time: the minimal
    /// island's other half.
    static let companion = F.item(
        id: "c1", app: "org.example.Coffee", type: "Coffee", state: ["stage": "brewing"],
        layout: [
            "compactLeading": ["type": "symbol", "name": "☕"], "compactTrailing": ["type": "text", "template": "{{state.stage}}"],
            "lockScreen": ["type": "text", "template": "Coffee: {{state.stage}}"],
        ])

    static func model(_ item: JSON, mode: String) -> PresenterModel {
        var model = PresenterModel()
        let island =
            mode == "expanded"
            ? F.island("expanded", attached: "f1", expanded: "f1", lockScreen: ["f1"])
            : mode == "minimal"
                ? F.island("minimal", attached: "c1", detached: "f1", lockScreen: ["c1", "f1"])
                : F.island("compact", attached: "f1", lockScreen: ["f1"])
        model.apply(F.snapshot(sequence: 1, island: island, items: [item, Self.companion]))
        return model
    }

    /// What each presenter draws of `model` at `now`: the terminal UI, every bar format, SVG.
    static func drawn(_ model: PresenterModel, at now: Double) -> [String] {
        let scene = IslandScene(model: model, now: now)
        let terminal = TerminalFrame(columns: 100, rows: 40).render(scene, chrome: TerminalChrome()).map(\.plain).joined(separator: "\n")
        let bars = BarFormat.allCases.map { $0.line(for: scene) }
        // cairo numbers its SVG surfaces and images across documents: the numbers are no drawing.
        let svg = (OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: nil)) ?? "")
            .replacingOccurrences(of: "(surface|image)[0-9]+", with: "$1", options: .regularExpression)
        return [terminal] + bars + [svg] + scene.lockScreenLines
    }

    @Test func theLayoutIsValid() throws {
        _ = try Layout(json: Self.clockLayout)
    }

    @Test func theItemCarriesWhenItEnded() throws {
        let ended = try #require(PresenterItem(json: Self.item()))
        #expect(ended.endedAt == F.now && ended.isFrozen)
        #expect(ended.contentTime(at: F.now + 600) == F.now)
        // A presenter's clock behind the daemon's: never ahead of its own now.
        #expect(ended.contentTime(at: F.now - 5) == F.now - 5)
        let live = try #require(PresenterItem(json: Self.item("active", endedAt: nil)))
        #expect(!live.isFrozen && live.contentTime(at: F.now + 600) == F.now + 600)
    }

    @Test func anEndedActivityDrawsTheSameAtEveryLaterInstant() {
        for mode in ["compact", "minimal", "expanded"] {
            let model = Self.model(Self.item(), mode: mode)
            let atEnd = Self.drawn(model, at: F.now)
            for later in [F.now + 1, F.now + 61, F.now + 7200, F.now + 86400 * 3] {
                let drawn = Self.drawn(model, at: later)
                for (index, (a, b)) in zip(drawn, atEnd).enumerated() where a != b {
                    let differing = zip(a.split(separator: "\n"), b.split(separator: "\n")).first { $0 != $1 }
                    Issue.record("\(mode) at +\(later - F.now) s, sink \(index): \(differing.map { "\($0.0) / \($0.1)" } ?? "")")
                }
            }
            #expect(!IslandScene(model: model, now: F.now + 30).isTicking, "\(mode): nothing of it ticks")
        }
    }

    @Test func itsTimersAndProgressStandAtTheEnd() throws {
        let scene = IslandScene(model: Self.model(Self.item(), mode: "expanded"), now: F.now + 5000)
        let layout = try #require(scene.expanded?.layout)
        #expect(layout.compactLeading?.view.plainText == "1:00:00", "a count-up stops at the end")
        #expect(layout.compactTrailing?.view.plainText == "2:00:00", "a countdown stops at the end")
        #expect(layout.expandedBottom?.view.firstProgress?.percent == 33, "a time-range progress stops at the end")
    }

    /// The same activity while live counts on, and so does an ended one from a daemon that
    /// does not say when it ended (older daemons): this presenter keeps working with them.
    @Test func aLiveOneAndOneWithoutAnEndTimeKeepCounting() {
        for item in [Self.item("active", endedAt: nil), Self.item("stale", endedAt: nil), Self.item("ended", endedAt: nil)] {
            let model = Self.model(item, mode: "expanded")
            #expect(Self.drawn(model, at: F.now + 61) != Self.drawn(model, at: F.now), "\(item["state"] ?? "")")
            #expect(IslandScene(model: model, now: F.now).isTicking)
        }
    }

    /// The overlay's own test of what wakes it: an ended activity, in the island or in the
    /// open list, schedules no tick.
    @Test func theOverlayIsNotWokenByIt() {
        for mode in ["compact", "minimal", "expanded"] {
            let ended = IslandScene(model: Self.model(Self.item(), mode: mode), now: F.now + 10)
            #expect(!OverlayLayout.isTicking(ended, listOpen: true), "\(mode)")
            let live = IslandScene(model: Self.model(Self.item("active", endedAt: nil), mode: mode), now: F.now + 10)
            #expect(OverlayLayout.isTicking(live, listOpen: true), "\(mode)")
        }
    }
}
