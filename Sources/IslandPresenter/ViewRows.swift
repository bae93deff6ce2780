package import IslandCore

/// A rendered view laid out as rows, for the presenters that draw blocks (SVG cards, the
/// terminal): text lines, progress bars drawn as bars, and rows of buttons.
package enum ViewRow: Sendable, Hashable {
    case text(String)
    /// A line a `spacer` splits: the parts spread over the width, the first at the left and
    /// the last at the right (an empty part keeps its place).
    case columns([String])
    case progress(RenderedProgress)
    case buttons([String])

    package static func rows(of view: RenderedView) -> [ViewRow] {
        switch view {
        case .vstack(let children, _):
            return children.flatMap(rows(of:))
        case .hstack(let children, _):
            // Plain views stay on one line (split where a spacer is); bars and buttons get
            // their own rows.
            let isBlock: (RenderedView) -> Bool = { $0.firstProgress != nil || !$0.buttons.isEmpty || $0.isVStack }
            var rows: [ViewRow] = []
            var parts: [[String]] = [[]]
            for child in children {
                if isBlock(child) {
                    rows += line(parts)
                    parts = [[]]
                    rows += ViewRow.rows(of: child)
                } else if case .spacer = child {
                    parts.append([])
                } else {
                    parts[parts.count - 1].append(child.displayText)
                }
            }
            rows += line(parts)
            return merged(rows)
        case .progress(let progress):
            return [.progress(progress)]
        case .button:
            return [.buttons(view.buttons.map(\.label))]
        case .link(_, let child):
            return rows(of: child)
        case .image(_, let fallback):
            return fallback.map(rows(of:)) ?? []
        case .spacer:
            return []
        case .text, .symbol, .timer:
            return line(view.displayText)
        }
    }

    private static func line(_ text: String) -> [ViewRow] {
        let text = IslandScene.oneLine(text)
        return text.isEmpty ? [] : [.text(text)]
    }

    /// Inline views grouped by the spacers between them.
    private static func line(_ parts: [[String]]) -> [ViewRow] {
        let texts = parts.map { IslandScene.oneLine($0.filter { !$0.isEmpty }.joined(separator: " ")) }
        if texts.count == 1 { return line(texts[0]) }
        return texts.allSatisfy(\.isEmpty) ? [] : [.columns(texts)]
    }

    /// Adjacent button rows become one row.
    private static func merged(_ rows: [ViewRow]) -> [ViewRow] {
        var out: [ViewRow] = []
        for row in rows {
            if case .buttons(let more) = row, case .buttons(let previous)? = out.last {
                out[out.count - 1] = .buttons(previous + more)
            } else {
                out.append(row)
            }
        }
        return out
    }
}

extension RenderedView {
    var isVStack: Bool { if case .vstack = self { true } else { false } }
}

/// Approximate display width in terminal cells (and, scaled, in SVG text): wide East Asian
/// characters and emoji count two, combining marks and joiners none.
///
/// Every line a presenter draws is measured, several times (the terminal UI's frames are
/// drawn anew on each change and each tick), so the scalars are walked in a plain loop, and
/// what can be told from the scalar's value (everything below U+0300) is.
package func displayWidth(_ text: String) -> Int {
    var width = 0
    for scalar in text.unicodeScalars { width += scalar.value < 0x300 ? 1 : scalarWidth(scalar) }
    return width
}

/// The cells one scalar takes. Controls (below U+00A0) are drawn as spaces
/// (`TerminalText.sanitize`): one cell, as every scalar below U+0300.
func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x300 { return 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if (value >= 0xFE00 && value <= 0xFE0F) || value == 0x200D { return 0 }
    if scalar.properties.isEmojiPresentation { return 2 }
    return isWide(value) ? 2 : 1
}

/// East Asian wide ranges (Hangul Jamo, CJK, Hangul syllables, fullwidth forms), compared one
/// by one rather than through a table of ranges, which would be built on each call.
private func isWide(_ value: UInt32) -> Bool {
    (value >= 0x1100 && value <= 0x115F) || (value >= 0x2E80 && value <= 0x303E) || (value >= 0x3041 && value <= 0x33FF)
        || (value >= 0x3400 && value <= 0x4DBF) || (value >= 0x4E00 && value <= 0x9FFF) || (value >= 0xA000 && value <= 0xA4CF)
        || (value >= 0xAC00 && value <= 0xD7A3) || (value >= 0xF900 && value <= 0xFAFF) || (value >= 0xFE30 && value <= 0xFE4F)
        || (value >= 0xFF00 && value <= 0xFF60) || (value >= 0xFFE0 && value <= 0xFFE6) || (value >= 0x20000 && value <= 0x3FFFD)
}

/// `parts` over `width` cells: the first at the left, the last at the right, those between
/// evenly in the gaps; each cut to an equal share.
package func spreadColumns(_ parts: [String], width: Int) -> String {
    guard parts.count > 1 else { return truncate(parts.first ?? "", toWidth: width) }
    let share = max(1, (width - (parts.count - 1)) / parts.count)
    let cut = parts.map { truncate($0, toWidth: share) }
    let gaps = parts.count - 1
    let free = max(gaps, width - cut.reduce(0) { $0 + displayWidth($1) })
    var out = ""
    for (index, part) in cut.enumerated() {
        out += part
        if index < gaps { out += String(repeating: " ", count: free / gaps + (index < free % gaps ? 1 : 0)) }
    }
    return out
}

/// `text` cut to at most `width` cells, with "…" when cut; dropped whole (nothing) when the cut
/// would keep fewer than three cells of it, since a value cut to "c…" says nothing true.
package func truncate(_ text: String, toWidth width: Int) -> String {
    guard width > 0 else { return "" }
    if displayWidth(text) <= width { return text }
    guard width - 1 >= 3 else { return "" }
    var out = ""
    var used = 0
    for character in text {
        var w = 0
        for scalar in character.unicodeScalars { w += scalarWidth(scalar) }
        if used + w > width - 1 { break }
        out.append(character)
        used += w
    }
    return out + "…"
}
