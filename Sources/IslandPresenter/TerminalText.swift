import IslandCore

/// Where producer text meets a terminal (producer text is untrusted in every sink:
/// docs/design.md §6). Every command that prints an activity's text — the terminal presenter, the
/// bar modes (whose stdout may be a terminal), `island list`, `island watch`, `island preview`,
/// admin output — passes it through here, so no escape sequence a producer writes (OSC 0 titles,
/// OSC 52 clipboard writes, CSI, SGR) reaches a terminal.
package enum TerminalText {
    /// C0 controls (ESC among them), DEL and C1 controls (U+0080–U+009F, which a terminal may
    /// read as ESC sequences too: U+009B is CSI, U+009D OSC).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The text with every control character a space: one line, nothing a terminal interprets.
    /// With `keepingNewlines`, line feeds stay (for messages of several lines).
    package static func sanitize(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(isControl(scalar) && !(keepingNewlines && scalar == "\n") ? " " : scalar)
        }
        return String(out)
    }

    /// Producer text as a terminal line shows it: `DisplayText`'s rule (no bidi controls, bounded
    /// grapheme clusters; docs/design.md §6), then `sanitize`. Every sink that writes text for a
    /// person to read calls this once, where the text meets it: the terminal UI's segments, the
    /// bar line, the CLI's lines. (`sanitize` alone maps scalar for scalar, for messages.)
    package static func display(_ text: String, keepingNewlines: Bool = false) -> String {
        sanitize(DisplayText.neutralized(text), keepingNewlines: keepingNewlines)
    }

    /// Serialized JSON made safe for a terminal without changing what it means: the writer
    /// already escapes C0 controls in strings (outside them, only whitespace), and DEL and C1
    /// controls, which JSON allows raw, are written as `\u00XX`; so are bidi controls, which a
    /// terminal with bidi support (VTE, Konsole, mlterm) would otherwise apply to the line. They
    /// can only occur inside strings, where the escape is the same character.
    package static func json(_ serialized: String) -> String {
        let isRawInJSON: (Unicode.Scalar) -> Bool = { (0x7F...0x9F).contains($0.value) || DisplayText.isBidiControl($0) }
        guard serialized.unicodeScalars.contains(where: isRawInJSON) else { return serialized }
        var out = ""
        out.reserveCapacity(serialized.utf8.count + 16)
        for scalar in serialized.unicodeScalars {
            if isRawInJSON(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
