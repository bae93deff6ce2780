import Foundation
import IslandCore
import OrderedJSON
import Logging
import SmallFiles

/// Layouts installed with apps, as `island/layouts/<app>/<type>.json` in the XDG data
/// directories (docs/design.md §6). A directory earlier in the search path hides later ones; a
/// file that is not a valid layout is skipped, and named with why (in the log, and in
/// `org.island.Admin.Reload`'s reply), so one broken package cannot take the others' layouts
/// down.
///
/// Any program that may write to a data directory can put anything there: each file is read
/// by `readRegularFile` (only a regular file, at most `maximumFileBytes`), at most
/// `maximumVisitedFiles` names are looked at per data directory, and the scan runs on the
/// daemon's file thread (`FileReads`).
enum InstalledLayouts {
    /// A layout file that was not taken, and why.
    struct Skipped: Sendable, Equatable {
        var path: String
        var reason: String
    }

    struct Found: Sendable {
        var layouts: [String: [String: JSON]] = [:]
        /// At most `maximumSkipped`, in the order met.
        var skipped: [Skipped] = []
    }

    /// A layout is at most `LayoutLimits.maximumBytes` of compact JSON; written by hand it may
    /// be indented, so the file may be larger.
    static let maximumFileBytes = 8 * LayoutLimits.maximumBytes
    static let maximumVisitedFiles = 8192
    static let maximumSkipped = 64

    static func scan(dataDirectories: [String], logger: Logger) -> [String: [String: JSON]] {
        let found = read(dataDirectories: dataDirectories)
        log(found.skipped, logger: logger)
        return found.layouts
    }

    static func log(_ skipped: [Skipped], logger: Logger) {
        for file in skipped {
            logger.warning("skipping an installed layout", metadata: ["path": "\(file.path)", "error": "\(file.reason)"])
        }
    }

    /// Why a layout file was skipped. FileManager lists a name that is not UTF-8 with U+FFFD in
    /// place of its bytes, so the path it gives names no file: say that, not "No such file or
    /// directory" of a file that is there.
    static func reason(_ error: any Error, path: String) -> String {
        if case SmallFileError.system(errno: ENOENT) = error, path.contains("\u{FFFD}") {
            return "the file name is not UTF-8; rename the file"
        }
        return "\(error)"
    }

    static func read(dataDirectories: [String]) -> Found {
        var found = Found()
        let fm = FileManager.default
        for directory in dataDirectories {
            let root = directory + "/island/layouts"
            guard let apps = try? fm.contentsOfDirectory(atPath: root) else { continue }
            var visited = 0
            for app in apps.sorted() {
                visited += 1
                // opendir(3) opens with O_DIRECTORY: a FIFO or a device named like an app's
                // folder is refused before it is opened.
                guard visited <= maximumVisitedFiles, let files = try? fm.contentsOfDirectory(atPath: root + "/" + app) else { continue }
                for file in files.sorted() where file.hasSuffix(".json") {
                    visited += 1
                    guard visited <= maximumVisitedFiles else { break }
                    let type = String(file.dropLast(".json".count))
                    guard found.layouts[app]?[type] == nil else { continue }
                    let path = "\(root)/\(app)/\(file)"
                    do {
                        let bytes = try readRegularFile(path, limit: maximumFileBytes, followingLinks: true)
                        let json = try JSONParser.parse(bytes)
                        _ = try Layout(json: json)
                        found.layouts[app, default: [:]][type] = json
                    } catch {
                        if found.skipped.count < maximumSkipped {
                            found.skipped.append(Skipped(path: path, reason: reason(error, path: path)))
                        }
                    }
                }
            }
        }
        return found
    }
}
