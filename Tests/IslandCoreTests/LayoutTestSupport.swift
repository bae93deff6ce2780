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
