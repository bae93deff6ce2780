import IslandCore
import IslandPresenter

/// Lays a rendered view out in rectangles: one line (the island's regions) or rows (the
/// expanded bottom, the list's cards). Pure: text is measured through `TextMetrics`.
struct ViewPlacement {
    let metrics: any TextMetrics
    var geometry = IslandGeometry.medium
    var gap: Double { geometry.inlineGap }

    /// A view flattened to what one line holds, in reading order.
    enum Atom: Equatable {
        case text(String, OverlayFont)
        case symbol(String)
        case bar(RenderedProgress)
        case ring(Double)
        case button(action: String, label: String, symbol: String?)
        /// A picture: a square as tall as its line.
        case image(String)
        case spacer
        /// A link's extent starts and ends: what lies between opens `url` when clicked.
        case link(String?)
        case endLink
    }

    /// `timerFont`: the digits a timer is drawn in (large ones in the expanded island's top row).
    static func atoms(_ view: RenderedView, font: OverlayFont, rings: Bool, timerFont: OverlayFont = .digits) -> [Atom] {
        switch view {
        case .text(let text):
            let line = sanitizedLine(text)
            return line.isEmpty ? [] : [.text(line, font)]
        case .symbol(let name):
            return name.isEmpty ? [] : [.symbol(sanitizedLine(name))]
        case .timer(let timer):
            return timer.text.isEmpty ? [] : [.text(timer.text, timerFont)]
        case .progress(let progress):
            return [rings ? .ring(progress.fraction) : .bar(progress)]
        case .hstack(let children, _):
            return children.flatMap { atoms($0, font: font, rings: rings, timerFont: timerFont) }
        case .vstack(let children, _):
            // Where only one line fits (the compact capsule); the expanded island keeps lines.
            let lines = children.map { atoms($0, font: font, rings: rings, timerFont: timerFont) }.filter { !$0.isEmpty }
            return Array(lines.joined(separator: [.text("·", .caption)]))
        case .spacer:
            return [.spacer]
        case .link(let url, let child):
            return [.link(url)] + atoms(child, font: font, rings: rings, timerFont: timerFont) + [.endLink]
        case .button(let action, let label, let symbol):
            return [.button(action: action, label: sanitizedLine(label), symbol: symbol.map(sanitizedLine))]
        case .image(let path, _):
            // The layout left only pictures its artwork source can draw (`resolvingImages`).
            return [.image(path)]
        }
    }

    /// The most grapheme clusters one line of producer text keeps: more than the widest form
    /// (360 px at medium size) shows of the narrowest letters, far less than a shaper could be made to chew.
    static let maximumClusters = 200

    /// The most scalars of producer text one line is read from, before anything else is done.
    static let maximumLineScalars = 512

