import IslandJSON

/// The status-bar contracts `island-presenter` speaks: one line per change on stdout.
public enum BarFormat: String, Sendable, CaseIterable {
    /// Waybar's custom module with `return-type: json`: an object with `text`, `alt`, `tooltip`,
    /// `class` and `percentage`. `text` and `tooltip` are Pango markup (Waybar's default), so
    /// `&`, `<` and `>` are escaped.
    case waybar
    /// i3blocks with `format=json`: an object with `full_text` and `short_text`.
    case i3blocks
    /// eww `deflisten`: the text; an empty line hides the widget.
    case eww
    /// Polybar `custom/script` with `tail = true`: the text; an empty line hides the module.
    case polybar

    /// The line for the scene, without its newline.
    public func line(for scene: IslandScene) -> String {
        switch self {
        case .waybar: Self.serialize(Self.waybar(scene))
        case .i3blocks: Self.serialize(["full_text": .string(scene.text), "short_text": .string(scene.shortText)])
        case .eww, .polybar: scene.text
        }
    }

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
            object["percentage"] = .int(Int((fraction * 100).rounded(.down)))
        }
        return object
    }

    /// Escapes text for Pango markup.
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
        String(decoding: JSON.object(object).serialized(), as: UTF8.self)
    }
}
