import Foundation
import IslandCore

/// Draws a scene as a standalone SVG document: the island at the top (compact pill, minimal
/// pill and detached bubble, or the expanded island) and the lock-screen list below as cards.
public struct SVGRenderer: Sendable {
    public var width: Double = 430
    /// Where symbols' icon names are looked up; nil draws every symbol as a glyph.
    public var icons: IconTheme?
    /// The Dynamic Island's resting size, in points.
    public static let pillSize = (width: 126.0, height: 37.0)
    static let expandedWidth = 371.0
    static let fontSize = 14.0
    static let lineHeight = 20.0
    static let defaultAccent = "#0a84ff"
    /// The widest compact pill: wider content is cut, not stretched across the screen.
    static let compactMaximumWidth = 250.0
    static let iconSize = 16.0

    public init(width: Double = 430, icons: IconTheme? = .system()) {
        self.width = width
        self.icons = icons
    }

    public func render(_ scene: IslandScene) -> String {
        var body: [String] = []
        var y = 12.0
        y = drawIsland(scene, top: y, into: &body) + 24
        if let alert = scene.alert { y = drawAlert(alert, top: y - 12, into: &body) + 24 }
        if !scene.lockScreen.isEmpty {
            body.append(text("Lock Screen", x: 20, y: y + 14, size: 13, fill: "#3c3c43", weight: "600"))
            y += 24
        }
        for entry in scene.lockScreen {
            y = drawCard(entry, top: y, into: &body) + 12
        }
        let height = (y + 12).rounded(.up)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" \
            viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="system-ui, -apple-system, 'DejaVu Sans', sans-serif">
            <title>Island: \(Self.escape(scene.mode.rawValue))</title>
            <defs>\(Self.symbolicFilters)</defs>
            <rect width="100%" height="100%" fill="#f2f2f7"/>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }

    // MARK: Island

    private func drawIsland(_ scene: IslandScene, top: Double, into body: inout [String]) -> Double {
        let (pillWidth, pillHeight) = Self.pillSize
        let keyline = scene.primary?.layout.keylineTint
        switch scene.mode {
        case .none:
            body.append(pill(x: (width - pillWidth) / 2, y: top, width: pillWidth, height: pillHeight, stroke: nil, mode: "none"))
            return top + pillHeight
        case .compact:
            guard let entry = scene.attached else { return top }
            var leading = label(entry.layout.compactLeading?.view)
            let trailing = label(entry.layout.compactTrailing?.view)
            if leading.isEmpty, trailing.isEmpty { leading = Label(text: IslandScene.oneLine(entry.layout.chip ?? "")) }
            let leadingWidth = labelWidth(leading), trailingWidth = labelWidth(trailing)
            let w = min(width - 20, Self.compactMaximumWidth, max(pillWidth, 14 + leadingWidth + 40 + trailingWidth + 14))
            let x = (width - w) / 2
            body.append(pill(x: x, y: top, width: w, height: pillHeight, stroke: keyline, mode: "compact"))
            let baseline = top + pillHeight / 2 + Self.fontSize * 0.35
            let room = w - 28 - 16
            let leadingRoom = trailing.isEmpty ? w - 28 : min(leadingWidth, room / 2)
            body += draw(leading, x: x + 14, baseline: baseline, room: leadingRoom, fill: "#ffffff")
            body += draw(trailing, x: x + w - 14, baseline: baseline, room: room - leadingRoom, fill: readable(keyline), anchor: "end")
            return top + pillHeight
        case .minimal:
            guard let attached = scene.attached, let detached = scene.detached else { return top }
            let gap = 6.0
            let detachedText = truncate(IslandScene.minimalText(detached), toWidth: IslandScene.detachedWidth)
            // The detached bubble is a circle, widening into a capsule for longer text.
            let bubbleWidth = max(pillHeight, textWidth(detachedText, size: 12) + 16)
            let total = pillWidth + gap + bubbleWidth
            let x = (width - total) / 2
            let baseline = top + pillHeight / 2 + Self.fontSize * 0.35
            body.append(pill(x: x, y: top, width: pillWidth, height: pillHeight, stroke: attached.layout.keylineTint, mode: "minimal"))
            body += draw(minimalLabel(attached), x: x + 14, baseline: baseline, room: pillWidth - 28, fill: readable(attached.layout.keylineTint))
            let bx = x + pillWidth + gap
            body.append(roundedRect(x: bx, y: top, width: bubbleWidth, height: pillHeight, radius: pillHeight / 2, fill: "#000000",
                                    stroke: detached.layout.keylineTint, cls: "detached"))
            body.append(text(detachedText, x: bx + bubbleWidth / 2, y: top + pillHeight / 2 + 12 * 0.35, size: 12,
                             fill: readable(detached.layout.keylineTint), anchor: "middle"))
            return top + pillHeight
        case .expanded:
            guard let entry = scene.expanded else { return top }
            let w = Self.expandedWidth
            let x = (width - w) / 2
            let layout = entry.layout
            var content: [String] = []
            var y = top + 30
            let columns = w - 48
            content += draw(label(layout.expandedLeading?.view), x: x + 24, baseline: y, room: columns * 0.25, fill: "#ffffff")
            content += draw(label(layout.expandedCenter?.view), x: x + w / 2, baseline: y, room: columns * 0.45, fill: "#ffffff",
                            weight: "600", anchor: "middle")
            content += draw(label(layout.expandedTrailing?.view), x: x + w - 24, baseline: y, room: columns * 0.25,
                            fill: readable(layout.keylineTint), anchor: "end")
            y += 12
            if let bottom = layout.expandedBottom {
                y = drawRows(ViewRow.rows(of: bottom.view), x: x + 24, top: y, width: w - 48, accent: layout.keylineTint, fill: "#ffffff",
                             into: &content)
            }
            let h = max(84, y - top + 16)
            body.append(roundedRect(x: x, y: top, width: w, height: h, radius: min(44, h / 2), fill: "#000000", stroke: keyline, cls: "island expanded"))
            body += content
            return top + h
        }
    }

