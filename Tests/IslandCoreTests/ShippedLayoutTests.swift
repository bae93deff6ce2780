import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// Every layout shipped in packaging/layouts validates, so a package never installs a layout
/// the daemon would skip.
@Suite struct ShippedLayoutTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging/layouts")

    static var files: [String] {
        let paths = FileManager.default.enumerator(atPath: root.path)?.allObjects.compactMap { $0 as? String } ?? []
        return paths.filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func theFiveExamplesAndTheBridgesFourShip() {
        #expect(Self.files.count == 9, "\(Self.files)")
        #expect(
            Self.files.filter { $0.hasPrefix("org.island.bridge/") }
                == [
                    "org.island.bridge/NowPlaying.json", "org.island.bridge/PrivateProgress.json", "org.island.bridge/Progress.json",
                    "org.island.bridge/Transfer.json",
                ])
    }

    @Test(arguments: files)
    func validates(path: String) throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent(path))
        let layout = try Layout(json: try JSONParser.parse(Array(data)))
        #expect(layout.chip != nil, "examples carry a chip for bars")
        let rendered = LayoutRenderer(attributes: [:], state: [:], now: 0).render(layout)
        #expect(rendered.compactLeading != nil && rendered.lockScreen != nil)
    }
}
