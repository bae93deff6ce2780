import CPangoCairo
package import Foundation
import IslandCore
import OrderedJSON
import IslandProtocol
package import IslandPresenter
import OrderedCollections

/// Every form of the five example apps (packaging/applications + packaging/layouts), as the
/// demo plays them, at a fixed instant: what the golden images and the README gallery show.
package enum OverlayGallery {
    package static let now = 1_795_000_000.0

    struct Example {
        var name: String, id: String, app: String, type: String
        var attributes: JSONObject, state: JSONObject
        var alert: (title: String, body: String)
    }

    static let examples: [Example] = [
        Example(
            name: "coffee", id: "coffee", app: "org.island.example.Coffee", type: "CoffeeOrder",
            attributes: ["shop": "Blue Bottle", "order": "A17"],
            state: ["stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7],
            alert: ("Your coffee is on the way", "Blue Bottle · order A17, about 3 min")),
        Example(
            name: "fasting", id: "fast", app: "org.island.example.Fasting", type: "Fast",
            attributes: ["plan": "16:8", "startedAt": .double(now - 36000), "goalAt": .double(now + 21600)],
            state: ["percent": 62], alert: ("Fast at 62%", "6 hours to your 16:8 goal")),
        Example(
            name: "pomodoro", id: "focus", app: "org.island.example.Pomodoro", type: "Pomodoro",
            attributes: ["task": "Write the report", "rounds": 4],
            state: ["phase": "Focus", "round": 1, "startedAt": .double(now - 300), "endsAt": .double(now + 1200)],
            alert: ("Focus round 1 of 4", "Write the report · 20 min left")),
        Example(
            name: "flights", id: "flight", app: "org.island.example.Flights", type: "Flight",
            attributes: ["flight": "LH 454", "origin": "FRA", "destination": "SFO"],
            state: ["status": "inFlight", "inFlight": true, "eta": "14:05", "departedAt": .double(now - 14000), "arrivesAt": .double(now + 25600)],
            alert: ("LH 454 departed", "Arriving in San Francisco at 14:05")),
        Example(
            name: "fooddelivery", id: "food", app: "org.island.example.FoodDelivery", type: "FoodOrder",
            attributes: ["restaurant": "Pizza Place"], state: ["step": 2, "minutesLeft": 18, "courier": "Sam"],
            alert: ("Sam picked up your order", "Pizza Place · 18 min")),
    ]

    /// Where the example layouts are: `packaging/layouts` in a source tree, else installed.
    package static func defaultLayoutsDirectory(sourceFile: String = #filePath) -> String {
        let source = URL(fileURLWithPath: sourceFile).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/layouts").path
        for candidate in ["packaging/layouts", source, "/usr/share/island/layouts"] where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return "packaging/layouts"
    }

    static func item(_ example: Example, layoutsDirectory: String) throws -> JSON {
        let path = "\(layoutsDirectory)/\(example.app)/\(example.type).json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let layout = try JSONParser.parse(text)
        typealias Item = PresenterNames.Item
        typealias Content = PresenterNames.Content
        // Name= and Icon= of the app's desktop entry, as the daemon sends them.
        let entry = (try? String(contentsOfFile: "\(layoutsDirectory)/../applications/\(example.app).desktop", encoding: .utf8)) ?? ""
        var object: JSONObject = [:]
        for line in entry.split(separator: "\n") {
            if line.hasPrefix("Name=") { object[Item.appName] = .string(String(line.dropFirst(5))) }
            if line.hasPrefix("Icon=") { object[Item.appIcon] = .string(String(line.dropFirst(5))) }
        }
        return .object(
            object.merging(
                [
                    Item.id: .string(example.id), Item.app: .string(example.app), Item.type: .string(example.type),
                    Item.attributes: .object(example.attributes),
                    Item.content: [Content.state: .object(example.state), Content.relevanceScore: 0.0], Item.state: "active",
                    Item.createdAt: .double(now - 600), Item.layout: layout, Item.defaultLayout: false,
                ], uniquingKeysWith: { _, new in new }))
    }

    /// The named scenes: `<app>-compact`, `-minimal` (with the next app detached), `-expanded`,
    /// `-alert`, and `list` (the five in the lock-screen list under the compact island).
    /// The zone the gallery's times of day are drawn in, so that its images come out the same
    /// wherever they are drawn.
    package static let timeZone = TimeZone(identifier: "UTC")!

    package static func scenes(
        layoutsDirectory: String, timeZone: TimeZone = OverlayGallery.timeZone
    ) throws -> [(name: String, scene: IslandScene, listOpen: Bool)] {
        let items = try examples.map { try item($0, layoutsDirectory: layoutsDirectory) }
        let ids = examples.map(\.id)
        typealias Update = PresenterNames.Update
        typealias Island = PresenterNames.Island
        typealias Mode = PresenterNames.Island.Mode
        func scene(_ island: JSONObject, alert: JSON? = nil) -> IslandScene {
            var model = PresenterModel()
            var full = island
            full[Island.lockScreen] = .array(ids.map { .string($0) })
            model.apply([
                Update.kind: .string(Update.Kind.snapshot), Update.sequence: 1, Update.resync: false, Update.island: .object(full),
                Update.items: .array(items), Update.removed: [],
            ])
            if let alert {
                model.apply([
                    Update.kind: .string(Update.Kind.delta), Update.sequence: 2, Update.resync: false, Update.items: [], Update.removed: [],
                    Update.alert: alert,
                ])
            }
            return IslandScene(model: model, now: now, timeZone: timeZone)
        }
        var result: [(String, IslandScene, Bool)] = []
        for (index, example) in examples.enumerated() {
            let other = examples[(index + 1) % examples.count]
            let expanded: JSONObject = [Island.mode: .string(Mode.expanded), Island.attached: .string(example.id), Island.expanded: .string(example.id)]
            result.append(("\(example.name)-compact", scene([Island.mode: .string(Mode.compact), Island.attached: .string(example.id)]), false))
            result.append(
                (
                    "\(example.name)-minimal",
                    scene([Island.mode: .string(Mode.minimal), Island.attached: .string(example.id), Island.detached: .string(other.id)]), false
                ))
            result.append(("\(example.name)-expanded", scene(expanded), false))
            typealias Alert = PresenterNames.Alert
            let alert: JSON = [Alert.id: .string(example.id), Alert.title: .string(example.alert.title), Alert.body: .string(example.alert.body)]
            result.append(("\(example.name)-alert", scene(expanded, alert: alert), false))
        }
        result.append(("list", scene([Island.mode: .string(Mode.compact), Island.attached: .string(ids[2])]), true))
        return result
    }

    /// The background the gallery draws the island on: sway's default grey.
    package static let backdrop = OverlayColor(red: 0.78, green: 0.78, blue: 0.78)

    /// Renders every scene to `<directory>/<name>.png`, cropped to the island with a margin,
    /// its times of day in `timeZone`. Returns the files written.
    package static func render(
        to directory: String, layoutsDirectory: String, scale: Int = 1, painter: OverlayPainter = OverlayPainter(),
        timeZone: TimeZone = OverlayGallery.timeZone
    ) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var written: [String] = []
        let layout = OverlayLayout(canvasHeight: 700, top: 8, geometry: painter.style.geometry, metrics: painter.metrics)
        for (name, scene, listOpen) in try scenes(layoutsDirectory: layoutsDirectory, timeZone: timeZone) {
            let frame = layout.frame(scene, listOpen: listOpen)
            let bounds = frame.bounds
            // The canvas's width, so every image of the gallery lines up; the height follows the form.
            let crop = OverlayRect(x: 0, y: 0, width: layout.canvasWidth, height: (bounds.maxY + 8).rounded(.up))
            let path = "\(directory)/\(name).png"
            guard painter.writePNG(frame, crop: crop, scale: scale, background: backdrop, to: path) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            written.append(path)
        }
        return written
    }
}

