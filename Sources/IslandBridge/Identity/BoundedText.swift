/// Text from the bus, made fit to become an attribute or a state: whatever a peer sends (a
/// 1 MB notification body, a title of control characters), what the bridge hands the daemon
/// stays small and single-line. The daemon refuses payloads over 4,096 bytes; the bridge's
/// activities stay far below by cutting every text to its field's length here.
package enum BoundedText {
    /// `text` on one line (every run of whitespace or control characters one space, trimmed),
    /// cut to at most `maximumBytes` of UTF-8 on a character boundary, ending in "…" when cut.
    package static func line(_ text: String, maximumBytes: Int) -> String {
        var result = ""
        var bytes = 0
        var pendingSpace = false
        let ellipsis = "…"
        for character in text {
            if character.isWhitespace || character.unicodeScalars.allSatisfy(isControl) {
                pendingSpace = !result.isEmpty
                continue
            }
            let piece = pendingSpace ? " " + String(character) : String(character)
            let pieceBytes = piece.utf8.count
            if bytes + pieceBytes > maximumBytes {
                // Room for the ellipsis: drop characters until it fits.
                while !result.isEmpty, bytes + ellipsis.utf8.count > maximumBytes {
                    bytes -= result.removeLast().utf8.count
                }
                return result + ellipsis
            }
            result += piece
            bytes += pieceBytes
            pendingSpace = false
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            || scalar.properties.generalCategory == .format
                && scalar.value != 0x200D
    }

    /// The text of a notification body: markup tags the specification allows (`<b>`, `<i>`,
    /// `<u>`, `<a href>`, `<img>`) removed and its five entities decoded, as a notification
    /// daemon would show it, then made a bounded line.
    package static func notificationBody(_ markup: String, maximumBytes: Int) -> String {
        var plain = ""
        var index = markup.startIndex
        while index < markup.endIndex {
            let character = markup[index]
            if character == "<", let close = markup[index...].firstIndex(of: ">"), isTag(markup[markup.index(after: index)..<close]) {
                index = markup.index(after: close)
                continue
            }
            if character == "&", let semicolon = markup[index...].prefix(8).firstIndex(of: ";"),
                let decoded = entities[String(markup[markup.index(after: index)..<semicolon])]
            {
                plain.append(decoded)
                index = markup.index(after: semicolon)
                continue
            }
            plain.append(character)
            index = markup.index(after: index)
        }
        return line(plain, maximumBytes: maximumBytes)
    }

    private static let entities: [String: Character] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]

    private static func isTag(_ inside: Substring) -> Bool {
        let name = inside.drop(while: { $0 == "/" }).prefix(while: { $0.isLetter })
        return ["b", "i", "u", "a", "img"].contains(name.lowercased())
    }
}