    // MARK: Lock screen

    private func drawCard(_ entry: IslandScene.Entry, top: Double, into body: inout [String]) -> Double {
        let x = 20.0, w = width - 40
        var content: [String] = []
        let background = entry.layout.backgroundTint.map { color($0) } ?? (hex: "#1c1c1e", opacity: 1)
        // Text on the card as the eye sees it: the tint over the page.
        let foreground = readableText(on: blend(background, over: (0xF2, 0xF2, 0xF7)))
        var header = IslandScene.oneLine(entry.item.displayName)
        if let via = entry.item.viaText { header += " · " + IslandScene.oneLine(via) }
        if entry.item.activityState != "active" { header += " · " + entry.item.activityState }
        var headerLabel = Label(text: header)
        if let icon = entry.item.appIcon { headerLabel.icon = icons?.appIcon(icon) }
        content += draw(headerLabel, x: x + 16, baseline: top + 22, room: w - 32, size: 11, fill: foreground.secondary)
        var rows = entry.layout.lockScreen.map { ViewRow.rows(of: $0.view) } ?? []
        if rows.isEmpty { rows = [.text(entry.item.type)] }
        let y = drawRows(rows, x: x + 16, top: top + 30, width: w - 32, accent: entry.layout.keylineTint, fill: foreground.primary, into: &content)
        let h = y - top + 12
        body.append(roundedRect(x: x, y: top, width: w, height: h, radius: 22, fill: background.hex, fillOpacity: background.opacity,
                                stroke: entry.layout.keylineTint, cls: "card"))
        body += content
        return top + h
    }

    /// Draws rows from `top`; returns the y below them.
    private func drawRows(_ rows: [ViewRow], x: Double, top: Double, width w: Double, accent: LayoutColor?, fill: String,
                          into body: inout [String]) -> Double {
        var y = top
        for row in rows {
            switch row {
            case .text(let line):
                body.append(text(fit(line, room: w), x: x, y: y + 15, fill: fill))
                y += Self.lineHeight
            case .columns(let parts):
                // A spacer's parts: the first at the left, the last at the right, the others
                // evenly between; each cut to its share.
                let share = w / Double(parts.count)
                for (index, part) in parts.enumerated() where !part.isEmpty {
                    let last = index == parts.count - 1
                    let px = index == 0 ? x : last ? x + w : x + w * Double(index) / Double(parts.count - 1)
                    body.append(text(fit(part, room: share - 8), x: px, y: y + 15, fill: fill,
                                     anchor: index == 0 ? nil : last ? "end" : "middle"))
                }
                y += Self.lineHeight
            case .progress(let progress):
                y += 4
                body.append(progressBar(progress, x: x, y: y, width: w, accent: accent))
                y += 14
            case .buttons(let labels):
                var bx = x
                y += 4
                for label in labels {
                    let bw = min(w, textWidth(label, size: 13) + 24)
                    if bx + bw > x + w { break }
                    body.append(roundedRect(x: bx, y: y, width: bw, height: 26, radius: 13, fill: "#3a3a3c", stroke: nil, cls: "button"))
                    body.append(text(label, x: bx + bw / 2, y: y + 17.5, size: 13, fill: "#ffffff", anchor: "middle"))
                    bx += bw + 8
                }
                y += 32
            }
        }
        return y
    }

