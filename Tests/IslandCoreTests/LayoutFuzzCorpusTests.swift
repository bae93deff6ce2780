import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// The fuzz corpus of Fuzz/Corpus/fuzz-layout, replayed in a debug build with assertions: every
/// input is refused with a reason or validates, and a valid layout reads back the same from its
/// own document and renders.
@Suite struct LayoutFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/fuzz-layout")

    @Test func everyInputValidatesOrIsRefused() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count > 10)
        // A renderer per input, as presenters make one per render: its work budget is one render's.
        let renderer = {
            LayoutRenderer(
                attributes: ["order": "A-17", "items": ["a", 1, nil]],
                state: ["stage": "brewing", "minutes": 4, "progress": 0.5, "start": 1_700_000_000], now: 1_700_000_100)
        }
        var valid = 0
        for file in files {
            let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            guard let json = try? JSONParser.parse(bytes) else { continue }
            let layout: Layout
            do {
                layout = try Layout(json: json)
            } catch {
                #expect(!error.reason.isEmpty, "\(file)")
                continue
            }
            valid += 1
            #expect(try Layout(json: .object(layout.json)) == layout, "\(file)")
            _ = renderer().render(layout)
        }
        #expect(valid > 0)
    }
}
