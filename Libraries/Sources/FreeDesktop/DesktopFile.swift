/// The `[Desktop Entry]` group of a desktop file (Desktop Entry Specification 1.5), read the
/// spec's way: the group header matched exactly, comments and other groups (`[Desktop Action
/// …]`) skipped, localized keys (`Name[de]=`) kept apart from the unlocalized one, string
/// values unescaped. Reading a key's value is the caller's business; the keys every reader
/// needs (`Hidden`, the program of `TryExec`/`Exec`) are here once.
public struct DesktopFile: Sendable, Hashable {
    /// The group's entries in file order.
    public var entries: [KeyFile.Entry]

    public static let group = "Desktop Entry"
    /// A desktop file larger than this is not one.
    public static let maximumBytes = 64 * 1024

    /// Nil when the text has no `[Desktop Entry]` group or an empty one (not a desktop entry
    /// at all), or is larger than `maximumBytes`.
    public init?(parsing text: String) {
        guard let entries = KeyFile(parsing: text, syntax: .desktopEntry, maximumBytes: Self.maximumBytes).entries(inGroup: Self.group),
            !entries.isEmpty
        else { return nil }
        self.entries = entries
    }

    /// The raw value of the first unlocalized `key`.
    public func raw(_ key: String) -> String? {
        entries.first { $0.key == key && $0.locale == nil }?.value
    }

    /// A string value, unescaped.
    public func string(_ key: String) -> String? { raw(key).map(KeyFile.unescape) }

    /// A boolean value: the spec's `true`; anything else is false.
    public func boolean(_ key: String) -> Bool { raw(key) == "true" }

    /// A list value (`MimeType=`, `Categories=`).
    public func strings(_ key: String) -> [String] { raw(key).map(KeyFile.list) ?? [] }

    /// `Hidden=true`: the entry is deleted, and hides same-id entries of later directories.
    public var isHidden: Bool { boolean("Hidden") }

    /// The program `TryExec=` names, or else the first argument of `Exec=`: what recognises
    /// the app's processes by their executable.
    public var executable: String? {
        if let tryExec = string("TryExec"), !tryExec.isEmpty { return tryExec }
        return string("Exec").flatMap(Self.program(ofExec:))
    }

    /// The program of an `Exec=` command line (already unescaped as a string): its first
    /// argument, which may be quoted (`"/opt/My App/bin/app" %U`, with `\"`, `` \` ``, `\$`
    /// and `\\` escaped inside quotes). Nil when it is empty, unterminated, or a field code.
    public static func program(ofExec exec: String) -> String? {
        let trimmed = exec.drop(while: { $0 == " " || $0 == "\t" })
        guard let first = trimmed.first else { return nil }
        guard first == "\"" else {
            let word = trimmed.prefix(while: { $0 != " " && $0 != "\t" })
            return word.isEmpty || word.hasPrefix("%") ? nil : String(word)
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

    /// A desktop file id as a claim may carry it (an MPRIS `DesktopEntry`, a notification's
    /// hint): letters, digits, `.`, `-`, `_` (so never a path), at most 255 bytes, not starting
    /// with a dot; a trailing `.desktop` is dropped. Nil otherwise.
    public static func validID(_ claim: String) -> String? {
        let id = claim.hasSuffix(".desktop") ? String(claim.dropLast(".desktop".count)) : claim
        guard !id.isEmpty, id.utf8.count <= 255, !id.hasPrefix("."), id.utf8.allSatisfy(IconName.isNameByte) else { return nil }
        return id
    }
}
