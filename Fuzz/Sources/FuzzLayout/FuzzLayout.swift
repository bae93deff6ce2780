// libFuzzer target `fuzz-layout`: what an extension's layout goes through (docs/design.md §6).
// Built only by scripts/fuzz.sh (ISLAND_FUZZ=1); see Fuzz/README.md.
//
// bytes → JSONParser (as an installed layout file is read) → Layout(json:) (the validation
//         RegisterLayout runs) → for a valid layout: validate its own document again (same
//         result), and render it with LayoutRenderer against a fixed activity, as presenters do:
//         within its work budget, and no text longer than LayoutLimits.maximumRenderedBytes.
//
// Each input runs on a thread with a small stack (see onSmallStack). Errors are expected; a
// trap, a sanitizer report or a broken invariant (fatalError) is a bug.

import FuzzSupport
import Glibc
import IslandCore
import OrderedJSON
import OrderedCollections

/// An activity with values of every JSON type under names the seeds and dictionary use.
private let attributes: JSONObject = [
    "order": "A-17", "shop": "Corner Café", "drink": "Flat white", "flight": "LH 1234",
    "from": "FRA", "to": "CDG", "total": 10, "items": ["one", "two", ["three"]],
    "nested": ["a": ["b": ["c": "deep"]]], "empty": "", "zero": 0, "none": nil, "yes": true,
]
private let state: JSONObject = [
    "stage": "brewing", "stageTitle": "Brewing", "minutes": 4, "etaMinutes": 3.5, "progress": 0.25,
    "start": 1_700_000_000, "end": 1_700_003_600, "eta": "1700001800", "stamps": 7, "done": false,
    "count": -3, "huge": 1e300, "tiny": -1e-300, "text": "x y\u{0}z", "html": "<a href=\"x\">&amp;</a>",
    "list": [1, 2.5, "three", nil, true, ["k": "v"]], "map": ["k": "v", "n": 1], "null": nil,
    "url": "https://example.com/a b", "scheme": "javascript:alert(1)", "emoji": "👨‍👩‍👧",
]
private func fuzzOne(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(UnsafeRawBufferPointer(bytes)) else { return }
    let layout: Layout
    do {
        layout = try Layout(json: json)
    } catch {
        _ = error.description
        return
    }
    // What presenters receive validates again, to the same layout.
    let again: Layout
    do {
        again = try Layout(json: .object(layout.json))
    } catch {
        fatalError("a valid layout's own document is refused: \(error)")
    }
    if again != layout { fatalError("a valid layout reads back differently") }

    // A renderer per input: its work budget is one render's.
    let rendered = LayoutRenderer(attributes: attributes, state: state, now: 1_700_000_900).render(layout)
    for region in [
        rendered.lockScreen, rendered.compactLeading, rendered.compactTrailing, rendered.minimal,
        rendered.expandedLeading, rendered.expandedTrailing, rendered.expandedCenter, rendered.expandedBottom,
    ] {
        guard let region else { continue }
        checkTextBounded(region.view)
        if let url = region.url, url.utf8.count > LayoutLimits.maximumRenderedBytes { fatalError("a URL past the output bound") }
    }
}

/// Every text a template rendered is within the output bound.
private func checkTextBounded(_ view: RenderedView) {
    switch view {
    case .text(let text), .button(_, let text, _):
        if text.utf8.count > LayoutLimits.maximumRenderedBytes { fatalError("a text of \(text.utf8.count) bytes, past the output bound") }
    case .hstack(let children, _), .vstack(let children, _): children.forEach(checkTextBounded)
    case .link(_, let child): checkTextBounded(child)
    case .image(let path, let fallback):
        // Only a clean absolute path renders as a picture (LocalFile); anything else is the fallback.
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.first != "" || segments.dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) || path.utf8.count > 1000 {
            fatalError("an image of the path \(path.debugDescription)")
        }
        fallback.map(checkTextBounded)
    default: break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    onSmallStack { fuzzOne(bytes) }
    return 0
}