    private func progressBar(_ progress: RenderedProgress, x: Double, y: Double, width w: Double, accent: LayoutColor?) -> String {
        let fill = accent.map { color($0).hex } ?? Self.defaultAccent
        var parts = ["<g class=\"progress\">"]
        parts.append("<rect x=\"\(fmt(x))\" y=\"\(fmt(y))\" width=\"\(fmt(w))\" height=\"6\" rx=\"3\" fill=\"#48484a\"/>")
        for segment in progress.segments {
            let c = segment.color.map { color($0) } ?? (hex: "#636366", opacity: 1)
            parts.append("<rect x=\"\(fmt(x + segment.start * w))\" y=\"\(fmt(y))\" width=\"\(fmt(max(0, (segment.end - segment.start) * w - 2)))\" height=\"6\" rx=\"3\" fill=\"\(c.hex)\" fill-opacity=\"0.45\"/>")
        }
        parts.append("<rect class=\"fill\" x=\"\(fmt(x))\" y=\"\(fmt(y))\" width=\"\(fmt(progress.fraction * w))\" height=\"6\" rx=\"3\" fill=\"\(fill)\"/>")
        for point in progress.points {
            let c = point.color.map { color($0).hex } ?? "#ffffff"
            parts.append("<circle cx=\"\(fmt(x + point.position * w))\" cy=\"\(fmt(y + 3))\" r=\"4\" fill=\"\(c)\"/>")
        }
        parts.append("</g>")
        return parts.joined()
    }

    // MARK: Primitives

    private func pill(x: Double, y: Double, width w: Double, height h: Double, stroke: LayoutColor?, mode: String) -> String {
        roundedRect(x: x, y: y, width: w, height: h, radius: h / 2, fill: "#000000", stroke: stroke, cls: "island \(mode)")
    }

    /// A rectangle with continuous ("squircle") corners: each corner is a cubic curve that
    /// starts 1.28 × the radius from the corner, as Apple's corner smoothing does.
    private func roundedRect(x: Double, y: Double, width w: Double, height h: Double, radius: Double, fill: String,
                             fillOpacity: Double = 1, stroke: LayoutColor?, cls: String) -> String {
        let r = min(radius, w / 2, h / 2)
        let s = min(r * 1.28, w / 2, h / 2)
        let k = s * 0.36  // how far the control points sit from the corner
        let d = [
            "M\(fmt(x + s)),\(fmt(y))",
            "H\(fmt(x + w - s))",
            "C\(fmt(x + w - k)),\(fmt(y)) \(fmt(x + w)),\(fmt(y + k)) \(fmt(x + w)),\(fmt(y + s))",
            "V\(fmt(y + h - s))",
            "C\(fmt(x + w)),\(fmt(y + h - k)) \(fmt(x + w - k)),\(fmt(y + h)) \(fmt(x + w - s)),\(fmt(y + h))",
            "H\(fmt(x + s))",
            "C\(fmt(x + k)),\(fmt(y + h)) \(fmt(x)),\(fmt(y + h - k)) \(fmt(x)),\(fmt(y + h - s))",
            "V\(fmt(y + s))",
            "C\(fmt(x)),\(fmt(y + k)) \(fmt(x + k)),\(fmt(y)) \(fmt(x + s)),\(fmt(y))",
            "Z",
        ].joined(separator: " ")
        let opacity = fillOpacity < 1 ? " fill-opacity=\"\(fmt(fillOpacity))\"" : ""
        let strokeAttributes = stroke.map { c in
            let (hex, alpha) = color(c)
            return " stroke=\"\(hex)\" stroke-width=\"1.5\"" + (alpha < 1 ? " stroke-opacity=\"\(fmt(alpha))\"" : "")
        } ?? ""
        return "<path class=\"\(cls)\" d=\"\(d)\" fill=\"\(fill)\"\(opacity)\(strokeAttributes)/>"
    }

