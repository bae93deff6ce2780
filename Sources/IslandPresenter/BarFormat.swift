import IslandCore
import IslandJSON

/// The status-bar contracts `island-presenter` speaks: one line per change on stdout.
public enum BarFormat: String, Sendable, CaseIterable {
    /// Waybar's custom module with `return-type: json`: an object with `text`, `alt`, `tooltip`,
    /// `class` and `percentage`. `text` and `tooltip` are Pango markup (Waybar's default), so
    /// `&`, `<` and `>` are escaped.
    case waybar
    /// i3blocks with `format=json`: an object with `full_text`, `short_text` and
    /// `"markup": "none"`, so a `markup=pango` in the block's configuration cannot make
    /// producer text markup.
    case i3blocks
    /// eww `deflisten`: the text as a plain string, one line; an empty line hides the widget.
    case eww
    /// Polybar `custom/script` with `tail = true`: the text, with every `%{` broken up so it
    /// is never a formatting tag; an empty line hides the module.
    case polybar

    /// The line for the scene, without its newline. Every text in a scene is producer text
    /// (DESIGN.md §6, Untrusted text): each format neutralises it for its consumer's grammar
    /// here, on the line as assembled, so no concatenation of fields can form a sequence the
    /// consumer interprets. No line holds a control character (a newline would end the line,
    /// and stdout may be a terminal).
    public func line(for scene: IslandScene) -> String {
        switch self {
        case .waybar: Self.serialize(Self.waybar(scene))
        case .i3blocks:
            Self.serialize(["full_text": .string(scene.text), "short_text": .string(scene.shortText), "markup": "none"])
        case .eww: TerminalText.sanitize(scene.text)
        case .polybar: Self.polybar(TerminalText.sanitize(scene.text))
        }
    }

    /// Text that polybar shows as itself. Polybar reads `%{` as the start of a formatting tag
    /// (`%{A1:command:}` runs a command on click) and has no escape for it (`%%{` is still a
    /// tag), so a zero-width space goes between every `%` and `{`, and also where the
    /// module's label meets the text: before a `{` that starts it and after a `%` that ends it.
    public static func polybar(_ text: String) -> String {
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

    static func waybar(_ scene: IslandScene) -> JSONObject {
        var classes: [JSON] = [.string(scene.mode.rawValue)]
        let shown = [scene.attached, scene.detached, scene.expanded].compactMap { $0 }
        if shown.contains(where: { $0.item.isStale }) { classes.append("stale") }
        if scene.alert != nil { classes.append("alert") }
        var tooltipLines = scene.lockScreenLines
        if let alert = scene.alert {
            tooltipLines.insert([alert.title, alert.body].filter { !$0.isEmpty }.joined(separator: ": "), at: 0)
        }
        var object: JSONObject = [
            "text": .string(pango(scene.text)),
            "alt": .string(scene.mode.rawValue),
            "tooltip": .string(pango(tooltipLines.map(IslandScene.oneLine).joined(separator: "\n"))),
            "class": .array(classes),
        ]
        if scene.mode != .none, let fraction = scene.primaryProgress {
            object["percentage"] = .int(Int((RenderedProgress.unit(fraction) * 100).rounded(.down)))
        }
        return object
    }

    /// Escapes text for Pango markup: with `&`, `<` and `>` as entities no text is a tag or
    /// an entity (quotes only matter inside a tag). `alt` and `class` hold only the presenter's
    /// own words.
    public static func pango(_ text: String) -> String {
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
