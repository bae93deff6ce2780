// libFuzzer target `fuzz-presenter`: what a producer's state and an extension's layout become
// in every presenter sink (docs/design.md §6). Built only by scripts/fuzz.sh (ISLAND_FUZZ=1); see
// Fuzz/README.md.
//
// bytes → JSONParser → an object {"type", "app", "appName", "appIcon", "attributes", "state",
//         "layout", "alert", "activityState", "now"} (any member may be missing or of the wrong type) → an item as
//         the daemon delivers it (the layout validated, else the default layout built from the
//         state's shape) → a presenter model in each island mode (none, compact, minimal,
//         expanded) → every sink: the four bar formats, the SVG of `snapshot` and `preview
//         --svg` (the overlay's painter on cairo's SVG surface), the terminal frame of `tui`, and the text `island preview` prints.
//
// Invariants (fatalError when broken): no trap anywhere (numbers of any size: timers, progress,
// segments, points); no bar line holds a control character; waybar and i3blocks lines are JSON
// objects, waybar's markup fields (text, alt, tooltip) hold no tag and only the three entities, i3blocks says
// "markup": "none"; a polybar line has no `%{` and cannot form one with the label around it;
// the SVG is well-formed XML with no `nan` or `inf`, producer text only in its <title> and
// <desc>; the terminal output holds no control
// character but the presenter's own CSI sequences. The rules are Tests/SinkRules, shared
// with the unit tests.

import Foundation
import FuzzSupport
import Glibc
import IslandCore
import OrderedJSON
import IslandOverlay
import IslandPresenter
import OrderedCollections
import SinkRules

private func fail(_ what: String, _ output: String) -> Never {
    fatalError("\(what): \(output.debugDescription)")
}

private func fuzzOne(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(UnsafeRawBufferPointer(bytes)), let input = json.objectValue else { return }
    let type = input["type"]?.stringValue ?? "Fuzz"
    let attributes = input["attributes"]?.objectValue ?? [:]
    let state = input["state"]?.objectValue ?? [:]
    let layout = input["layout"].flatMap { try? Layout(json: $0) }
    var item: JSONObject = [
        "id": "a", "app": .string(input["app"]?.stringValue ?? "org.example.Fuzz"), "type": .string(type),
        "attributes": .object(attributes), "content": ["state": .object(state)],
        "state": .string(input["activityState"]?.stringValue ?? "active"),
        "layout": .object((layout ?? Layout.default(for: type, attributes: attributes, state: state)).json),
        "defaultLayout": .bool(layout == nil),
    ]
    // The desktop entry's Name= and Icon= reach every sink too.
    for key in ["appName", "appIcon"] { if let value = input[key]?.stringValue { item[key] = .string(value) } }
    if let staleDate = input["staleDate"] { item["content"] = ["state": .object(state), "staleDate": staleDate] }
    let now = input["now"]?.doubleValue ?? 1_700_000_000
    let islands: [JSON] = [
        ["mode": "none", "lockScreen": ["a"]],
        ["mode": "compact", "attached": "a", "lockScreen": ["a"]],
        ["mode": "minimal", "attached": "a", "detached": "a", "lockScreen": ["a"]],
        ["mode": "expanded", "attached": "a", "expanded": "a", "lockScreen": ["a"]],
    ]
    for island in islands {
        var model = PresenterModel()
        _ = model.apply(["kind": "snapshot", "sequence": 0, "island": island, "items": [.object(item)], "removed": []])
        if let alert = input["alert"] {
            _ = model.apply(["kind": "delta", "sequence": 1, "items": [], "removed": [], "alert": alert])
        }
        let scene = IslandScene(model: model, now: now)
        for format in BarFormat.allCases { check(format.line(for: scene), format) }
        checkSVG(OverlaySnapshot.svg(scene, painter: painter))
        for size in [(20, 6), (80, 24)] {
            let frame = TerminalFrame(columns: size.0, rows: size.1)
            let chrome = TerminalChrome(selected: "a", message: state["message"]?.stringValue)
            for line in frame.render(scene, chrome: chrome) { checkTerminal(line.ansi(columns: frame.columns)) }
        }
        // `island preview` prints each region's plain text, and JSON with --json.
        for entry in [scene.primary].compactMap({ $0 }) + scene.lockScreen {
            for region in entry.layout.regions {
                checkTerminal(TerminalText.sanitize(region.view.plainText))
                checkTerminal(TerminalText.json(JSON.string(region.view.plainText).description))
            }
        }
    }
}

private func check(_ line: String, _ format: BarFormat) {
    if let problem = SinkRules.violation(bar: line, format) { fail("\(format): \(problem)", line) }
}

/// One painter for every input: its Pango context and caches are made once.
nonisolated(unsafe) private let painter = OverlayPainter(icons: nil)

private func checkSVG(_ document: String?) {
    guard let document else { fail("SVG: cairo drew nothing", "") }
    if let problem = SinkRules.violation(svg: document) { fail("SVG: \(problem)", document) }
}

private func checkTerminal(_ output: String) {
    if let problem = SinkRules.violation(terminal: output) { fail("terminal: \(problem)", output) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    onSmallStack { fuzzOne(bytes) }
    return 0
}
