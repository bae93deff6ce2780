import IslandCore
import OrderedJSON
import Testing

/// Parses JSON text written in a test; a typo in the test itself fails loudly.
func json(_ text: String) throws -> JSON {
    try JSONParser.parse(text)
}

func jsonObject(_ text: String) throws -> JSONObject {
    try #require(try json(text).objectValue)
}

/// The error a layout document fails with, or nil when it is valid.
func layoutError(_ text: String) throws -> LayoutError? {
    let document = try json(text)
    do {
        _ = try Layout(json: document)
        return nil
    } catch {
        return error
    }
}

extension RenderedRegion {
    var text: String { view.plainText }
}

// One typed `#expect` each for the comparisons the layout suites make most. An
// `#expect(layout.minimal?.text == "10:00")` at every call site costs the test build 10-60 ms more
// of type-checking than a call of these (the literal's type is inferred through the macro's
// expansion); a failure still shows both values, at the caller's line.

/// Expects `region` to read `expected` as plain text (nil: no region).
func expectText(_ region: RenderedRegion?, _ expected: String?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(region?.text == expected, comment, sourceLocation: sourceLocation)
}

/// Expects `region` to draw `expected` (nil: no region).
func expectView(_ region: RenderedRegion?, _ expected: RenderedView?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(region?.view == expected, comment, sourceLocation: sourceLocation)
}
