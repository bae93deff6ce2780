#if canImport(Glibc)
import Glibc
#endif

extension ProcessIdentity {
    /// The Flatpak application ID of a sandboxed process, from the `name=` key of the
    /// `[Application]` group in `/.flatpak-info` inside its root (as xdg-desktop-portal does).
    ///
    /// `nil` when the process is not a Flatpak app or its root cannot be read (another user's
    /// process, or one that exited). A process able to build its own mount namespace can place
    /// such a file too, so treat the result as a claim.
    ///
    /// - Parameter procRoot: Where procfs is mounted; tests point it at a fake tree.
    public static func flatpakAppID(pid: Int32, procRoot: String = "/proc") -> String? {
        guard pid > 0,
            let contents = try? readSmallFile("\(procRoot)/\(pid)/root/.flatpak-info", limit: 64 * 1024)
        else { return nil }
        return keyFileValue(String(decoding: contents, as: UTF8.self), group: "Application", key: "name")
    }

    /// The value of `key` in `[group]` of a GKeyFile-style (INI) document.
    static func keyFileValue(_ document: String, group: String, key: String) -> String? {
        var inGroup = false
        for rawLine in document.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line == "[\(group)]"
                continue
            }
            guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
            // Localised variants such as `name[de]=` are different keys and do not match.
            guard trimmed(line[..<equals]) == key else { continue }
            let value = trimmed(line[line.index(after: equals)...])
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }),
            let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[first...last]
    }
}
