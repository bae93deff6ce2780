import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import IslandOverlay
import SinkRules
@testable import IslandPresenter

/// Every sink's output for hostile items, checked against `SinkRules`.
enum SinkChecks {
    /// The island modes a model can show one activity `a` in; the lock screen lists it in each.
    static let islands: [(String, JSON)] = [
        ("none", ["mode": "none", "lockScreen": ["a"]]),
        ("compact", ["mode": "compact", "attached": "a", "lockScreen": ["a"]]),
        ("minimal", ["mode": "minimal", "attached": "a", "detached": "a", "lockScreen": ["a"]]),
        ("expanded", ["mode": "expanded", "attached": "a", "expanded": "a", "lockScreen": ["a"]]),
    ]

    /// The updates a daemon sends for `item` shown in `island`, with `alert` after.
    static func updates(item: JSON, island: JSON, alert: JSON?) -> [JSONObject] {
        var updates: [JSONObject] = [["kind": "snapshot", "sequence": 0, "island": island, "items": [item], "removed": []]]
        if let alert { updates.append(["kind": "delta", "sequence": 1, "items": [], "removed": [], "alert": alert]) }
        return updates
    }

    static func model(item: JSON, island: JSON, alert: JSON? = nil) -> PresenterModel {
        var model = PresenterModel()
        for update in updates(item: item, island: island, alert: alert) { model.apply(update) }
        return model
    }

    /// Every sink's output for `item` in every island mode, one entry per broken rule: the
    /// four bar formats, SVG (the overlay's painter on cairo's SVG surface), and the terminal presenter (drawn by its controller, with a tap
    /// that returns `tapURL`).
    static func violations(item: JSON, alert: JSON? = nil, now: Double, tapURL: String? = nil) async -> [String] {
        var found: [String] = []
        let painter = OverlayPainter(icons: nil)
        for (name, island) in islands {
            let scene = IslandScene(model: model(item: item, island: island, alert: alert), now: now)
            for format in BarFormat.allCases {
                let line = format.line(for: scene)
                if let problem = SinkRules.violation(bar: line, format) { found.append("\(format) \(name): \(problem): \(line.debugDescription)") }
            }
            if let document = OverlaySnapshot.svg(scene, painter: painter) {
                if let problem = SinkRules.violation(svg: document) { found.append("svg \(name): \(problem)") }
            } else {
                found.append("svg \(name): cairo drew nothing")
            }
            for size in [(columns: 20, rows: 6), (columns: 100, rows: 40)] {
                let output = await terminalOutput(updates: updates(item: item, island: island, alert: alert), now: now, size: size, tapURL: tapURL)
                if let problem = SinkRules.violation(terminal: output) {
                    found.append("tui \(name) \(size.columns)x\(size.rows): \(problem): \(output.debugDescription)")
                }
            }
        }
        return found
    }

    /// What the terminal presenter writes for the updates: a redraw each, then a tap (its
    /// message on the status line) and a press of the first button.
    static func terminalOutput(updates: [JSONObject], now: Double, size: (columns: Int, rows: Int), tapURL: String?) async -> String {
        let written = Written()
        let controller = TUIController(
            io: .init(
                write: { written.append($0) }, size: { size }, clock: { now }, open: { _ in false },
                interact: { _, _, _ in tapURL }, monotonic: TUIControllerTests.aSecondPerRead()))
        for update in updates { await controller.handle(.update(update)) }
        _ = await controller.press(.tap)
        _ = await controller.press(.button(1))
        return written.text
    }
}

final class Written: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    func append(_ text: String) { lock.withLock { buffer += text } }
    var text: String { lock.withLock { buffer } }
}
