import Foundation

/// A temporary directory tree for tests that read real files; removed by `remove()`.
struct TemporaryTree {
    let root: String

    init(_ label: String = "island-daemon-tests") throws {
        root = NSTemporaryDirectory() + "/\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// Writes `contents` at `relative`, creating the folders on the way.
    @discardableResult
    func write(_ relative: String, _ contents: String, permissions: Int? = nil) throws -> String {
        let path = path(relative)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        if let permissions {
            try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
        }
        return path
    }

    func makeDirectory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: path(relative), withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

/// A desktop entry with the given keys in its `[Desktop Entry]` group.
func desktopEntry(_ keys: [(String, String)]) -> String {
    "[Desktop Entry]\nType=Application\n" + keys.map { "\($0.0)=\($0.1)\n" }.joined()
}

func liveEntry(exec: String = "/usr/bin/false", frequent: Bool = false) -> String {
    var keys = [("Name", "App"), ("Exec", exec), ("X-Island-LiveActivities", "true")]
    if frequent { keys.append(("X-Island-FrequentUpdates", "true")) }
    return desktopEntry(keys)
}
