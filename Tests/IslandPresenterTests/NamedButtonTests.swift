import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

/// `island-presenter click button ACTION --id ID` presses the button of the activity named,
/// never another's, and refuses by name; the terminal UI's list keeps the selected card on
/// screen.
@Suite struct NamedButtonTests {
    typealias F = Fixtures

    /// o1 with a stop button is on the island; o2, with pause only, is in the list under it.
    static func model() -> PresenterModel {
        func item(_ id: String, _ action: String, _ name: String) -> JSON {
            guard
                case .object(var object) = F.item(
                    id: id, app: "org.example.\(name)", type: "Order", state: ["stage": "ready"],
                    layout: [
                        "compactLeading": ["type": "text", "template": "{{state.stage}}"],
                        "lockScreen": [
                            "type": "vstack",
                            "children": [
                                ["type": "text", "template": .string("\(name) order {{state.stage}}")],
                                ["type": "button", "action": .string(action), "label": "Press"],
                            ],
                        ],
                    ])
            else { return .null }
            object["appName"] = JSON.string(name)
            return .object(object)
        }
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "o1", lockScreen: ["o1", "o2"]),
                items: [item("o1", "stop", "Coffee"), item("o2", "pause", "Music")]))
        return model
    }

    @Test func theNamedActivitysButtonIsLookedUpNotTheIslands() {
        let scene = IslandScene(model: Self.model(), now: F.now)
        #expect(scene.button("stop") == .found(id: "o1"))
        #expect(scene.button("pause", of: "o2") == .found(id: "o2"))
        // The island's activity has stop; the one named has not: refused, not pressed on o1.
        #expect(scene.button("stop", of: "o2") == .missing(id: "o2", available: ["pause"]))
        #expect(scene.button("stop", of: "o3") == .noActivity)
    }

    @Test func anActivityIsNamedByItsAppItsTitleAndItsID() throws {
        let scene = IslandScene(model: Self.model(), now: F.now)
        #expect(IslandScene.naming(try #require(scene.entry("o2"))) == "Music's \"Music order ready\" (id o2)")
        #expect(scene.entry("o3") == nil)
    }

    /// Eight cards on a terminal with room for two: each selected card is drawn whole, its
    /// title row a place keys act on, and the heading says how many are above.
    @Test func theListScrollsToTheSelectedCard() {
        let ids = (1...8).map { "a\($0)" }
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "a1", lockScreen: ids),
                items: ids.map { F.item(id: $0, app: "org.example.App", type: "Card \($0)", state: [:], layout: nil) }))
        let frame = TerminalFrame(columns: 60, rows: 16)
        let scene = IslandScene(model: model, now: F.now)
        for (index, id) in ids.enumerated() {
            let (lines, places) = frame.layout(scene, chrome: TerminalChrome(selected: id))
            let text = lines.map(\.plain)
            guard let row = places.cards[id] else {
                Issue.record("card \(id) not on screen: \(text)")
                continue
            }
            #expect(text[row].hasPrefix("▶ ╭"), "\(id): \(text)")
            #expect(text[row...].contains { $0.hasPrefix("  ╰") }, "\(id): its card is cut: \(text)")
            // The heading says so exactly when cards before the selected one are left out.
            let heading = text.first { $0.hasPrefix("  Lock Screen") } ?? ""
            let hiddenAbove = ids[..<index].filter { places.cards[$0] == nil }.count
            #expect(heading == "  Lock Screen" + (hiddenAbove > 0 ? "  ↑ \(hiddenAbove) more" : ""), "\(id): \(heading)")
            if id == ids.last { #expect(hiddenAbove > 0) }
        }
    }
}
