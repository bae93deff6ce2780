public import Logging

// Pure rendering of one log entry, kept apart from the I/O so that it can be tested.
extension JournalLogHandler {
    /// The syslog priority for a swift-log level, as used by `PRIORITY=` and the `<N>` prefix.
    public static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// One stderr line (without the trailing newline): `info label: message key=value …`.
    ///
    /// Metadata is sorted by key so that lines are reproducible. Line breaks in the label,
    /// message, keys and values are shown as `\n`, because the journal's stream reader and
    /// `grep` alike treat each line as an entry of its own. `syslogPrefix` adds the `<N>`
    /// priority prefix that journald strips and turns into `PRIORITY=` (see `sd-daemon(3)`).
    static func formatLine(
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata,
        syslogPrefix: Bool
    ) -> String {
        var line = syslogPrefix ? "<\(syslogPriority(level))>" : ""
        line += "\(level.rawValue) \(escapingLineBreaks(label)): \(escapingLineBreaks(message))"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(escapingLineBreaks(key))=\(escapingLineBreaks(value.description))"
        }
        return line
    }

    /// The native journal fields for an entry, in the order they are sent.
    static func journalFields(
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata,
        file: String,
        line: UInt,
        function: String
    ) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", message),
            ("PRIORITY", String(syslogPriority(level))),
            ("SYSLOG_IDENTIFIER", label),
            ("CODE_FILE", file),
            ("CODE_LINE", String(line)),
            ("CODE_FUNC", function),
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard let name = metadataFieldName(key) else { continue }
            fields.append((name, value.description))
        }
        return fields
    }

    static func escapingLineBreaks(_ text: String) -> String {
        // Scalars, not Characters: "\r\n" is a single Character that equals neither "\r" nor "\n".
        guard text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
