import IslandCore
import OrderedJSON
import OrderedCollections

/// The status-bar contracts `island-presenter` speaks: one line per change on stdout.
package enum BarFormat: String, Sendable, CaseIterable {
    /// Waybar's custom module with `return-type: json`: an object with `text`, `alt`, `tooltip`,
    /// `class` and `percentage`. `text`, `alt` and `tooltip` are Pango markup (Waybar's
    /// default), so `&`, `<` and `>` are escaped.
    case waybar
    /// i3blocks with `format=json`: an object with `full_text`, `short_text` and
    /// `"markup": "none"`, so a `markup=pango` in the block's configuration cannot make
    /// producer text markup; `"` and `\` are replaced by lookalikes (see `i3blocks(_:)`).
    case i3blocks
    /// eww `deflisten`: the text as a plain string, one line; an empty line hides the widget.
    case eww
    /// Polybar `custom/script` with `tail = true`: the text, with every `%{` broken up so it
    /// is never a formatting tag; an empty line hides the module.
    case polybar

    /// The line for the scene, without its newline. Every text in a scene is producer text and
    /// untrusted (docs/design.md §6): each format neutralises it for its consumer's grammar here,
    /// on the line as assembled, so no concatenation of fields can form a sequence the consumer
    /// interprets. No line holds a control character (a newline would end the line, and stdout may
    /// be a terminal).
    ///
    /// `maxLength` caps the text (in display cells, "…" where cut): a bar has no room for a
    /// producer's 60-character line.
    package func line(for scene: IslandScene, maxLength: Int = Self.defaultMaxLength) -> String {
        let text = Self.capped(scene.text, maxLength)
        switch self {
        case .waybar: return Self.serialize(Self.waybar(scene, text: text, maxLength: maxLength))
        case .i3blocks:
            return Self.serialize([
                "full_text": .string(Self.i3blocks(text)),
                "short_text": .string(Self.i3blocks(Self.capped(scene.shortText, maxLength))),
                "markup": "none",
            ])
        case .eww: return text
        case .polybar: return Self.polybar(text)
        }
    }

    package static let defaultMaxLength = 40

    /// One line without control characters or bidi controls, its grapheme clusters bounded
    /// (`TerminalText.display`), at most `maxLength` cells: every text of every format passes
    /// here.
    static func capped(_ text: String, _ maxLength: Int) -> String {
        truncate(TerminalText.display(text), toWidth: max(1, maxLength))
    }

    /// Text that polybar shows as itself. Polybar reads `%{` as the start of a formatting tag
    /// (`%{A1:command:}` runs a command on click) and has no escape for it (`%%{` is still a
    /// tag), so a zero-width space goes between every `%` and `{`, and also where the
    /// module's label meets the text: before a `{` that starts it and after a `%` that ends it.
    package static func polybar(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var previous: Unicode.Scalar = "%"
        for scalar in text.unicodeScalars {
            if scalar == "{", previous == "%" { out.append(zeroWidthSpace) }
            out.append(scalar)
            previous = scalar
        }
        if previous == "%", !out.isEmpty { out.append(zeroWidthSpace) }
        return String(out)
    }

    static let zeroWidthSpace: Unicode.Scalar = "\u{200B}"

    /// Text that i3blocks 1.4 passes on as itself. It does not decode a block's JSON strings: it
    /// takes the bytes up to the first `"` (an escaped quote ends the text there) and escapes
    /// them again (so `\\` is shown doubled). A string with neither needs no escape, so `"`
    /// becomes a double prime and `\` a set minus, which look alike and are in DejaVu Sans.
    package static func i3blocks(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map {
                    switch $0 {
                    case "\"": "\u{2033}"
                    case "\\": "\u{2216}"
                    default: $0
                    }
                }))
    }

    static func waybar(_ scene: IslandScene, text: String, maxLength: Int) -> JSONObject {
        var classes: [JSON] = [.string(scene.mode.rawValue)]
        let shown = [scene.attached, scene.detached, scene.expanded].compactMap { $0 }
        if shown.contains(where: { $0.item.isStale }) { classes.append("stale") }
        if scene.alert != nil { classes.append("alert") }
        if scene.isFocused { classes.append("focus") }
        if scene.isContentHidden { classes.append("sharing") }
        var tooltipLines = scene.lockScreenLines
        if let alert = scene.alertWithWords { tooltipLines.insert(IslandScene.alertText(alert), at: 0) }
        // The tooltip has room for more than the bar, not for anything.
        let tooltipWidth = max(maxLength, 2 * defaultMaxLength)
        var object: JSONObject = [
            "text": .string(pango(text)),
            // The chip, for `format-alt` or a format that shows `{alt}` where space is short.
            "alt": .string(pango(capped(scene.shortText, maxLength))),
            "tooltip": .string(pango(tooltipLines.map { capped($0, tooltipWidth) }.joined(separator: "\n"))),
            "class": .array(classes),
        ]
        if scene.mode != .none, let fraction = scene.primaryProgress {
            object["percentage"] = .int(Int((RenderedProgress.unit(fraction) * 100).rounded(.down)))
        }
        return object
    }

    /// Escapes text for Pango markup: with `&`, `<` and `>` as entities no text is a tag or
    /// an entity (quotes only matter inside a tag). `class` holds only the presenter's own
    /// words.
    package static func pango(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }

    static func serialize(_ object: JSONObject) -> String {
        TerminalText.json(String(decoding: JSON.object(object).serialized(), as: UTF8.self))
    }
}
