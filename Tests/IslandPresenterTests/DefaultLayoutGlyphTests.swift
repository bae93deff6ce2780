import IslandCore
import OrderedJSON
@testable import IslandPresenter
import OrderedCollections
import Testing

/// Text-only presenters show a glyph for every symbol the default layout chooses, never the
/// bullet that stands for an icon name no entry knows.
@Suite struct DefaultLayoutGlyphTests {
    @Test func everySymbolOfTheDefaultLayoutHasAGlyph() {
        let shapes: [(JSONObject, JSONObject)] = [
            (["command": "make"], ["status": "running", "startedAt": 1]),
            (["command": "make"], ["status": "failed", "exitStatus": 2, "duration": 1]),
            (["command": "make"], ["status": "succeeded", "exitStatus": 0, "duration": 1]),
            (["title": "Tea"], ["endsAt": 100, "paused": false]),
            (["title": "Tea", "duration": 600], ["paused": true, "remaining": 10]),
            (["title": "Tea"], ["endsAt": 100, "done": true]),
            (["title": "Tea"], ["endsAt": 100, "cancelled": true]),
            (["title": "Tea"], ["endsAt": 100, "failed": true]),
        ]
        for (attributes, state) in shapes {
            let item = PresenterItem(id: "a", app: "x", type: "T", attributes: attributes, state: state)
            guard case .symbol(let name)? = item.render(now: 50).compactLeading?.view else {
                Issue.record("no symbol for \(state)")
                continue
            }
            #expect(RenderedView.glyph(forSymbol: name) != RenderedView.unknownIconGlyph, "\(name)")
        }
    }
}
