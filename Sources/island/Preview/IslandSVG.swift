import IslandCore

/// Draws rendered regions as an SVG in the Dynamic Island's proportions: a black pill
/// (compact, minimal), a large rounded island (expanded) or a lock-screen card, white text,
/// a `keylineTint` stroke. Pure: no I/O, so presenters can share it.
public struct IslandSVG: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case compact, minimal, expanded, lockscreen
    }

    public var mode: Mode
    public var layout: RenderedLayout

    public init(mode: Mode, layout: RenderedLayout) {
        self.mode = mode
        self.layout = layout
    }

    static let canvasWidth = 400.0
    static let lineHeight = 18.0
    static let fontSize = 14.0

    private var keyline: String { layout.keylineTint.map(Self.color) ?? "#3a3a3c" }
    private var accent: String { layout.keylineTint.map(Self.color) ?? "#ffffff" }

    public func render() -> String {
        var body = ""
        var height: Double
        switch mode {
        case .compact:
            height = 80
            let (w, h) = (250.0, 40.0)
            let x = (Self.canvasWidth - w) / 2, y = 20.0
            body += pill(x: x, y: y, width: w, height: h)
            if let leading = layout.compactLeading {
                body += draw(leading.view, x: x + 18, y: y + 12, width: w / 2 - 40, align: .start).svg
            }
            if let trailing = layout.compactTrailing {
                body += draw(trailing.view, x: x + w - 18, y: y + 12, width: w / 2 - 40, align: .end).svg
            }
        case .minimal:
            height = 80
            let (w, h) = (126.0, 37.0)
            let x = (Self.canvasWidth - w) / 2 - 22, y = 21.5
            body += pill(x: x, y: y, width: w, height: h)
            let cx = x + w + 8 + h / 2, cy = y + h / 2
            body += "<circle cx=\"\(f(cx))\" cy=\"\(f(cy))\" r=\"\(f(h / 2))\" fill=\"#000000\" stroke=\"\(keyline)\" stroke-width=\"1.5\"/>\n"
            if let minimal = layout.minimal {
                body += draw(minimal.view, x: cx, y: cy - 7, width: h - 8, align: .middle).svg
            }
        case .expanded:
            let w = 370.0, x = (Self.canvasWidth - w) / 2, y = 16.0
            var content = ""
            var top = 0.0
            let columnWidth = (w - 48) / 3
            if let leading = layout.expandedLeading {
                let drawn = draw(leading.view, x: x + 24, y: y + 24, width: columnWidth, align: .start)
                content += drawn.svg
                top = max(top, drawn.height)
            }
            if let center = layout.expandedCenter {
                let drawn = draw(center.view, x: x + w / 2, y: y + 24, width: columnWidth, align: .middle)
                content += drawn.svg
                top = max(top, drawn.height)
            }
            if let trailing = layout.expandedTrailing {
                let drawn = draw(trailing.view, x: x + w - 24, y: y + 24, width: columnWidth, align: .end)
                content += drawn.svg
                top = max(top, drawn.height)
            }
            var bottom = 0.0
            if let region = layout.expandedBottom {
                let drawn = draw(region.view, x: x + 24, y: y + 24 + top + 12, width: w - 48, align: .start)
                content += drawn.svg
                bottom = drawn.height + 12
            }
            let h = max(120, 24 + top + bottom + 28)
            body += "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"\(f(h))\" rx=\"44\" ry=\"44\" fill=\"#000000\" stroke=\"\(keyline)\" stroke-width=\"1.5\"/>\n"
            body += content
            height = y + h + 16
        case .lockscreen:
            let w = 368.0, x = (Self.canvasWidth - w) / 2, y = 16.0
            var content = ""
            var h = 96.0
            if layout.hideContentOnLockScreen {
                content += text("Content hidden on the lock screen", x: x + 20, y: y + 20, width: w - 40, align: .start, opacity: 0.6)
            } else if let region = layout.lockScreen {
                let drawn = draw(region.view, x: x + 20, y: y + 20, width: w - 40, align: .start)
                content += drawn.svg
                h = max(h, drawn.height + 40)
            }
            let background = layout.backgroundTint.map(Self.color) ?? "#1c1c1e"
            body += "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"\(f(h))\" rx=\"22\" ry=\"22\" fill=\"\(background)\" stroke=\"\(keyline)\" stroke-width=\"1.5\"/>\n"
            body += content
            height = y + h + 16
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(f(Self.canvasWidth))" height="\(f(height))" viewBox="0 0 \(f(Self.canvasWidth)) \(f(height))" font-family="sans-serif" font-size="\(f(Self.fontSize))">
            <title>Island preview: \(mode.rawValue)</title>
            <rect width="100%" height="100%" fill="#8e8e93"/>
            \(body)</svg>

            """
    }

    // MARK: Drawing

    enum Align: String { case start, middle, end }

    private func pill(x: Double, y: Double, width: Double, height: Double) -> String {
        "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(height))\" rx=\"\(f(height / 2))\" ry=\"\(f(height / 2))\" fill=\"#000000\" stroke=\"\(keyline)\" stroke-width=\"1.5\"/>\n"
    }

    /// Draws `view` with its top at `y`; `x` is where `align` anchors it. Returns its height.
    private func draw(_ view: RenderedView, x: Double, y: Double, width: Double, align: Align) -> (svg: String, height: Double) {
        switch view {
        case .spacer:
            return ("", 0)
        case .progress(let progress):
            let left = align == .start ? x : align == .end ? x - width : x - width / 2
            let fraction = min(1, max(0, progress.fraction))
            var svg = "<rect x=\"\(f(left))\" y=\"\(f(y + 5))\" width=\"\(f(width))\" height=\"6\" rx=\"3\" fill=\"#ffffff\" fill-opacity=\"0.25\"/>\n"
            svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 5))\" width=\"\(f(width * fraction))\" height=\"6\" rx=\"3\" fill=\"\(accent)\"/>\n"
            return (svg, Self.lineHeight)
        case .vstack(let children, let spacing):
            var svg = ""
            var offset = 0.0
            for child in children {
                let drawn = draw(child, x: x, y: y + offset, width: width, align: align)
                svg += drawn.svg
                if drawn.height > 0 { offset += drawn.height + (spacing ?? 2) }
            }
            return (svg, max(0, offset - (spacing ?? 2)))
        case .hstack(let children, _):
            let shown = children.filter { if case .spacer = $0 { false } else { true } }
            guard !shown.isEmpty else { return ("", 0) }
            // Equal columns; a lone progress bar next to text takes what the text leaves.
            let left = align == .start ? x : align == .end ? x - width : x - width / 2
            let column = width / Double(shown.count)
            var svg = ""
            var height = 0.0
            for (i, child) in shown.enumerated() {
                let isLast = i == shown.count - 1
                let childAlign: Align = shown.count == 1 ? align : (isLast && i > 0 ? .end : .start)
                let anchor = childAlign == .end ? left + column * Double(i + 1) : left + column * Double(i)
                let drawn = draw(child, x: childAlign == .middle ? left + width / 2 : anchor, y: y, width: column - 6, align: childAlign)
                svg += drawn.svg
                height = max(height, drawn.height)
            }
            return (svg, height)
        case .text, .symbol, .timer, .link, .button:
            return (text(view.plainText, x: x, y: y, width: width, align: align), Self.lineHeight)
        }
    }

    private func text(_ string: String, x: Double, y: Double, width: Double, align: Align, opacity: Double = 1) -> String {
        // About 0.6 em per character: shorten what cannot fit, as the island does.
        let fits = max(1, Int(width / (Self.fontSize * 0.6)))
        let shown = string.count > fits ? String(string.prefix(max(1, fits - 1))) + "…" : string
        let opacityAttribute = opacity < 1 ? " fill-opacity=\"\(f(opacity))\"" : ""
        return "<text x=\"\(f(x))\" y=\"\(f(y + Self.fontSize))\" fill=\"#ffffff\"\(opacityAttribute) text-anchor=\"\(align.rawValue)\">\(Self.escape(shown))</text>\n"
    }

    static func escape(_ string: String) -> String {
        var out = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            // Characters XML 1.0 forbids.
            case _ where scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r": out += "\u{FFFD}"
            case _ where scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func color(_ color: LayoutColor) -> String {
        LayoutColor(red: color.red, green: color.green, blue: color.blue).description
    }

    private func f(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 100).rounded() / 100)
    }
}
