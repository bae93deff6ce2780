import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

/// The corpus of Fuzz/Corpus/fuzz-presenter, replayed in a debug build with assertions: each
/// input (a state, a layout, an alert…) is rendered as the fuzz target does, in every island mode
/// and every sink, and must break none of `SinkChecks`' rules.
@Suite struct PresenterFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/fuzz-presenter")

    /// The item the fuzz target builds from an input; nil when the input is not a JSON object.
    static func item(_ bytes: [UInt8]) -> (item: JSON, alert: JSON?, now: Double, validLayout: Bool)? {
        guard let input = (try? JSONParser.parse(bytes))?.objectValue else { return nil }
        let type = input["type"]?.stringValue ?? "Fuzz"
        let attributes = input["attributes"]?.objectValue ?? [:]
        let state = input["state"]?.objectValue ?? [:]
        let layout = input["layout"].flatMap { try? Layout(json: $0) }
        var content: JSONObject = ["state": .object(state)]
        if let staleDate = input["staleDate"] { content["staleDate"] = staleDate }
        let item: JSON = [
            "id": "a", "app": .string(input["app"]?.stringValue ?? "org.example.Fuzz"), "type": .string(type),
            "attributes": .object(attributes), "content": .object(content),
            "state": .string(input["activityState"]?.stringValue ?? "active"),
            "layout": .object((layout ?? Layout.default(for: type, attributes: attributes, state: state)).json),
            "defaultLayout": .bool(layout == nil),
        ]
        return (item, input["alert"], input["now"]?.doubleValue ?? 1_700_000_000, layout != nil)
    }

    @Test func everyInputRendersSafelyInEverySink() async throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count >= 10)
        var rendered = 0, withLayout = 0
        for file in files {
            let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            guard let input = Self.item(bytes) else { continue }
            rendered += 1
            if input.validLayout { withLayout += 1 }
            let found = await SinkChecks.violations(item: input.item, alert: input.alert, now: input.now)
            #expect(found.isEmpty, "\(file): \(found)")
        }
        #expect(rendered > 0)
        #expect(withLayout > 0)
    }
}