    /// Producer text on one line: controls (newlines included) become spaces, and a huge string
    /// is cut long before Pango would spend time shaping what can never be seen. Then the one
    /// rule for producer strings (`DisplayText.neutralized`: no bidi controls, at most 12
    /// scalars per cluster), and at most `maximumClusters` clusters.
    static func sanitizedLine(_ text: String) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            if count > maximumLineScalars { out += "…"; break }
            let v = scalar.value
            out.unicodeScalars.append(v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 ? " " : scalar)
        }
        return boundedClusters(DisplayText.neutralized(out))
    }

    /// `text` cut to `maximumClusters` grapheme clusters (an ellipsis marks the cut).
    static func boundedClusters(_ text: String) -> String {
        // Fewer scalars than the bound: fewer clusters too, nothing to walk.
        guard text.unicodeScalars.count > maximumClusters else { return text }
        var clusters = 0
        for index in text.indices {
            clusters += 1
            if clusters > maximumClusters { return String(text[..<index]) + "…" }
        }
        return text
    }

    /// Producer text composed with text of ours on one line ("Name · stale"): its direction is
    /// isolated (FSI … PDI), so a right-to-left name cannot reorder what follows it.
    static func isolated(_ text: String) -> String { "\u{2068}" + text + "\u{2069}" }

    func naturalWidth(_ atom: Atom, height: Double) -> Double {
        switch atom {
        case .text(let text, let font): metrics.width(of: text, font: font)
        case .symbol, .image: height
        case .bar: 40 * geometry.factor
        case .ring: height
        case .button(_, let label, let symbol): buttonWidth(label: label, symbol: symbol)
        case .spacer, .link, .endLink: 0
        }
    }

    /// The narrowest a text may be cut to: an ellipsis and a few letters, never one or two.
    func readableWidth(_ font: OverlayFont) -> Double { geometry.fontSize(font) * 3 }

    /// A button with a symbol is an icon button of one fixed width: its label is only its
    /// accessible name, so a row of media buttons never shifts when a label changes. A button
    /// without one is a pill as wide as its label.
    func buttonWidth(label: String, symbol: String?) -> Double {
        if symbol != nil { return geometry.iconButton }
        let labelWidth = label.isEmpty ? 0 : metrics.width(of: label, font: .body)
        return min(220 * geometry.factor, labelWidth + 2 * geometry.buttonPadding)
    }

    /// A region's lines in the expanded island: a `vstack`'s children each on a line of its own
    /// (a title over its subtitles), anything else one line. Lines with nothing to show are
    /// left out.
    static func lines(_ view: RenderedView) -> [RenderedView] {
        switch view {
        case .vstack(let children, _):
            return children.filter { !atoms($0, font: .body, rings: false).allSatisfy { $0 == .spacer || $0.isLinkMark } }
        case .link(let url, let child):
            guard case .vstack = child else { return [view] }
            return lines(child).map { .link(url: url, child: $0) }
        default:
            return [view]
        }
    }

    /// The natural width of a view on one line.
    func inlineWidth(_ view: RenderedView, font: OverlayFont = .body, height: Double, rings: Bool = false, timerFont: OverlayFont = .digits) -> Double {
        let atoms = Self.atoms(view, font: font, rings: rings, timerFont: timerFont).filter { $0 != .spacer && !$0.isLinkMark }
        guard !atoms.isEmpty else { return 0 }
        return atoms.reduce(0) { $0 + naturalWidth($1, height: height) } + gap * Double(atoms.count - 1)
    }

    /// Places a view on one line in `rect`. Texts shrink (and are ellipsized when drawn) when
    /// the line is too long, the last first; bars and spacers take what is left.
    func inline(
        _ view: RenderedView, in rect: OverlayRect, font: OverlayFont = .body, ink: OverlayInk = .primary,
        alignment: OverlayAlignment = .leading, symbolSize: Double? = nil, rings: Bool = false, timerFont: OverlayFont = .digits,
        tint: LayoutColor? = nil, slot: String, links: inout [(OverlayRect, String?)]
    ) -> [OverlayPlaced] {
        let all = Self.atoms(view, font: font, rings: rings, timerFont: timerFont)
        let atoms = all.filter { !$0.isLinkMark }
        guard !atoms.isEmpty, rect.width > 0 else { return [] }
        let linksBefore = links.count
        let symbol = min(symbolSize ?? rect.height, rect.height)
        var widths = atoms.map { atom -> Double in
            if case .ring = atom { return symbol }
            if case .image = atom { return rect.height }
            return naturalWidth(atom, height: symbol)
        }
        let visible = atoms.filter { $0 != .spacer }.count
        let gaps = gap * Double(max(0, visible - 1))
        var overflow = widths.reduce(0, +) + gaps - rect.width
        // Less than half a pixel over is arithmetic, not a line too long: cutting it would
        // ellipsize a text that fits.
        if overflow > 0.5 {
            // Texts give way, the last first, but never below a few letters: a value cut to
            // "c…" says nothing true. One that would have to is dropped whole instead.
            for index in atoms.indices.reversed() where overflow > 0 {
                guard case .text(_, let atomFont) = atoms[index] else { continue }
                let cut = min(overflow, max(0, widths[index] - min(widths[index], readableWidth(atomFont))))
                widths[index] -= cut
                overflow -= cut
            }
            for index in atoms.indices.reversed() where overflow > 0 {
                guard case .text = atoms[index], widths[index] > 0 else { continue }
                overflow -= widths[index] + (visible > 1 ? gap : 0)
                widths[index] = 0
            }
            // What a dropped text left goes back to the texts cut before it, the first first.
            for index in atoms.indices where overflow < 0 {
                guard case .text = atoms[index], widths[index] > 0 else { continue }
                let natural = naturalWidth(atoms[index], height: symbol)
                let back = min(-overflow, max(0, natural - widths[index]))
                widths[index] += back
                overflow += back
            }
            for index in atoms.indices.reversed() where overflow > 0 {
                let cut = min(overflow, widths[index])
                widths[index] -= cut
                overflow -= cut
            }
        }
        var leftover = max(0, -overflow)
        let flexible = atoms.indices.filter { if case .bar = atoms[$0] { true } else { false } }
        let spacers = atoms.indices.filter { atoms[$0] == .spacer }
        if !flexible.isEmpty {
            for index in flexible { widths[index] += leftover / Double(flexible.count) }
            leftover = 0
        } else if !spacers.isEmpty {
            for index in spacers { widths[index] = leftover / Double(spacers.count) }
            leftover = 0
        }
        var x = rect.x
        switch alignment {
        case .leading: break
        case .center: x += leftover / 2
        case .trailing: x += leftover
        }
        var placed: [OverlayPlaced] = []
        var atomIndex = 0
        var linkStart: (x: Double, url: String?)?
        var first = true
        for entry in all {
            switch entry {
            case .link(let url):
                linkStart = (x, url)
                continue
            case .endLink:
                if let start = linkStart { links.append((OverlayRect(x: start.x, y: rect.y, width: max(0, x - start.x), height: rect.height), start.url)) }
                linkStart = nil
                continue
            default: break
            }
            let atom = atoms[atomIndex]
            let width = widths[atomIndex]
            let slotName = "\(slot).\(atomIndex)"
            atomIndex += 1
            if atom == .spacer { x += width; continue }
            // What was dropped (or cut to nothing) takes no gap either.
            guard width > 0.5 else { continue }
            if !first { x += gap }
            first = false
            switch atom {
            case .text(let text, let atomFont):
                placed.append(
                    .init(
                        rect: .init(x: x, y: rect.y, width: width, height: rect.height),
                        primitive: .text(text, font: atomFont, ink: text == "·" ? .secondary : ink, alignment: .leading), slot: slotName))
            case .symbol(let name):
                placed.append(.init(rect: .init(x: x, y: rect.midY - symbol / 2, width: width, height: symbol), primitive: .symbol(name), slot: slotName))
            case .bar(let progress):
                let thickness = geometry.barThickness
                placed.append(
                    .init(
                        rect: .init(x: x, y: rect.midY - thickness / 2, width: width, height: thickness), primitive: .bar(progress, tint: tint), slot: slotName)
                )
            case .ring(let fraction):
                placed.append(
                    .init(rect: .init(x: x, y: rect.midY - symbol / 2, width: symbol, height: symbol), primitive: .ring(fraction, tint: tint), slot: slotName))
            case .image(let path):
                placed.append(.init(rect: .init(x: x, y: rect.y, width: width, height: rect.height), primitive: .image(path: path), slot: slotName))
            case .button(let action, let label, let buttonSymbol):
                let height = min(rect.height, geometry.iconButton)
                placed.append(
                    .init(
                        rect: .init(x: x, y: rect.midY - height / 2, width: width, height: height),
                        primitive: .button(action: action, label: label, symbol: buttonSymbol), slot: slotName))
            case .spacer, .link, .endLink:
                break
            }
            x += width
        }
        // A line whose first strong character is right-to-left reads from the right: its
        // pieces are laid out mirrored in its rectangle (what leads stands at the right).
        if Self.isRightToLeft(atoms.lazy.compactMap { if case .text(let text, _) = $0 { text } else { nil } }.joined()) {
            func mirrored(_ r: OverlayRect) -> OverlayRect { OverlayRect(x: rect.x + rect.maxX - r.maxX, y: r.y, width: r.width, height: r.height) }
            for index in placed.indices { placed[index].rect = mirrored(placed[index].rect) }
            for index in links.indices.dropFirst(linksBefore) { links[index].0 = mirrored(links[index].0) }
        }
        return placed
    }

    /// Whether `text`'s first strong character is right-to-left (Hebrew, Arabic, Syriac,
    /// Thaana, N'Ko and the other right-to-left scripts): the paragraph direction the Unicode
    /// bidirectional algorithm gives it. Text with no strong character reads left to right.
    static func isRightToLeft(_ text: String) -> Bool {
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: return true
            default: if scalar.properties.isAlphabetic { return false }
            }
        }
        return false
    }

    /// Rows of a view: a vstack is one row per child; anything else is one row, taller when it
    /// holds buttons. Returns what was placed and the height used.
    func block(
        _ view: RenderedView, x: Double, y: Double, width: Double, tint: LayoutColor?, slot: String,
        links: inout [(OverlayRect, String?)]
    ) -> (placed: [OverlayPlaced], height: Double) {
        switch view {
        case .vstack(let children, let spacing):
            var placed: [OverlayPlaced] = []
            var top = y
            var any = false
            for (index, child) in children.enumerated() {
                let space = any ? spacing.map(Self.clampSpacing).map { $0 * geometry.factor } ?? geometry.rowGap : 0
                let row = block(child, x: x, y: top + space, width: width, tint: tint, slot: "\(slot).\(index)", links: &links)
                guard row.height > 0 else { continue }
                top += row.height + space
                any = true
                placed += row.placed
            }
            return (placed, top - y)
        case .link(let url, let child):
            let inner = block(child, x: x, y: y, width: width, tint: tint, slot: slot, links: &links)
            links.append((OverlayRect(x: x, y: y, width: width, height: inner.height), url))
            return inner
        case .spacer:
            return ([], 0)
        default:
            let atoms = Self.atoms(view, font: .body, rings: false)
            guard !atoms.isEmpty, atoms.contains(where: { $0 != .spacer && !$0.isLinkMark }) else { return ([], 0) }
            let hasButtons = atoms.contains { if case .button = $0 { true } else { false } }
            let onlyBar = atoms.allSatisfy { if case .bar = $0 { true } else { $0 == .spacer } }
            let height = hasButtons ? geometry.buttonRowHeight : onlyBar ? geometry.barRowHeight : geometry.rowHeight
            let placed = inline(
                view, in: OverlayRect(x: x, y: y, width: width, height: height),
                symbolSize: geometry.rowSymbol, tint: tint, slot: slot, links: &links)
            return (placed, height)
        }
    }

    private static func clampSpacing(_ value: Double) -> Double { value.isFinite ? min(24, max(0, value)) : 4 }
}

