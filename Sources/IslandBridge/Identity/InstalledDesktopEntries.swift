import Foundation
import FreeDesktop

/// Installed desktop entries by id, read from `applications/` of the XDG data directories
/// (`$XDG_DATA_HOME`, then `$XDG_DATA_DIRS`), the first found winning. Answers are kept, a
/// bounded number, since peers repeat the same claims.
package struct InstalledDesktopEntries {
    private let directories: [String]
    private var cache: [String: DesktopEntry?] = [:]
    private var order: [String] = []
    static let maximumCached = 128
    package init(environment: [String: String]) {
        directories = BaseDirectories(environment: environment).dataSearchPath.map { $0 + "/applications" }
    }

    /// The entry `id` names (already checked by `DesktopEntry.validID`), or nil.
    package mutating func lookup(_ id: String) -> DesktopEntry? {
        if let cached = cache[id] { return cached }
        let entry = read(id)
        cache[id] = entry
        order.append(id)
        if order.count > Self.maximumCached { cache[order.removeFirst()] = nil }
        return entry
    }

    private func read(_ id: String) -> DesktopEntry? {
        for directory in directories {
            let path = "\(directory)/\(id).desktop"
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int, size <= DesktopFile.maximumBytes,
                let data = FileManager.default.contents(atPath: path)
            else { continue }
            // The first directory that has the id decides, hidden or not.
            return DesktopEntry(contents: String(decoding: data, as: UTF8.self))
        }
        return nil
    }
}
