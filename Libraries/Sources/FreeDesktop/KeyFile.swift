/// A key file: `[Group]` headers and `Key=Value` entries, the format of desktop entries and
/// `.flatpak-info` (the Desktop Entry Specification 1.5, "Basic format of the file"; GLib's
/// GKeyFile) and of systemd-style INI (systemd.syntax(7)).
///
/// The reader only splits the text: it decides nothing about which groups or keys mean
/// something. What it cannot read becomes a `Problem` with its line, and the line is skipped;
/// whether a problem is fatal (islandd refuses its configuration) or a warning (the overlay
/// still shows) is the caller's policy, so both read the same syntax the same way.
///
/// Pure: it reads text, not files, and bounds the text it accepts.
public struct KeyFile: Sendable, Hashable {
    /// Which of the two dialects a file is written in.
    public enum Syntax: Sendable, Hashable {
        /// The Desktop Entry spec's: `#` starts a comment line; a key may carry a locale
        /// (`Name[de]=`); no line continues on the next.
        case desktopEntry
        /// systemd's: `#` and `;` start comment lines, and a line ending in `\` continues on
        /// the next one (the backslash becomes a space; comment lines inside a continuation
        /// are skipped, as systemd does). `[` in a key is part of the key.
        case systemd
    }

    /// One `Key=Value`, with whitespace around the key and the value dropped. `value` is the
    /// raw text: `unescape` and `list` read it as a string or a list.
    public struct Entry: Sendable, Hashable {
        public var key: String
        /// `de_DE` of `Name[de_DE]=` (desktop-entry syntax only).
        public var locale: String?
        public var value: String
        /// 1-based; for a continued line, the line it starts on.
        public var line: Int

        public init(key: String, locale: String? = nil, value: String, line: Int) {
            self.key = key
            self.locale = locale
            self.value = value
            self.line = line
        }
    }

    /// What a meaningful line is, in file order.
    public enum Line: Sendable, Hashable {
        case group(name: String, line: Int)
        case entry(Entry)
    }

    /// A line the reader could not make sense of, and why. The messages are the ones islandd
    /// has always printed after `path:line:`.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// `[Group` without its `]`.
            case unterminatedGroupHeader(String)
            /// Neither a comment, a header nor `Key=Value`.
            case notAnEntry(String)
            /// `=value`.
            case missingKey
            /// The text is longer than the reader accepts; nothing of it was read.
            case tooLarge(limit: Int)
        }

        public var line: Int
        public var kind: Kind

        public init(line: Int, kind: Kind) {
            self.line = line
            self.kind = kind
        }

        public var description: String {
            switch kind {
            case .unterminatedGroupHeader(let text): "missing ']' at the end of the section header '\(text)'"
            case .notAnEntry(let text): "expected Key=Value, a [Section] header or a comment, got '\(text)'"
            case .missingKey: "missing key before '='"
            case .tooLarge(let limit): "larger than \(limit) bytes"
            }
        }
    }

    public let syntax: Syntax
    public private(set) var lines: [Line] = []
    public private(set) var problems: [Problem] = []

    /// No key file worth reading is near this; a larger text is refused whole.
    public static let defaultMaximumBytes = 1 << 20

    public init(parsing text: String, syntax: Syntax, maximumBytes: Int = defaultMaximumBytes) {
        self.syntax = syntax
        guard text.utf8.count <= maximumBytes else {
            problems = [Problem(line: 1, kind: .tooLarge(limit: maximumBytes))]
            return
        }
        // "\r\n" is one Character in Swift, so it is a separator of its own.
        let physical = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        var pending: (text: String, line: Int)?
        for (index, raw) in physical.enumerated() {
            let number = index + 1
            let text = Self.trimmed(raw)
            if text.hasPrefix("#") || (syntax == .systemd && text.hasPrefix(";")) { continue }
            guard syntax == .systemd else {
                read(text, line: number)
                continue
            }
            var logical = pending.map { $0.text + text } ?? text
            let start = pending?.line ?? number
            if logical.hasSuffix("\\") {
                logical.removeLast()
                pending = (logical + " ", start)
                continue
            }
            pending = nil
            read(Self.trimmed(Substring(logical)), line: start)
        }
        // A backslash on the last line continues into nothing.
        if let pending { read(Self.trimmed(Substring(pending.text)), line: pending.line) }
    }

    private mutating func read(_ text: String, line: Int) {
        if text.isEmpty { return }
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count >= 2 else {
                problems.append(Problem(line: line, kind: .unterminatedGroupHeader(text)))
                return
            }
            lines.append(.group(name: String(text.dropFirst().dropLast()), line: line))
            return
        }
        guard let equals = text.firstIndex(of: "=") else {
            problems.append(Problem(line: line, kind: .notAnEntry(text)))
            return
        }
        var key = Self.trimmed(text[..<equals])
        guard !key.isEmpty else {
            problems.append(Problem(line: line, kind: .missingKey))
            return
        }
        var locale: String?
        if syntax == .desktopEntry, key.hasSuffix("]"), let open = key.firstIndex(of: "[") {
            locale = String(key[key.index(after: open)..<key.index(before: key.endIndex)])
            key = String(key[..<open])
        }
        lines.append(.entry(Entry(key: key, locale: locale, value: Self.trimmed(text[text.index(after: equals)...]), line: line)))
    }

    /// The entries of every group called `name`, in file order; nil when there is no such
    /// group. The spec forbids two groups of one name; a file that has them is read as if
    /// they were one, the first value of a key winning, as GLib does.
    public func entries(inGroup name: String) -> [Entry]? {
        var inGroup = false
        var found = false
        var entries: [Entry] = []
        for line in lines {
            switch line {
            case .group(let group, _):
                inGroup = group == name
                found = found || inGroup
            case .entry(let entry):
                if inGroup { entries.append(entry) }
            }
        }
        return found ? entries : nil
    }

    /// The raw value of the first unlocalized `key` in group `group`.
    public func value(_ key: String, inGroup group: String) -> String? {
        entries(inGroup: group)?.first { $0.key == key && $0.locale == nil }?.value
    }

    /// A string value as the Desktop Entry spec escapes it: `\s` space, `\n` newline, `\t`
    /// tab, `\r` carriage return, `\\` backslash. Any other backslash is kept as written.
    public static func unescape(_ value: String) -> String {
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

    /// A list value: elements separated by `;` (`\;` is a `;` inside one), each unescaped
    /// as a string; the optional trailing `;` ends the list and makes no empty element.
    public static func list(_ value: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var escaping = false
        for character in value {
            if escaping {
                if character == ";" { current.append(";") } else { current.append("\\"); current.append(character) }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == ";" {
                elements.append(unescape(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        if escaping { current.append("\\") }
        if !current.isEmpty { elements.append(unescape(current)) }
        return elements
    }

    /// Spaces and tabs dropped from both ends (the spec: "Space before and after the equals
    /// sign should be ignored").
    static func trimmed(_ text: Substring) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(text[first...last])
    }
}