extension ViewPlacement.Atom {
    var isLinkMark: Bool {
        switch self {
        case .link, .endLink: true
        default: false
        }
    }
}

extension RenderedView {
    /// The view with each picture `canDraw` refuses replaced by its fallback (or nothing): what
    /// the overlay lays out, so that a file that is not a picture takes no room.
    func resolvingImages(_ canDraw: (String) -> Bool) -> RenderedView {
        switch self {
        case .image(let path, let fallback):
            if canDraw(path) { return self }
            return fallback?.resolvingImages(canDraw) ?? .text("")
        case .hstack(let children, let spacing): return .hstack(children.map { $0.resolvingImages(canDraw) }, spacing: spacing)
        case .vstack(let children, let spacing): return .vstack(children.map { $0.resolvingImages(canDraw) }, spacing: spacing)
        case .link(let url, let child): return .link(url: url, child: child.resolvingImages(canDraw))
        default: return self
        }
    }
}

extension IslandScene {
    /// Every region of every activity with its pictures resolved (`RenderedView.resolvingImages`).
    func resolvingImages(_ canDraw: (String) -> Bool) -> IslandScene {
        func resolved(_ entry: Entry?) -> Entry? {
            guard var entry else { return nil }
            let regions: [WritableKeyPath<RenderedLayout, RenderedRegion?>] = [
                \.lockScreen, \.compactLeading, \.compactTrailing, \.minimal, \.expandedLeading, \.expandedTrailing, \.expandedCenter, \.expandedBottom,
            ]
            for region in regions {
                if let view = entry.layout[keyPath: region]?.view { entry.layout[keyPath: region]?.view = view.resolvingImages(canDraw) }
            }
            return entry
        }
        var scene = self
        scene.attached = resolved(attached)
        scene.detached = resolved(detached)
        scene.expanded = resolved(expanded)
        scene.lockScreen = lockScreen.compactMap(resolved)
        return scene
    }
}
