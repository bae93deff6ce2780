extension JournalLogHandler {
    /// The journal field name for a metadata key, or `nil` if nothing usable is left.
    ///
    /// journald silently drops fields whose names are not `[A-Z0-9_]`, start with `_` (reserved
    /// for trusted fields it adds itself) or exceed 64 characters, so keys are normalised:
    /// letters are upper-cased, anything else outside `[A-Z0-9_]` becomes `_`, leading
    /// underscores are removed, a leading digit gets the prefix `F_`, and the result is cut to
    /// 64 characters. `activity_id`, `activity-id` and `ACTIVITY_ID` all become `ACTIVITY_ID`.
    public static func journalFieldName(_ key: String) -> String? {
        var name: [UInt8] = []
        name.reserveCapacity(key.utf8.count)
        // Per scalar rather than per byte, so "é" becomes one "_" and not two.
        for scalar in key.unicodeScalars {
            switch scalar.value {
            case 0x61...0x7A: name.append(UInt8(scalar.value) - 0x20)  // a-z
            case 0x41...0x5A, 0x30...0x39, 0x5F: name.append(UInt8(scalar.value))  // A-Z 0-9 _
            default: name.append(UInt8(ascii: "_"))
            }
        }
        guard let firstKept = name.firstIndex(where: { $0 != UInt8(ascii: "_") }) else { return nil }
        name.removeSubrange(..<firstKept)
        if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(name[0]) {
            name.insert(contentsOf: "F_".utf8, at: 0)
        }
        if name.count > maximumFieldNameLength {
            name.removeSubrange(maximumFieldNameLength...)
        }
        return String(decoding: name, as: UTF8.self)
    }

    static let maximumFieldNameLength = 64

    /// Fields the handler sets itself; metadata mapping onto one of them is renamed so that it
    /// cannot replace the message or forge the priority.
    static let handlerFieldNames: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    /// The journal field name for a metadata key, moved out of the way of the handler's own fields.
    static func metadataFieldName(_ key: String) -> String? {
        guard let name = journalFieldName(key) else { return nil }
        guard handlerFieldNames.contains(name) else { return name }
        return "METADATA_" + name
    }
}
