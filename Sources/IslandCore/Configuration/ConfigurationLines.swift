extension IslandConfiguration {
    /// A meaningful line of a configuration file, after comments, blank lines and
    /// continuations are dealt with.
    public enum Line: Equatable, Sendable {
        case section(name: String, line: Int)
        case assignment(key: String, value: String, line: Int)
    }

    /// Splits `contents` into section headers and assignments, systemd style: `#` and `;`
    /// start comment lines, whitespace around keys and values is dropped, and a line ending in
    /// `\` continues on the next one (the backslash becomes a space; comment lines inside a
    /// continuation are skipped, as systemd does).
    public static func lines(of contents: String, path: String) throws(ConfigurationError) -> [Line] {
        var result: [Line] = []
        var pending: (text: String, line: Int)?
        let physical = contents.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, raw) in physical.enumerated() {
            let number = index + 1
            let text = trimmed(raw)
            if isComment(text) { continue }
            var logical = pending.map { $0.text + text } ?? text
            let start = pending?.line ?? number
            if logical.hasSuffix("\\") {
                logical.removeLast()
                pending = (logical + " ", start)
                continue
            }
            pending = nil
            if let line = try parse(trimmed(Substring(logical)), line: start, path: path) {
                result.append(line)
            }
        }
        // A backslash on the last line continues into nothing.
        if let pending, let line = try parse(trimmed(Substring(pending.text)), line: pending.line, path: path) {
            result.append(line)
        }
        return result
    }

    private static func parse(_ text: String, line: Int, path: String) throws(ConfigurationError) -> Line? {
        if text.isEmpty { return nil }
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count >= 2 else {
                throw ConfigurationError(path: path, line: line, message: "missing ']' at the end of the section header '\(text)'")
            }
            return .section(name: String(text.dropFirst().dropLast()), line: line)
        }
        guard let equals = text.firstIndex(of: "=") else {
            throw ConfigurationError(
                path: path, line: line,
                message: "expected Key=Value, a [Section] header or a comment, got '\(text)'")
        }
        let key = trimmed(text[..<equals])
        guard !key.isEmpty else {
            throw ConfigurationError(path: path, line: line, message: "missing key before '='")
        }
        return .assignment(key: key, value: trimmed(text[text.index(after: equals)...]), line: line)
    }

    private static func isComment(_ text: String) -> Bool {
        text.hasPrefix("#") || text.hasPrefix(";")
    }

    private static func trimmed(_ text: Substring) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(text[first...last])
    }
}
