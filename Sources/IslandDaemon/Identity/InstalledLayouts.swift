import Foundation
import IslandCore
import OrderedJSON
import Logging

/// Layouts installed with apps, as `island/layouts/<app>/<type>.json` in the XDG data
/// directories (docs/design.md §6). A directory earlier in the search path hides later ones; a
/// file that is not a valid layout is skipped with a warning naming it, so one broken package
/// cannot take the others' layouts down.
enum InstalledLayouts {
    static func scan(dataDirectories: [String], logger: Logger) -> [String: [String: JSON]] {
        var layouts: [String: [String: JSON]] = [:]
        let fm = FileManager.default
        for directory in dataDirectories {
            let root = directory + "/island/layouts"
            guard let apps = try? fm.contentsOfDirectory(atPath: root) else { continue }
            for app in apps.sorted() {
                guard let files = try? fm.contentsOfDirectory(atPath: root + "/" + app) else { continue }
                for file in files.sorted() where file.hasSuffix(".json") {
                    let type = String(file.dropLast(".json".count))
                    guard layouts[app]?[type] == nil else { continue }
                    let path = "\(root)/\(app)/\(file)"
                    do {
                        let data = try Data(contentsOf: URL(fileURLWithPath: path))
                        let json = try JSONParser.parse(Array(data))
                        _ = try Layout(json: json)
                        layouts[app, default: [:]][type] = json
                    } catch {
                        logger.warning("skipping an installed layout", metadata: ["path": "\(path)", "error": "\(error)"])
                    }
                }
            }
        }
        return layouts
    }
}