    private func text(_ content: String, x: Double, y: Double, size: Double = fontSize, fill: String,
                      weight: String? = nil, anchor: String? = nil) -> String {
        let weightAttribute = weight.map { " font-weight=\"\($0)\"" } ?? ""
        let anchorAttribute = anchor.map { " text-anchor=\"\($0)\"" } ?? ""
        // The one place text meets the SVG: DisplayText's rule (no bidi controls, bounded
        // clusters), XML escaping, and the element isolated from its neighbours' direction.
        return "<text unicode-bidi=\"isolate\" x=\"\(fmt(x))\" y=\"\(fmt(y))\" font-size=\"\(fmt(size))\" fill=\"\(fill)\"\(weightAttribute)\(anchorAttribute)>\(Self.escape(DisplayText.neutralized(content)))</text>"
    }

    // MARK: Alert

    /// The alert under the island, for as long as it lasts: its title in bold, its body below
    /// (two lines at most).
    private func drawAlert(_ alert: PresenterAlert, top: Double, into body: inout [String]) -> Double {
        let w = Self.expandedWidth
        let x = (width - w) / 2
        let title = IslandScene.oneLine(alert.title)
        let text = IslandScene.oneLine(alert.body)
        let cells = Int((w - 40) / (Self.fontSize * 0.6))
        var first = ""
        for character in text {
            if displayWidth(first + String(character)) > cells { break }
            first.append(character)
        }
        let rest = String(text.dropFirst(first.count).drop { $0 == " " })
        let lines = [first, rest].filter { !$0.isEmpty }
        let h = 24 + Self.lineHeight * Double(1 + lines.count)
        var parts = [roundedRect(x: x, y: top, width: w, height: h, radius: 22, fill: "#000000", stroke: nil, cls: "alert")]
        var y = top + 12 + 15
        parts.append(self.text(fit("🔔 " + title, room: w - 40), x: x + 20, y: y, fill: "#ffffff", weight: "600"))
        for line in lines {
            y += Self.lineHeight
            parts.append(self.text(fit(line, room: w - 40), x: x + 20, y: y, fill: "#ffffff"))
        }
        body += parts
        return top + h
    }

    // MARK: Labels

    /// A region's content: an icon from the theme when the view starts with a symbol the
    /// theme has, and the text after it (the symbol as a glyph when the theme lacks it).
    struct Label {
        var icon: IconTheme.Icon?
        var text: String
        init(icon: IconTheme.Icon? = nil, text: String) {
            self.icon = icon
            self.text = text
        }
        var isEmpty: Bool { icon == nil && text.isEmpty }
    }

    private func label(_ view: RenderedView?) -> Label {
        guard let view else { return Label(text: "") }
        var children: [RenderedView]
        switch view {
        case .hstack(let list, _): children = list
        case .link(_, let child): return label(child)
        default: children = [view]
        }
        if case .symbol(let name)? = children.first, let icon = icons?.icon(named: name) {
            children.removeFirst()
            return Label(icon: icon, text: IslandScene.oneLine(RenderedView.hstack(children, spacing: nil).displayText))
        }
        return Label(text: IslandScene.oneLine(view.displayText))
    }

    private func minimalLabel(_ entry: IslandScene.Entry) -> Label {
        let parts = IslandScene.minimalParts(entry)
        guard let symbol = parts.symbol else { return label(parts.view) }
        return label(.hstack([.symbol(symbol), parts.view ?? .spacer], spacing: nil))
    }

    private func labelWidth(_ label: Label, size: Double = fontSize) -> Double {
        (label.icon == nil ? 0 : size + (label.text.isEmpty ? 0 : 4)) + textWidth(label.text, size: size)
    }

    /// The label's elements: the icon (symbolic ones in the text's colour), then the text, cut
    /// to `room`, placed by `anchor` at `x`.
    private func draw(_ label: Label, x: Double, baseline: Double, room: Double, size: Double = fontSize, fill: String,
                      weight: String? = nil, anchor: String? = nil) -> [String] {
        guard let icon = label.icon, room >= size else {
            return label.text.isEmpty ? [] : [text(fit(label.text, room: room, size: size), x: x, y: baseline, size: size, fill: fill, weight: weight, anchor: anchor)]
        }
        let shown = label.text.isEmpty ? "" : fit(label.text, room: room - size - 4, size: size)
        let total = labelWidth(Label(icon: icon, text: shown), size: size)
        let start = anchor == "end" ? x - total : anchor == "middle" ? x - total / 2 : x
        let filter = icon.isSymbolic ? " filter=\"url(#\(fill == "#000000" ? "symbolic-black" : "symbolic-white"))\"" : ""
        var out = ["<image class=\"icon\" x=\"\(fmt(start))\" y=\"\(fmt(baseline - size * 0.85))\" width=\"\(fmt(size))\" height=\"\(fmt(size))\"\(filter) href=\"\(icon.dataURI)\"/>"]
        if !shown.isEmpty { out.append(text(shown, x: start + size + 4, y: baseline, size: size, fill: fill, weight: weight)) }
        return out
    }

