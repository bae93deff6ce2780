import Foundation
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

    /// The default layout shows times of day in the local zone; the goldens are drawn in UTC.
    static func inUTC() -> Bool {
        if TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: OverlayGallery.now)) != 0 {
            setenv("TZ", "UTC", 1)
            NSTimeZone.resetSystemTimeZone()
        }
        return TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: OverlayGallery.now)) == 0
    }

    @Test func everyFormOfTheExampleAppsMatchesItsGolden() throws {
        try #require(Self.inUTC(), "the local time zone could not be set to UTC")
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
