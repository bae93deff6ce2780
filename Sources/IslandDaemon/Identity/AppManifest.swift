import Foundation
import IslandCore

/// An app's freedesktop desktop entry, read for the keys that make it a Live Activities app
/// — the Linux counterpart of `NSSupportsLiveActivities`.
public struct AppManifest: Sendable, Equatable {
    /// The desktop file id without `.desktop`, e.g. `org.gnome.Nautilus`.
    public var id: String
    /// `Name=`, what presenters head the app's activities with; at most `maximumTextBytes`.
    public var name: String?
    /// `Icon=`, a freedesktop icon name or an absolute path; at most `maximumTextBytes`.
    public var icon: String?
    /// `X-Island-LiveActivities=true`.
    public var supportsLiveActivities: Bool
    /// `X-Island-FrequentUpdates=true`.
    public var supportsFrequentUpdates: Bool
    /// The program of `TryExec=`, or else the first word of `Exec=`; used to recognise the
    /// app's processes by their executable.
    public var executable: String?
    /// The URL schemes of its `MimeType=` key's `x-scheme-handler/<scheme>` types, lowercased:
    /// besides `http` and `https`, the only ones a tap on its activities may open.
    public var urlSchemes: Set<String>
    public var path: String

    /// What a desktop file says about its app.
    enum Entry: Equatable {
        case manifest(AppManifest)
        /// `Hidden=true`: the entry is deleted, and hides same-id entries of later directories.
        case hidden
        /// No `[Desktop Entry]` group, or an empty one: not an entry at all.
        case invalid
    }

    /// Reads the `[Desktop Entry]` group of a desktop file. Returns nil when the text has no
    /// such group or the entry is hidden.
    public init?(id: String, path: String, contents: String) {
        guard case .manifest(let manifest) = Self.entry(id: id, path: path, contents: contents) else { return nil }
        self = manifest
    }

    static func entry(id: String, path: String, contents: String) -> Entry {
        var inEntry = false
        var values: [String: String] = [:]
        // Lines may end in CRLF, which Swift reads as one character, not as "\r" then "\n".
        for rawLine in contents.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
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
        guard !values.isEmpty else { return .invalid }
        guard values["Hidden"] != "true" else { return .hidden }
        var executable: String?
        if let tryExec = values["TryExec"].map(unescape), !tryExec.isEmpty {
            executable = tryExec
        } else if let exec = values["Exec"].map(unescape) {
            executable = program(ofExec: exec)
        }
        return .manifest(AppManifest(
            id: id, name: values["Name"].map(unescape).flatMap(bounded), icon: values["Icon"].map(unescape).flatMap(bounded),
            supportsLiveActivities: values["X-Island-LiveActivities"] == "true",
            supportsFrequentUpdates: values["X-Island-FrequentUpdates"] == "true",
            executable: executable, urlSchemes: urlSchemes(ofMimeTypes: values["MimeType"] ?? ""),
            path: path))
    }

    /// Name and Icon reach every presenter with every item: a file someone installed does not
    /// get to make them long. Whole characters only; an empty value is no value.
    static let maximumTextBytes = 128

    static func bounded(_ value: String) -> String? {
        var bytes = 0
        let kept = value.prefix { character in
            bytes += character.utf8.count
            return bytes <= maximumTextBytes
        }
        return kept.isEmpty ? nil : String(kept)
    }

    /// `MimeType=` is a `;`-separated list; a scheme handler's type is `x-scheme-handler/<scheme>`.
    /// What is not a valid scheme is no scheme at all.
    static func urlSchemes(ofMimeTypes list: String) -> Set<String> {
        let prefix = "x-scheme-handler/"
        return Set(unescape(list).split(separator: ";").compactMap { type in
            let type = type.trimmingCharacters(in: .whitespaces).lowercased()
            guard type.hasPrefix(prefix) else { return nil }
            let scheme = String(type.dropFirst(prefix.count))
            return LayoutURL.isSchemeSyntax(scheme) ? scheme : nil
        })
    }

    /// Undoes the escapes of a desktop entry string value: `\s`, `\n`, `\t`, `\r`, `\\`.
    static func unescape(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var result = ""
        var escaping = false
        for character in value {
            if escaping {
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                default: result.append("\\"); result.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        if escaping { result.append("\\") }
        return result
    }

    /// The program of an `Exec=` command line: its first argument, which may be quoted
    /// (`"/opt/My App/bin/app" %U`, with `\"`, `` \` ``, `\$` and `\\` escaped inside quotes).
    static func program(ofExec exec: String) -> String? {
        let trimmed = exec.drop(while: { $0 == " " || $0 == "\t" })
        guard let first = trimmed.first else { return nil }
        guard first == "\"" else {
            let word = trimmed.prefix(while: { $0 != " " && $0 != "\t" })
            return word.isEmpty ? nil : String(word)
        }
        var program = ""
        var escaping = false
        for character in trimmed.dropFirst() {
            if escaping {
                program.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "\"" {
                return program.isEmpty ? nil : program
            } else {
                program.append(character)
            }
        }
        // An unterminated quote is not a valid command line.
        return nil
    }

    init(id: String, name: String?, icon: String? = nil, supportsLiveActivities: Bool, supportsFrequentUpdates: Bool,
         executable: String?, urlSchemes: Set<String> = [], path: String) {
        self.id = id
        self.name = name
        self.icon = icon
        self.supportsLiveActivities = supportsLiveActivities
        self.supportsFrequentUpdates = supportsFrequentUpdates
        self.executable = executable
        self.urlSchemes = urlSchemes
        self.path = path
    }
}
