import Foundation

/// An app's freedesktop desktop entry, read for the keys that make it a Live Activities app
/// — the Linux counterpart of `NSSupportsLiveActivities`.
public struct AppManifest: Sendable, Equatable {
    /// The desktop file id without `.desktop`, e.g. `org.gnome.Nautilus`.
    public var id: String
    public var name: String?
    /// `X-Island-LiveActivities=true`.
    public var supportsLiveActivities: Bool
    /// `X-Island-FrequentUpdates=true`.
    public var supportsFrequentUpdates: Bool
    /// The program of `TryExec=`, or else the first word of `Exec=`; used to recognise the
    /// app's processes by their executable.
    public var executable: String?
    public var path: String

    /// Reads the `[Desktop Entry]` group of a desktop file. Returns nil when the text has no
    /// such group or the entry is hidden.
    public init?(id: String, path: String, contents: String) {
        var inEntry = false
        var values: [String: String] = [:]
        for rawLine in contents.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
                continue
            }
            guard inEntry, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            // Localized keys (Name[de]) are not needed: the id is what identifies the app.
            if values[key] == nil { values[key] = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces) }
        }
        guard !values.isEmpty, values["Hidden"] != "true" else { return nil }
        self.id = id
        self.path = path
        self.name = values["Name"]
        self.supportsLiveActivities = values["X-Island-LiveActivities"] == "true"
        self.supportsFrequentUpdates = values["X-Island-FrequentUpdates"] == "true"
        if let tryExec = values["TryExec"], !tryExec.isEmpty {
            self.executable = tryExec
        } else if let exec = values["Exec"] {
            self.executable = exec.split(separator: " ").first.map(String.init)
        }
    }

    init(id: String, name: String?, supportsLiveActivities: Bool, supportsFrequentUpdates: Bool, executable: String?, path: String) {
        self.id = id
        self.name = name
        self.supportsLiveActivities = supportsLiveActivities
        self.supportsFrequentUpdates = supportsFrequentUpdates
        self.executable = executable
        self.path = path
    }
}

