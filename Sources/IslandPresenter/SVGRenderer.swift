import IslandCore

/// Draws a scene as a standalone SVG document: the island at the top (compact pill, minimal
/// pill and detached bubble, or the expanded island) and the lock-screen list below as cards.
public struct SVGRenderer: Sendable {
    public var width: Double = 430
    /// The Dynamic Island's resting size, in points.
    public static let pillSize = (width: 126.0, height: 37.0)
    static let expandedWidth = 371.0
    static let fontSize = 14.0
    static let lineHeight = 20.0
    static let defaultAccent = "#0a84ff"

    public init(width: Double = 430) { self.width = width }

    public func render(_ scene: IslandScene) -> String {
        var body: [String] = []
        var y = 12.0
        y = drawIsland(scene, top: y, into: &body) + 24
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
            var leading = entry.layout.compactLeading?.view.displayText ?? ""
            let trailing = entry.layout.compactTrailing?.view.displayText ?? ""
            if leading.isEmpty, trailing.isEmpty { leading = entry.layout.chip ?? "" }
            let leadingWidth = textWidth(leading), trailingWidth = textWidth(trailing)
            let w = min(width - 20, max(pillWidth, 14 + leadingWidth + 40 + trailingWidth + 14))
            let x = (width - w) / 2
            body.append(pill(x: x, y: top, width: w, height: pillHeight, stroke: keyline, mode: "compact"))
            let baseline = top + pillHeight / 2 + Self.fontSize * 0.35
            let room = w - 28 - 16
            let leadingRoom = trailing.isEmpty ? w - 28 : min(leadingWidth, room / 2)
            body.append(text(fit(leading, room: leadingRoom), x: x + 14, y: baseline, fill: "#ffffff"))
            body.append(text(fit(trailing, room: room - leadingRoom), x: x + w - 14, y: baseline, fill: tintOrWhite(keyline), anchor: "end"))
            return top + pillHeight
        case .minimal:
            guard let attached = scene.attached, let detached = scene.detached else { return top }
            let gap = 6.0
            let detachedText = truncate(IslandScene.minimalText(detached), toWidth: 8)
            // The detached bubble is a circle, widening into a capsule for longer text.
            let bubbleWidth = max(pillHeight, textWidth(detachedText, size: 12) + 16)
            let total = pillWidth + gap + bubbleWidth
            let x = (width - total) / 2
            let baseline = top + pillHeight / 2 + Self.fontSize * 0.35
            body.append(pill(x: x, y: top, width: pillWidth, height: pillHeight, stroke: attached.layout.keylineTint, mode: "minimal"))
            body.append(text(fit(IslandScene.minimalText(attached), room: pillWidth - 28), x: x + 14, y: baseline, fill: tintOrWhite(attached.layout.keylineTint)))
            let bx = x + pillWidth + gap
            body.append(roundedRect(x: bx, y: top, width: bubbleWidth, height: pillHeight, radius: pillHeight / 2, fill: "#000000",
                                    stroke: detached.layout.keylineTint, cls: "detached"))
            body.append(text(detachedText, x: bx + bubbleWidth / 2, y: top + pillHeight / 2 + 12 * 0.35, size: 12,
                             fill: tintOrWhite(detached.layout.keylineTint), anchor: "middle"))
            return top + pillHeight
        case .expanded:
            guard let entry = scene.expanded else { return top }
            let w = Self.expandedWidth
            let x = (width - w) / 2
            let layout = entry.layout
            var content: [String] = []
            var y = top + 30
            let columns = w - 48
            let leading = layout.expandedLeading?.view.displayText ?? ""
            let center = layout.expandedCenter?.view.displayText ?? ""
            let trailing = layout.expandedTrailing?.view.displayText ?? ""
            content.append(text(fit(leading, room: columns * 0.25), x: x + 24, y: y, fill: "#ffffff"))
            content.append(text(fit(center, room: columns * 0.45), x: x + w / 2, y: y, fill: "#ffffff", weight: "600", anchor: "middle"))
            content.append(text(fit(trailing, room: columns * 0.25), x: x + w - 24, y: y, fill: tintOrWhite(layout.keylineTint), anchor: "end"))
            y += 12
            if let bottom = layout.expandedBottom {
                y = drawRows(ViewRow.rows(of: bottom.view), x: x + 24, top: y, width: w - 48, accent: layout.keylineTint, into: &content)
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
        var header = entry.item.app
        if entry.item.activityState != "active" { header += " · " + entry.item.activityState }
        content.append(text(fit(header, room: w - 32), x: x + 16, y: top + 22, size: 11, fill: "#8e8e93"))
        var rows = entry.layout.lockScreen.map { ViewRow.rows(of: $0.view) } ?? []
        if rows.isEmpty { rows = [.text(entry.item.type)] }
        let y = drawRows(rows, x: x + 16, top: top + 30, width: w - 32, accent: entry.layout.keylineTint, into: &content)
        let h = y - top + 12
        let background = entry.layout.backgroundTint.map { color($0) } ?? (hex: "#1c1c1e", opacity: 1)
        body.append(roundedRect(x: x, y: top, width: w, height: h, radius: 22, fill: background.hex, fillOpacity: background.opacity,
                                stroke: entry.layout.keylineTint, cls: "card"))
        body += content
        return top + h
    }

    /// Draws rows from `top`; returns the y below them.
    private func drawRows(_ rows: [ViewRow], x: Double, top: Double, width w: Double, accent: LayoutColor?, into body: inout [String]) -> Double {
        var y = top
        for row in rows {
            switch row {
            case .text(let line):
                body.append(text(fit(line, room: w), x: x, y: y + 15, fill: "#ffffff"))
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
        return "<text x=\"\(fmt(x))\" y=\"\(fmt(y))\" font-size=\"\(fmt(size))\" fill=\"\(fill)\"\(weightAttribute)\(anchorAttribute)>\(Self.escape(content))</text>"
    }

    private func tintOrWhite(_ tint: LayoutColor?) -> String { tint.map { color($0).hex } ?? "#ffffff" }

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
