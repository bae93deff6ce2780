import Foundation
import FreeDesktop
package import Systemd
import SmallFiles

/// The app manifests found in the XDG data directories' `applications/` folders. A desktop
/// file id follows the Desktop Entry spec: a file in a subfolder gets the folder names joined
/// with `-` as a prefix, and a directory earlier in the search path hides later ones.
package struct AppRegistry: Sendable {
    package private(set) var manifests: [String: AppManifest] = [:]
    /// The data directories scanned, named by a refusal that found no entry.
    package private(set) var dataDirectories: [String]
    /// Files with a desktop file id that gave no manifest, and why, so that a refusal names
    /// the file the developer installed rather than saying there is none. At most
    /// `maximumSkippedEntries`: a folder of junk does not grow the daemon.
    private(set) var skipped: [String: SkippedEntry] = [:]

    struct SkippedEntry: Sendable, Equatable {
        var path: String
        var reason: String
    }

    static let maximumSkippedEntries = 256

    package init(manifests: [AppManifest], dataDirectories: [String] = []) {
        self.dataDirectories = dataDirectories
        for manifest in manifests where self.manifests[manifest.id] == nil {
            self.manifests[manifest.id] = manifest
        }
    }

    /// Why `app` may not show Live Activities: no entry in any directory searched, an entry
    /// that could not be used (naming its file), or one without the key (naming its file).
    /// Nil when its manifest declares Live Activities.
    package func refusal(for app: String) -> String? {
        if let manifest = manifests[app] {
            guard !manifest.supportsLiveActivities else { return nil }
            let refusal = "its desktop entry \(manifest.path) does not declare X-Island-LiveActivities=true"
            guard let value = manifest.liveActivitiesMisspelt else { return refusal }
            return refusal + ": it says X-Island-LiveActivities=\(value), and a desktop entry's booleans are true or false; write true"
        }
        if let skipped = skipped[app] { return "its desktop entry \(skipped.path) \(skipped.reason)" }
        let searched = dataDirectories.map { $0 + "/applications" }
        return "no desktop entry \(app).desktop in " + (searched.isEmpty ? "the XDG data directories" : searched.joined(separator: ", "))
    }

    mutating func skip(_ id: String, path: String, reason: String) {
        guard skipped[id] == nil, manifests[id] == nil, skipped.count < Self.maximumSkippedEntries else { return }
        skipped[id] = SkippedEntry(path: path, reason: reason)
    }

    /// Reads every `*.desktop` file under `<dir>/applications` for each data directory.
    /// Unreadable files are skipped: one broken entry must not hide every other app. A
    /// `Hidden=true` entry deletes its id: same-id entries of later directories stay hidden.
    ///
    /// Any program that may write to a data directory (a Flatpak with `xdg-data` access) can
    /// put anything there, so each entry is read by `readEntry`, and at most
    /// `maximumVisitedFiles` names are looked at per data directory. The scan still reads
    /// files: it runs on the daemon's file thread (`FileReads`), never on the Swift
    /// cooperative pool or the event loop.
    package static func scan(dataDirectories: [String]) -> AppRegistry {
        var found: [AppManifest] = []
        var seen: Set<String> = []
        var skipped: [(id: String, path: String, reason: String)] = []
        let fm = FileManager.default
        for directory in dataDirectories {
            let root = directory + "/applications"
            guard let enumerator = fm.enumerator(atPath: root) else { continue }
            var relatives: [String] = []
            var visited = 0
            while let relative = enumerator.nextObject() as? String {
                visited += 1
                if visited > maximumVisitedFiles { break }
                if relative.hasSuffix(".desktop") { relatives.append(relative) }
            }
            // Within one directory, `a/b.desktop` and `a-b.desktop` share an id: the order
            // must not depend on the file system's.
            for relative in relatives.sorted() {
                let path = root + "/" + relative
                let id = String(relative.dropLast(".desktop".count)).replacingOccurrences(of: "/", with: "-")
                guard !seen.contains(id) else { continue }
                switch readEntry(id: id, path: path) {
                case .success(.manifest(let manifest)):
                    seen.insert(id)
                    found.append(manifest)
                case .success(.hidden):
                    seen.insert(id)
                    skipped.append((id, path, "is hidden (Hidden=true)"))
                case .success(.invalid):
                    skipped.append((id, path, "has no [Desktop Entry] group"))
                case .failure(let reason):
                    skipped.append((id, path, reason.description))
                }
            }
        }
        var registry = AppRegistry(manifests: found, dataDirectories: dataDirectories)
        for entry in skipped { registry.skip(entry.id, path: entry.path, reason: entry.reason) }
        return registry
    }

    /// Names looked at in one `applications/` folder, subfolders included: a few hundred on a
    /// desktop; a folder filled with junk costs the scan no more than this.
    static let maximumVisitedFiles = 8192

    /// Why a desktop file gave no entry at all.
    enum UnreadableEntry: Error, CustomStringConvertible {
        case cannotRead(SmallFileError)

        var description: String {
            switch self {
            case .cannotRead(.notRegularFile): "is not a regular file"
            case .cannotRead(.notUTF8): "is not UTF-8 text"
            case .cannotRead(let error): "could not be read: \(error)"
            }
        }
    }

    /// The desktop file at `path`: only a regular file (symbolic links followed: a Flatpak's
    /// exported entries are links), opened without blocking, at most `DesktopFile.maximumBytes`.
    static func readEntry(id: String, path: String) -> Result<AppManifest.Entry, UnreadableEntry> {
        do {
            let contents = try readRegularText(path, limit: DesktopFile.maximumBytes, followingLinks: true)
            return .success(AppManifest.entry(id: id, path: path, contents: contents))
        } catch {
            return .failure(.cannotRead(error))
        }
    }

    /// `app`'s entry, looked up directly rather than scanned: `<dir>/applications/<app>.desktop`
    /// in each data directory, in order, as the scan would take it — for a refusal that would
    /// otherwise be sent before the watch's rescan saw an entry written a moment ago. A few
    /// `open` calls for an id that names one file; nil for an id that cannot (a slash, a
    /// leading dot), and for an entry that is hidden or missing everywhere.
    package func lookedUpOnceMore(_ app: String) -> AppManifest? {
        // Also for an id the scan skipped: it may have read the file half written.
        guard !app.isEmpty, app.utf8.count <= 255, !app.contains("/"), !app.hasPrefix("."), manifests[app] == nil else { return nil }
        for directory in dataDirectories.prefix(ManifestWatch.maximumTargets) where directory.hasPrefix("/") {
            switch Self.readEntry(id: app, path: "\(directory)/applications/\(app).desktop") {
            case .success(.manifest(let manifest)): return manifest
            case .success(.hidden): return nil
            case .success(.invalid), .failure: continue
            }
        }
        return nil
    }

    /// Takes an entry `lookedUpOnceMore` found, until the next scan replaces the registry.
    package mutating func adopt(_ manifest: AppManifest) {
        guard manifests[manifest.id] == nil else { return }
        manifests[manifest.id] = manifest
        skipped[manifest.id] = nil
    }

    package func manifest(for app: String) -> AppManifest? { manifests[app] }

    /// The app whose manifest names `executable` (a full path, or a bare program name that
    /// matches the executable's file name) — for the user scope, whose callers are the user
    /// anyway. Only Live Activities apps are considered, so a general-purpose program such as
    /// an interpreter never identifies as some random app.
    package func app(forExecutable path: String) -> String? {
        // Linux marks the executable of a process whose file was replaced since it started
        // (an upgrade) with " (deleted)"; it is still that program.
        let executable = path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
        let name = (executable as NSString).lastPathComponent
        let matches = manifests.values.filter { manifest in
            guard manifest.supportsLiveActivities, let exec = manifest.executable else { return false }
            return exec.hasPrefix("/") ? exec == executable : exec == name
        }
        // Two apps claiming the same program is ambiguous: identify neither.
        return matches.count == 1 ? matches[0].id : nil
    }

    /// The app whose manifest names, by absolute path, the very file a process runs — for
    /// the system scope, where a path or a bare name is no proof (a user can copy any
    /// program to `~/coffee`, or bind-mount one over `/usr/bin/coffee` in a namespace of
    /// their own). `rootControlledFile` gives the file at a path only when no one but root
    /// can have put it there (`ProcessIdentity.rootControlledFile(atPath:)`).
    ///
    /// `path` (the text of `/proc/PID/exe`) must name that file too, and only then is
    /// `runningFile` asked: reaching the file a process runs can wait on whatever file
    /// system its owner mounted, while a path root controls is on none of theirs.
    package func app(
        executablePath path: String, runningFile: () -> FileIdentity?,
        rootControlledFile: (String) -> RootControlledFile?
    ) -> String? {
        let candidates = manifests.values.compactMap { manifest -> (app: String, file: FileIdentity)? in
            guard manifest.supportsLiveActivities, let exec = manifest.executable, exec.hasPrefix("/"),
                let controlled = rootControlledFile(exec), controlled.path == path
            else { return nil }
            return (manifest.id, controlled.identity)
        }
        guard !candidates.isEmpty, let file = runningFile() else { return nil }
        let matches = candidates.filter { $0.file == file }
        return matches.count == 1 ? matches[0].app : nil
    }
}