/// How far two PNG images are apart: for golden-image tests.
package struct ImageDifference: Sendable, Hashable {
    package var sameSize: Bool
    /// The share of pixels where some channel differs by more than the threshold.
    package var differingFraction: Double
    package var maximumChannelDifference: Int

    /// Compares two PNG files; nil when either cannot be read.
    package static func compare(_ a: String, _ b: String, threshold: Int = 48) -> ImageDifference? {
        guard let first = cairo_image_surface_create_from_png(a), let second = cairo_image_surface_create_from_png(b) else { return nil }
        defer { cairo_surface_destroy(first); cairo_surface_destroy(second) }
        guard cairo_surface_status(first) == CAIRO_STATUS_SUCCESS, cairo_surface_status(second) == CAIRO_STATUS_SUCCESS else { return nil }
        cairo_surface_flush(first)
        cairo_surface_flush(second)
        let width = cairo_image_surface_get_width(first), height = cairo_image_surface_get_height(first)
        guard width == cairo_image_surface_get_width(second), height == cairo_image_surface_get_height(second),
            cairo_image_surface_get_format(first) == cairo_image_surface_get_format(second)
        else {
            return ImageDifference(sameSize: false, differingFraction: 1, maximumChannelDifference: 255)
        }
        let strideA = Int(cairo_image_surface_get_stride(first)), strideB = Int(cairo_image_surface_get_stride(second))
        guard let pa = cairo_image_surface_get_data(first), let pb = cairo_image_surface_get_data(second) else { return nil }
        var differing = 0, maximum = 0
        for y in 0..<Int(height) {
            for x in 0..<Int(width) {
                var worst = 0
                for channel in 0..<4 {
                    worst = max(worst, abs(Int(pa[y * strideA + x * 4 + channel]) - Int(pb[y * strideB + x * 4 + channel])))
                }
                maximum = max(maximum, worst)
                if worst > threshold { differing += 1 }
            }
        }
        return ImageDifference(
            sameSize: true, differingFraction: Double(differing) / Double(max(1, Int(width) * Int(height))), maximumChannelDifference: maximum)
    }
}