    /// Symbolic icons take the colour of their text: every opaque pixel becomes it.
    static let symbolicFilters = ["white": "#ffffff", "black": "#000000"].sorted { $0.key < $1.key }.map { name, hex in
        "<filter id=\"symbolic-\(name)\"><feFlood flood-color=\"\(hex)\"/><feComposite in2=\"SourceAlpha\" operator=\"in\"/></filter>"
    }.joined()

    // MARK: Colours

    /// Text on the black island: the tint when it reads against black (WCAG contrast of at
    /// least 4.5:1), else white. `keylineTint` is the keyline's colour, not a text colour.
    private func readable(_ tint: LayoutColor?) -> String {
        guard let tint else { return "#ffffff" }
        let rgb = (Int(tint.red), Int(tint.green), Int(tint.blue))
        return Self.contrast(Self.luminance(rgb), Self.luminance((0, 0, 0))) >= 4.5 ? color(tint).hex : "#ffffff"
    }

    /// White or black text for a background, whichever contrasts more, with a dimmer secondary.
    private func readableText(on background: (Int, Int, Int)) -> (primary: String, secondary: String) {
        let l = Self.luminance(background)
        return Self.contrast(l, 1) >= Self.contrast(l, 0) ? ("#ffffff", "#d1d1d6") : ("#000000", "#3a3a3c")
    }

    private func blend(_ color: (hex: String, opacity: Double), over page: (Int, Int, Int)) -> (Int, Int, Int) {
        let digits = Array(color.hex.dropFirst())
        func channel(_ index: Int) -> Int { Int(String(digits[index * 2..<index * 2 + 2]), radix: 16) ?? 0 }
        guard digits.count >= 6 else { return page }
        let a = RenderedProgress.unit(color.opacity)
        func mix(_ c: Int, _ p: Int) -> Int { Int((Double(c) * a + Double(p) * (1 - a)).rounded()) }
        return (mix(channel(0), page.0), mix(channel(1), page.1), mix(channel(2), page.2))
    }

    /// WCAG relative luminance of an sRGB colour.
    static func luminance(_ rgb: (Int, Int, Int)) -> Double {
        func linear(_ c: Int) -> Double {
            let v = Double(c) / 255
            return v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(rgb.0) + 0.7152 * linear(rgb.1) + 0.0722 * linear(rgb.2)
    }

    static func contrast(_ a: Double, _ b: Double) -> Double { (max(a, b) + 0.05) / (min(a, b) + 0.05) }

    private func color(_ color: LayoutColor) -> (hex: String, opacity: Double) {
        let opaque = LayoutColor(red: color.red, green: color.green, blue: color.blue)
        return (opaque.description, Double(color.alpha) / 255)
    }

    /// Estimated advance of `text` at `size` points: about 0.6 em a character, twice that wide.
    private func textWidth(_ text: String, size: Double = fontSize) -> Double { Double(displayWidth(text)) * size * 0.6 }

    private func fit(_ text: String, room: Double, size: Double = fontSize) -> String {
        let cells = room / (size * 0.6)
        return truncate(text, toWidth: cells.isFinite ? Int(min(10_000, max(1, cells))) : 1)
    }

    /// A coordinate for an attribute: never `nan` or `inf` (0 instead), and within what `Int`
    /// holds.
    private func fmt(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (min(1e9, max(-1e9, value)) * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// Text as XML character data or attribute value: markup characters become entities,
    /// characters XML 1.0 forbids (most C0 controls, U+FFFE/U+FFFF) become U+FFFD, and the
    /// other controls (tab, CR, DEL, C1) character references, so the document holds no
    /// control character a terminal reads when it is written to standard output.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out.unicodeScalars.append(scalar)
            case "\t", "\r", "\u{7F}"..."\u{9F}": out += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            default:
                let v = scalar.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
