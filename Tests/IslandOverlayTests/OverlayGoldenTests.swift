import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandOverlay

/// Every form of the five example apps rendered off-screen (cairo image surfaces, no display)
/// and compared with the PNGs in Goldens/ within a tolerance: antialiasing and font hinting may
/// move a few edge pixels, a changed geometry or colour moves many.
///
/// Regenerate after an intended change, then look at every image:
///   ISLAND_UPDATE_GOLDENS=1 swift test --filter OverlayGoldenTests
@Suite struct OverlayGoldenTests {
    static let goldens = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens").path
    static let layouts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging/layouts").path

    // The default layout shows times of day; the gallery draws them in UTC whatever this
    // machine's zone (`OverlayGallery.timeZone`), as the goldens were.

    @Test func everyFormOfTheExampleAppsMatchesItsGolden() throws {
        let update = ProcessInfo.processInfo.environment["ISLAND_UPDATE_GOLDENS"] == "1"
        let output = update ? Self.goldens : NSTemporaryDirectory() + "island-overlay-goldens-\(getpid())"
        defer { if !update { try? FileManager.default.removeItem(atPath: output) } }
        let files = try OverlayGallery.render(to: output, layoutsDirectory: Self.layouts)
        #expect(files.count == 21)
        guard !update else { return }
        for file in files {
            let name = URL(fileURLWithPath: file).lastPathComponent
            let golden = Self.goldens + "/" + name
            let difference = try #require(ImageDifference.compare(file, golden), "no golden \(name): run with ISLAND_UPDATE_GOLDENS=1")
            #expect(difference.sameSize, "\(name): size differs from the golden")
            #expect(difference.differingFraction < 0.01, "\(name): \(difference.differingFraction * 100)% of pixels differ")
        }
    }

    @Test func theComparisonSeesAChangedImage() throws {
        let directory = NSTemporaryDirectory() + "island-overlay-diff-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try OverlayGallery.render(to: directory, layoutsDirectory: Self.layouts)
        let compact = try #require(files.first { $0.hasSuffix("coffee-compact.png") })
        let other = try #require(files.first { $0.hasSuffix("pomodoro-compact.png") })
        let same = try #require(ImageDifference.compare(compact, compact))
        #expect(same.differingFraction == 0)
        let changed = try #require(ImageDifference.compare(compact, other))
        #expect(!changed.sameSize || changed.differingFraction > 0.01)
    }
}

@Suite struct OverlayPaintingTests {
    /// Producer text through the real Pango painter: markup stays text, controls and huge
    /// strings neither crash nor escape, extreme numbers draw nothing odd.
    @Test func hostileContentPaintsWithoutCrashing() throws {
        let progress: JSON = [
            "type": "progress", "value": "{{state.big}}", "total": 1,
            "segments": [["length": 1e300], ["length": 1]], "points": [["position": 1e300]],
        ]
        let lockScreen: JSON = [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "{{state.text}}"], progress, ["type": "timer", "to": "{{state.big}}"],
            ],
        ]
        let bottom: JSON = ["type": "button", "action": "x", "label": "{{state.text}}", "symbol": "../../etc/passwd", "priority": 0]
        let hostile: JSON = [
            "compactLeading": ["type": "symbol", "name": "{{state.icon}}"],
            "compactTrailing": ["type": "text", "template": "{{state.text}}"],
            "minimal": ["type": "progress", "value": "{{state.big}}", "total": 1e-300],
            "lockScreen": lockScreen,
            "expanded": ["bottom": bottom],
        ]
        _ = try Layout(json: hostile)
        let text = "<span foreground='red'>&amp;</span>\u{1B}[31m\n\t\u{0}" + String(repeating: "👩‍👩‍👧‍👦", count: 10_000)
        let state: JSONObject = ["text": .string(text), "big": 1e300, "icon": .string(String(repeating: "a", count: 5000))]
        let items = [Scenes.item("h", layout: hostile, state: state), Scenes.item("g", app: "org.example.Other", layout: hostile, state: state)]
        let painter = OverlayPainter()
        let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 700, top: 8, metrics: painter.metrics)
        let directory = NSTemporaryDirectory() + "island-overlay-hostile-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let islands: [JSONObject] = [
            ["mode": "compact", "attached": "h"], ["mode": "minimal", "attached": "h", "detached": "g"],
            ["mode": "expanded", "attached": "h", "expanded": "h"],
        ]
        for (index, island) in islands.enumerated() {
            let frame = layout.frame(Scenes.scene(island, items: items), listOpen: true)
            let path = "\(directory)/\(index).png"
            #expect(painter.writePNG(frame, crop: OverlayRect(x: 0, y: 0, width: 440, height: 700), to: path))
            for placed in frame.content {
                if case .text(let line, _, _, _) = placed.primitive { #expect(line.unicodeScalars.count <= 513) }
            }
        }
    }
}
