import Foundation
import FreeDesktop
import SmallFiles

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

    /// Any program of the user's can write these folders: only a regular file is read, a link
    /// to one followed (a Flatpak's exported entries are links), and of it no more than an
    /// entry can be (`readRegularFile`: the same file that was checked is the one read, so a
    /// FIFO swapped in between is never opened for reading). Anything else there is passed over.
    private func read(_ id: String) -> DesktopEntry? {
        for directory in directories {
            guard let bytes = try? readRegularFile("\(directory)/\(id).desktop", limit: DesktopFile.maximumBytes, followingLinks: true)
            else { continue }
            // The first directory that has the id decides, hidden or not.
            return DesktopEntry(contents: String(decoding: bytes, as: UTF8.self))
        }
        return nil
    }
}
