import IslandCore
package import IslandPresenter
import FreeDesktop
import IslandProtocol

/// The island's geometry as a pure function of the scene: every form's rectangles and corner
/// radii, the content placed in them, and what a click on each place means.
package struct OverlayLayout {
    /// The width of the surface the island is centred in.
    package var canvasWidth: Double
    /// The room below the island for the list panel.
    package var canvasHeight: Double
    /// The gap between the surface's top and the island.
    package var top: Double
    /// Every form's sizes (`Size=`).
    package var geometry: IslandGeometry
    package let metrics: any TextMetrics
    /// Whether a lone timer in the expanded top row is drawn in large digits: not when the
    /// centre beside it would be cut even in the widest island (the words first, then the size
    /// of the clock).
    var largeTimers = true
    /// What decides which pictures are drawn (the painter's `artwork`); nil: none is, every
    /// `image` view shows its fallback (the SVG document, which holds nothing read from disk).
    package let artwork: (any OverlayArtworkSource)?

    /// `canvasWidth` nil: the geometry's own canvas.
    package init(
        canvasWidth: Double? = nil, canvasHeight: Double = 640, top: Double = 8, geometry: IslandGeometry = .medium,
        metrics: any TextMetrics, artwork: (any OverlayArtworkSource)? = nil
    ) {
        self.canvasWidth = canvasWidth ?? geometry.canvasWidth
        self.canvasHeight = canvasHeight
        self.top = top
        self.geometry = geometry
        self.metrics = metrics
        self.artwork = artwork
    }

    var placement: ViewPlacement { ViewPlacement(metrics: metrics, geometry: geometry) }

    /// The resting capsule's height at the medium size, for code that has no geometry at hand.
    package static let pillHeight = IslandGeometry.medium.pillHeight

    /// The form a scene shows: an alert while its activity is expanded for it.
    package static func form(of scene: IslandScene) -> OverlayForm {
        switch scene.mode {
        case .none: return .hidden
        case .compact: return .compact
        case .minimal: return .minimal
        case .expanded:
            if let alert = scene.alert, alert.id == scene.expanded?.item.id, !(alert.title.isEmpty && alert.body.isEmpty) { return .alert }
            return .expanded
        }
    }

    package func frame(_ scene: IslandScene, listOpen: Bool = false) -> OverlayFrame {
        let scene = scene.resolvingImages { artwork?.canDraw($0) ?? false }
        var frame = OverlayFrame(form: Self.form(of: scene), listOpen: listOpen, shapes: [], content: [], hits: [])
        switch frame.form {
        case .hidden: break
        case .compact: if let entry = scene.attached { compact(entry, into: &frame) }
        case .minimal: if let attached = scene.attached, let detached = scene.detached { minimal(attached, detached, into: &frame) }
        case .expanded: if let entry = scene.expanded { expanded(entry, into: &frame) }
        case .alert: if let entry = scene.expanded, let alert = scene.alert { alertForm(alert, entry, into: &frame) }
        }
        // A stale activity looks stale in every form: dimmed, in a dashed outline.
        let bubble = frame.form == .minimal ? scene.detached : nil
        let island = frame.form == .compact || frame.form == .minimal ? scene.attached : scene.expanded
        for (entry, id) in [(island, "island"), (bubble, "bubble")] {
            guard let entry, OverlayStanding(entry.item) != .live else { continue }
            let standing = OverlayStanding(entry.item)
            for index in frame.content.indices where frame.content[index].slot.hasPrefix("minimal.detached") == (id == "bubble") {
                frame.content[index].standing = standing
            }
            for index in frame.shapes.indices where frame.shapes[index].id == id { frame.shapes[index].stale = true }
        }
        if listOpen { list(scene.lockScreen, below: frame.shape("island")?.rect.maxY ?? top - 10, into: &frame) }
        return frame
    }

    // MARK: Compact

    /// The capsule hugs its content: leading and trailing side by side, one gap between them,
    /// no camera to leave room for. A capsule wider than its content (its minimum width) keeps
    /// the content together in its middle.
    private func compact(_ entry: IslandScene.Entry, into frame: inout OverlayFrame) {
        let g = geometry
        let height = g.pillHeight, contentHeight = g.compactContentHeight
        var leadingView = entry.layout.compactLeading?.view
        var trailingView = entry.layout.compactTrailing?.view
        func natural(_ view: RenderedView?) -> Double { view.map { placement.inlineWidth($0, height: contentHeight, rings: true) } ?? 0 }
        if natural(leadingView) == 0, natural(trailingView) == 0 { leadingView = .text(entry.layout.chip ?? entry.item.type) }
        if natural(leadingView) == 0 { leadingView = nil }
        if natural(trailingView) == 0 { trailingView = nil }
        let leading = natural(leadingView), trailing = natural(trailingView)
        let gap = leadingView != nil && trailingView != nil ? g.compactGap : 0
        var leadingInset = inset(leadingView ?? trailingView, atEnd: false)
        var trailingInset = inset(trailingView ?? leadingView, atEnd: true)
        let maximum = min(g.compactMaximumWidth, canvasWidth - 16)
        let hugging = leadingInset + leading + gap + trailing + trailingInset
        let width = min(maximum, max(g.compactMinimumWidth, hugging))
        // A minimum width wider than the content: the content stays together in the middle.
        let slack = max(0, width - hugging)
        leadingInset += slack / 2
        trailingInset += slack / 2
        let x = (canvasWidth - width) / 2
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: height / 2, keyline: entry.layout.keylineTint))
        let room = max(0, width - leadingInset - trailingInset - gap)
        // Too long for the widest capsule: the trailing value keeps its width while it takes
        // at most half the room, and the leading content is ellipsized first.
        let leadingRoom = leading + trailing <= room ? leading : min(leading, max(room / 2, room - trailing))
        let contentY = top + (height - contentHeight) / 2
        var links: [(OverlayRect, String?)] = []
        if let leadingView {
            frame.content += placement.inline(
                leadingView, in: .init(x: x + leadingInset, y: contentY, width: leadingRoom, height: contentHeight),
                rings: true, tint: entry.layout.keylineTint, slot: "compact.leading", links: &links)
        }
        if let trailingView {
            let trailingRoom = min(trailing, room - (leadingView != nil ? leadingRoom : 0))
            frame.content += placement.inline(
                trailingView,
                in: .init(
                    x: x + width - trailingInset - trailingRoom, y: contentY, width: trailingRoom,
                    height: contentHeight),
                alignment: .trailing, rings: true, tint: entry.layout.keylineTint, slot: "compact.trailing", links: &links)
        }
        frame.hits.append(OverlayHit(rect: rect, target: .expand(id: entry.item.id), name: "Island: \(accessibleText(entry, compact: true))"))
    }

    /// The capsule's inset at one end: a symbol or ring sits concentric with the end's curve,
    /// text keeps more air.
    private func inset(_ view: RenderedView?, atEnd: Bool) -> Double {
        let atoms = view.map { ViewPlacement.atoms($0, font: .body, rings: true).filter { $0 != .spacer && !$0.isLinkMark } } ?? []
        switch atEnd ? atoms.last : atoms.first {
        case .symbol, .ring, .image: return geometry.compactSymbolInset
        default: return geometry.compactTextInset
        }
    }

    // MARK: Minimal

    /// The attached activity's capsule, as in compact, and the detached one split off beside
    /// it as a circle: its icon or ring, or short text where it fits.
    private func minimal(_ attached: IslandScene.Entry, _ detached: IslandScene.Entry, into frame: inout OverlayFrame) {
        compact(attached, into: &frame)
        guard let pill = frame.shape("island")?.rect else { return }
        let g = geometry
        let diameter = g.minimalDiameter
        let bubble = OverlayRect(x: pill.maxX + g.bubbleGap, y: top, width: diameter, height: diameter)
        frame.shapes.append(OverlayShape(id: "bubble", kind: .bubble, rect: bubble, radius: diameter / 2, keyline: detached.layout.keylineTint))
        var links: [(OverlayRect, String?)] = []
        if let view = bubbleContent(detached) {
            let inner = diameter - 2 * g.minimalInset
            let width = bubbleContentWidth(view)
            frame.content += placement.inline(
                view, in: .init(x: bubble.midX - width / 2, y: bubble.midY - inner / 2, width: width, height: inner),
                font: .caption, alignment: .center, rings: true, timerFont: .caption,
                tint: detached.layout.keylineTint, slot: "minimal.detached", links: &links)
        }
        frame.hits.append(OverlayHit(rect: bubble, target: .expand(id: detached.item.id), name: "Second activity: \(accessibleText(detached, compact: false))"))
    }

    /// What the bubble holds: the minimal view when it fits the circle; else its ring or symbol;
    /// else the compact leading view's; else the minimal view, ellipsized.
    func bubbleContent(_ entry: IslandScene.Entry) -> RenderedView? {
        let g = geometry
        let inner = g.minimalDiameter - 2 * g.minimalInset
        let candidates = [entry.layout.minimal?.view, entry.layout.compactLeading?.view].compactMap { $0 }
        for view in candidates {
            let width = placement.inlineWidth(view, font: .caption, height: inner, rings: true, timerFont: .caption)
            if width > 0, width <= bubbleContentWidth(view) + 0.5 { return view }
            for atom in ViewPlacement.atoms(view, font: .caption, rings: true, timerFont: .caption) {
                if case .ring(let fraction) = atom { return .progress(RenderedProgress(fraction: fraction)) }
                if case .symbol(let name) = atom { return .symbol(name) }
            }
        }
        return candidates.first
    }

    /// How wide the bubble's content may be: text may use a little more of the circle's width
    /// than a symbol or a ring does.
    private func bubbleContentWidth(_ view: RenderedView) -> Double {
        let g = geometry
        let isText = ViewPlacement.atoms(view, font: .caption, rings: true, timerFont: .caption).contains { if case .text = $0 { true } else { false } }
        return isText ? g.minimalDiameter - g.minimalInset : g.minimalDiameter - 2 * g.minimalInset
    }

    // MARK: Expanded

    /// Which top-row regions get room: a short leading or trailing value (a percentage, a time)
    /// keeps its width whatever the priorities, the centre giving way first; then a region
    /// keeps its natural width by priority while room is left; a leading or trailing region
    /// marked `belowIfTooWide` that does not fit moves to a row of its own below, any other
    /// one is ellipsized.
    struct TopRow: Equatable {
        enum Region: String, Equatable { case leading, center, trailing }
        var widths: [Region: Double] = [:]
        var below: [Region] = []
    }

    func allocateTopRow(_ regions: [(TopRow.Region, RenderedRegion)], room: Double, gap: Double) -> TopRow {
        var row = TopRow()
        let order: [TopRow.Region] = [.center, .leading, .trailing]
        let naturals = Dictionary(regions.map { ($0.0, naturalWidth($0.1.view, in: $0.0)) }, uniquingKeysWith: { a, _ in a })
        var used = 0.0
        func take(_ region: TopRow.Region, _ width: Double) {
            used += width + (row.widths.isEmpty ? 0 : gap)
            row.widths[region] = width
        }
        let short = room * IslandGeometry.shortValueShare
        for (region, _) in regions where region != .center {
            if let natural = naturals[region], natural > 0, natural <= short { take(region, natural) }
        }
        let sorted = regions.filter { row.widths[$0.0] == nil }.sorted { a, b in
            a.1.priority != b.1.priority ? a.1.priority > b.1.priority : order.firstIndex(of: a.0)! < order.firstIndex(of: b.0)!
        }
        for (index, (region, rendered)) in sorted.enumerated() {
            let natural = naturals[region] ?? 0
            guard natural > 0 else { continue }
            let reserve = Double(sorted.count - index - 1) * 36 * geometry.factor
            let available = max(0, room - used - (row.widths.isEmpty ? 0 : gap) - reserve)
            if natural > available, rendered.belowIfTooWide, region != .center {
                row.below.append(region)
                continue
            }
            let width = min(natural, available)
            guard width > 0 else { continue }
            take(region, width)
        }
        row.below.sort { order.firstIndex(of: $0)! > order.firstIndex(of: $1)! }
        return row
    }

    /// The fonts of a top-row region's lines: the centre's first line a title, a side's body
    /// text; a region that is one timer in large tabular digits; later lines secondary.
    private func lineStyle(_ region: TopRow.Region, lines: [RenderedView], index: Int) -> (font: OverlayFont, ink: OverlayInk, timer: OverlayFont) {
        guard index == 0 else { return (.body, .secondary, .digits) }
        let timer: OverlayFont = lines.count == 1 && largeTimers ? .largeDigits : .digits
        return (region == .center ? .title : .body, .primary, timer)
    }

    /// A progress at a side of the top row is a ring, as in the compact capsule; in the centre
    /// and below, a bar.
    private func rings(_ region: TopRow.Region) -> Bool { region != .center }

    private func lineHeight(
        _ line: RenderedView, in region: TopRow.Region, style: (font: OverlayFont, ink: OverlayInk, timer: OverlayFont),
        lines: Int
    ) -> Double {
        let atoms = ViewPlacement.atoms(line, font: style.font, rings: rings(region), timerFont: style.timer).filter { $0 != .spacer && !$0.isLinkMark }
        if lines == 1, atoms.contains(where: { if case .text(_, .largeDigits) = $0 { true } else { false } }) { return geometry.largeDigitsHeight }
        if lines == 1, atoms.count == 1, case .image = atoms[0] { return geometry.expandedArtwork }
        if lines == 1, atoms.allSatisfy({ if case .symbol = $0 { true } else if case .ring = $0 { true } else { false } }) {
            return geometry.expandedSymbol
        }
        return style.ink == .primary ? geometry.titleLineHeight : geometry.subtitleLineHeight
    }

    func naturalWidth(_ view: RenderedView, in region: TopRow.Region) -> Double {
        let lines = ViewPlacement.lines(view)
        return lines.indices.map { index in
            let style = lineStyle(region, lines: lines, index: index)
            return placement.inlineWidth(
                lines[index], font: style.font, height: lineHeight(lines[index], in: region, style: style, lines: lines.count),
                rings: rings(region), timerFont: style.timer)
        }.max() ?? 0
    }

    /// A region's height in the top row: its lines stacked.
    private func regionHeight(_ view: RenderedView, in region: TopRow.Region) -> Double {
        let lines = ViewPlacement.lines(view)
        return lines.indices.reduce(0) { $0 + lineHeight(lines[$1], in: region, style: lineStyle(region, lines: lines, index: $1), lines: lines.count) }
    }

    /// A region's lines, stacked and centred vertically in `rect`.
    private func placeLines(
        _ view: RenderedView, in region: TopRow.Region, rect: OverlayRect, alignment: OverlayAlignment, tint: LayoutColor?,
        slot: String, links: inout [(OverlayRect, String?)]
    ) -> [OverlayPlaced] {
        let lines = ViewPlacement.lines(view)
        var y = rect.midY - regionHeight(view, in: region) / 2
        var placed: [OverlayPlaced] = []
        for (index, line) in lines.enumerated() {
            let style = lineStyle(region, lines: lines, index: index)
            let height = lineHeight(line, in: region, style: style, lines: lines.count)
            placed += placement.inline(
                line, in: .init(x: rect.x, y: y, width: rect.width, height: height), font: style.font, ink: style.ink,
                alignment: alignment, symbolSize: geometry.expandedSymbol, rings: rings(region), timerFont: style.timer, tint: tint,
                slot: lines.count == 1 ? slot : "\(slot).line\(index)", links: &links)
            y += height
        }
        return placed
    }

    private func expanded(_ entry: IslandScene.Entry, into frame: inout OverlayFrame) {
        let g = geometry
        var width = min(g.expandedWidth, canvasWidth - 16)
        let pad = g.expandedPadding, gap = g.expandedGap
        let layout = entry.layout
        var regions: [(TopRow.Region, RenderedRegion)] = []
        if let region = layout.expandedLeading { regions.append((.leading, region)) }
        if let region = layout.expandedCenter { regions.append((.center, region)) }
        if let region = layout.expandedTrailing { regions.append((.trailing, region)) }
        var inner = width - 2 * pad
        var row = allocateTopRow(regions, room: inner, gap: gap)
        // A centre that would be cut ("artist — album" beside a large clock) widens the island
        // first, as far as the canvas allows, before any of it is cut.
        if let center = layout.expandedCenter, let given = row.widths[.center] {
            let natural = naturalWidth(center.view, in: .center), widest = canvasWidth - 2 * IslandGeometry.canvasMargin
            if natural > given + 0.5, width < widest {
                width = min(widest, width + natural - given)
                inner = width - 2 * pad
                row = allocateTopRow(regions, room: inner, gap: gap)
            }
            // Still cut beside a clock in large digits, and whole beside the same clock in the
            // body's digits: the clock takes the body's digits.
            let clocks = regions.filter { $0.0 != .center && ViewPlacement.lines($0.1.view).count == 1 }.flatMap { _, rendered in
                ViewPlacement.atoms(rendered.view, font: .body, rings: true, timerFont: .largeDigits).compactMap { atom -> String? in
                    if case .text(let text, .largeDigits) = atom { text } else { nil }
                }
            }
            let saved = clocks.reduce(0.0) { $0 + metrics.width(of: $1, font: .largeDigits) - metrics.width(of: $1, font: .digits) }
            let cut = natural - (row.widths[.center] ?? 0)
            if largeTimers, !clocks.isEmpty, cut > 0.5, cut <= saved {
                var plain = self
                plain.largeTimers = false
                plain.expanded(entry, into: &frame)
                return
            }
        }
        let x = (canvasWidth - width) / 2
        var y = top + pad * 0.8
        var links: [(OverlayRect, String?)] = []
        var content: [OverlayPlaced] = []
        if !row.widths.isEmpty {
            let rowHeight = regions.filter { row.widths[$0.0] != nil }.map { regionHeight($0.1.view, in: $0.0) }.max() ?? g.titleLineHeight
            let leading = row.widths[.leading] ?? 0, trailing = row.widths[.trailing] ?? 0
            if let region = layout.expandedLeading, leading > 0 {
                let rect = OverlayRect(x: x + pad, y: y, width: leading, height: rowHeight)
                content += placeLines(
                    region.view, in: .leading, rect: rect, alignment: .leading, tint: layout.keylineTint, slot: "expanded.leading", links: &links)
                links.append((rect, region.url))
            }
            if let region = layout.expandedTrailing, trailing > 0 {
                let rect = OverlayRect(x: x + width - pad - trailing, y: y, width: trailing, height: rowHeight)
                content += placeLines(
                    region.view, in: .trailing, rect: rect, alignment: .trailing, tint: layout.keylineTint, slot: "expanded.trailing", links: &links)
                links.append((rect, region.url))
            }
            if let region = layout.expandedCenter, let centerWidth = row.widths[.center] {
                let left = x + pad + (leading > 0 ? leading + gap : 0), right = x + width - pad - (trailing > 0 ? trailing + gap : 0)
                // One line is centred on the island when the sides leave room; a title over
                // subtitles reads from beside the leading region.
                let multiline = ViewPlacement.lines(region.view).count > 1
                let centred = x + (width - centerWidth) / 2
                let cx = multiline ? left : min(max(centred, left), max(left, right - centerWidth))
                let rect = OverlayRect(x: cx, y: y, width: min(centerWidth, max(0, right - left)), height: rowHeight)
                content += placeLines(
                    region.view, in: .center, rect: rect, alignment: multiline ? .leading : .center, tint: layout.keylineTint,
                    slot: "expanded.center", links: &links)
                links.append((rect, region.url))
            }
            y += rowHeight + gap
        }
        for region in row.below {
            guard let rendered = region == .leading ? layout.expandedLeading : layout.expandedTrailing else { continue }
            let height = regionHeight(rendered.view, in: region)
            let rect = OverlayRect(x: x + pad, y: y, width: inner, height: height)
            content += placeLines(
                rendered.view, in: region, rect: rect, alignment: region == .leading ? .leading : .trailing,
                tint: layout.keylineTint, slot: "expanded.\(region.rawValue)", links: &links)
            links.append((rect, rendered.url))
            y += height + gap
        }
        if let bottom = layout.expandedBottom {
            let block = placement.block(bottom.view, x: x + pad, y: y, width: inner, tint: layout.keylineTint, slot: "expanded.bottom", links: &links)
            content += block.placed
            if block.height > 0 { links.append((OverlayRect(x: x + pad, y: y, width: inner, height: block.height), bottom.url)) }
            y += block.height + gap
        }
        let height = min(g.expandedMaximumHeight, max(g.expandedMinimumHeight, y - gap - top + pad))
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: min(g.expandedRadius, height / 2), keyline: layout.keylineTint))
        // Rows that do not fit above the bottom padding are cut: not drawn, not clickable.
        let visible = OverlayRect(x: x, y: top, width: width, height: max(0, height - pad / 3))
        content = Self.inside(content, visible)
        links = Self.clip(links, to: visible)
        frame.content += content
        let name = accessibleText(entry, compact: false)
        frame.hits.append(OverlayHit(rect: rect, target: .tap(id: entry.item.id, url: layout.url), name: "Expanded island: \(name)"))
        // Narrower regions with a URL of their own lie on top of the island's.
        for (rect, url) in links.reversed() where url != nil && url != layout.url {
            frame.hits.append(OverlayHit(rect: rect, target: .tap(id: entry.item.id, url: url), name: "Open \(url ?? "")"))
        }
        addButtonHits(content, id: entry.item.id, into: &frame)
    }

    /// The placed content wholly inside `bound`: what is cut off is not drawn at all.
    static func inside(_ content: [OverlayPlaced], _ bound: OverlayRect) -> [OverlayPlaced] {
        content.filter { $0.rect.y >= bound.y - 0.5 && $0.rect.maxY <= bound.maxY + 0.5 }
    }

    /// Link regions cut to `bound`; the ones left empty are gone.
    static func clip(_ links: [(OverlayRect, String?)], to bound: OverlayRect) -> [(OverlayRect, String?)] {
        links.map { ($0.0.intersection(bound), $0.1) }.filter { !$0.0.isEmpty }
    }

    private func addButtonHits(_ content: [OverlayPlaced], id: String, into frame: inout OverlayFrame) {
        for placed in content {
            if case .button(let action, let label, _) = placed.primitive {
                frame.hits.append(OverlayHit(rect: placed.rect, target: .button(id: id, action: action), name: label.isEmpty ? action : label))
            }
        }
    }

    // MARK: Alert

    private func alertForm(_ alert: PresenterAlert, _ entry: IslandScene.Entry, into frame: inout OverlayFrame) {
        let g = geometry
        let width = min(g.expandedWidth, canvasWidth - 16)
        let x = (canvasWidth - width) / 2
        let pad = g.expandedPadding, icon = g.alertIcon
        let height = g.alertHeight
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: min(g.expandedRadius, height / 2), keyline: entry.layout.keylineTint))
        var links: [(OverlayRect, String?)] = []
        var textX = x + pad
        if let view = (entry.layout.compactLeading ?? entry.layout.minimal)?.view {
            frame.content += placement.inline(
                view, in: .init(x: x + pad, y: top + (height - icon) / 2, width: icon, height: icon), alignment: .center,
                rings: true, tint: entry.layout.keylineTint, slot: "alert.icon", links: &links)
            textX += icon + g.expandedGap + 2 * g.factor
        }
        let textWidth = x + width - pad - textX
        let title = ViewPlacement.sanitizedLine(alert.title), body = ViewPlacement.sanitizedLine(alert.body)
        let textTop = top + (height - g.titleLineHeight - g.subtitleLineHeight) / 2
        frame.content.append(
            .init(
                rect: .init(x: textX, y: textTop, width: textWidth, height: g.titleLineHeight),
                primitive: .text(title, font: .title, ink: .primary, alignment: .leading), slot: "alert.title"))
        frame.content.append(
            .init(
                rect: .init(x: textX, y: textTop + g.titleLineHeight, width: textWidth, height: g.subtitleLineHeight),
                primitive: .text(body, font: .body, ink: .secondary, alignment: .leading), slot: "alert.body"))
        frame.hits.append(OverlayHit(rect: rect, target: .tap(id: entry.item.id, url: entry.layout.url), name: "Alert: \(title). \(body)"))
    }

    // MARK: List

    /// The activities of the list grouped by app: the groups and the cards in each newest
    /// first (by `createdAt`; the lock-screen order breaks ties and orders what has none).
    static func groups(_ entries: [IslandScene.Entry]) -> [[IslandScene.Entry]] {
        let ranked = entries.enumerated().sorted { a, b in
            let (ta, tb) = (a.element.item.createdAt ?? -.infinity, b.element.item.createdAt ?? -.infinity)
            return ta != tb && !(ta.isNaN || tb.isNaN) ? ta > tb : a.offset < b.offset
        }.map(\.element)
        var groups: [[IslandScene.Entry]] = []
        var index: [String: Int] = [:]
        for entry in ranked {
            // The app the card is headed by: a bridge's activities for mpv and for Firefox are
            // two groups (each with its own "via"), not one under whichever came first.
            let key = entry.item.app + "\u{0}" + (entry.item.sourceApp ?? "")
            if let at = index[key] {
                groups[at].append(entry)
            } else {
                index[key] = groups.count
                groups.append([entry])
            }
        }
        return groups
    }

    /// The lock-screen list as a panel under the island: a heading per app (its name and icon
    /// as the scene gives them) over its cards, each with a dismiss button; cards that do not
    /// fit in the canvas are counted, not drawn.
    private func list(_ entries: [IslandScene.Entry], below islandBottom: Double, into frame: inout OverlayFrame) {
        let g = geometry
        let width = min(g.listWidth, canvasWidth - 16)
        let x = (canvasWidth - width) / 2
        let top = islandBottom + g.cardGap + 2 * g.factor
        let pad = g.panelPadding, cardPad = g.cardPadding
        let limit = canvasHeight - 8
        let cardX = x + pad, cardWidth = width - 2 * pad
        var y = top + pad
        var cards: [OverlayShape] = []
        var content: [OverlayPlaced] = []
        var hits: [OverlayHit] = []
        var shown = 0
        if entries.isEmpty {
            content.append(
                .init(
                    rect: .init(x: x + cardPad, y: y + 4, width: width - 2 * cardPad, height: g.rowHeight),
                    primitive: .text("No Live Activities", font: .body, ink: .secondary, alignment: .center), slot: "list.empty"))
            y += g.rowHeight + 8
        }
        let groups = Self.groups(entries)
        var remaining = entries.count
        groupLoop: for (groupIndex, group) in groups.enumerated() {
            let first = group[0]
            var appName = ViewPlacement.sanitizedLine(first.item.displayName)
            // What a bridge's card came through, said after the app it speaks for.
            if let via = first.item.viaText { appName = ViewPlacement.isolated(appName) + " · " + ViewPlacement.sanitizedLine(via) }
            var heading: [OverlayPlaced] = []
            var headingX = cardX + cardPad * 0.5
            let headingY = y + (g.headingHeight - g.headingIcon) / 2 - 2 * g.factor
            // The app's Icon= when it is a theme icon name (a path is never drawn from here).
            if let icon = first.item.appIcon, IconName.isValid(icon) {
                heading.append(
                    .init(
                        rect: .init(x: headingX, y: headingY, width: g.headingIcon, height: g.headingIcon), primitive: .symbol(icon),
                        slot: "list.group\(groupIndex).icon"))
                headingX += g.headingIcon + g.inlineGap
            }
            heading.append(
                .init(
                    rect: .init(x: headingX, y: headingY - 1, width: cardX + cardWidth - cardPad - headingX, height: g.headingIcon + 2),
                    primitive: .text(appName, font: .caption, ink: .secondary, alignment: .leading), slot: "list.group\(groupIndex).heading"))
            var headed = false
            for entry in group {
                let id = entry.item.id
                var links: [(OverlayRect, String?)] = []
                var cardContent: [OverlayPlaced] = []
                let cardTop = y + (headed ? 0 : g.headingHeight)
                var bodyTop = cardTop + cardPad
                // What the user is about to dismiss: a dismiss button in the card's corner, with
                // a target larger than the circle drawn.
                let dismissCentre = (x: cardX + cardWidth - cardPad - g.dismissSize / 2 + 4 * g.factor, y: cardTop + cardPad + g.dismissSize / 2 - 4 * g.factor)
                let dismiss = OverlayRect(
                    x: dismissCentre.x - g.dismissSize / 2, y: dismissCentre.y - g.dismissSize / 2, width: g.dismissSize, height: g.dismissSize)
                cardContent.append(.init(rect: dismiss, primitive: .dismiss, slot: "list.\(id).dismiss"))
                let textWidth = cardWidth - 2 * cardPad - g.dismissSize - g.inlineGap
                if entry.item.isStale || entry.item.activityState == PresenterNames.Item.State.ended {
                    cardContent.append(
                        .init(
                            rect: .init(x: cardX + cardPad, y: bodyTop, width: textWidth, height: g.subtitleLineHeight),
                            primitive: .text(
                                entry.item.isStale ? "Not updated lately" : "Ended", font: .caption,
                                ink: .secondary, alignment: .leading), slot: "list.\(id).status"))
                    bodyTop += g.subtitleLineHeight
                }
                let view = entry.layout.lockScreen?.view ?? .text(entry.item.type)
                let block = placement.block(
                    view, x: cardX + cardPad, y: bodyTop, width: textWidth, tint: entry.layout.keylineTint,
                    slot: "list.\(id).body", links: &links)
                let bodyHeight = min(g.cardMaximumHeight - 2 * cardPad - (bodyTop - cardTop - cardPad), max(g.rowHeight, block.height))
                let cardHeight = max(bodyTop - cardTop + bodyHeight + cardPad, g.dismissSize + 2 * cardPad - 8 * g.factor)
                // A body taller than a card holds is cut: its rows below are neither drawn nor clickable.
                let body = Self.inside(block.placed, OverlayRect(x: cardX, y: bodyTop, width: cardWidth, height: bodyHeight + 6 * g.factor))
                // Room for this card, and for the line counting the rest when more follow.
                let reserve = remaining > 1 ? 32.0 * g.factor : 0
                if cardTop + cardHeight + reserve + pad > limit, shown > 0 {
                    content.append(
                        .init(
                            rect: .init(x: cardX, y: y, width: cardWidth, height: g.rowHeight),
                            primitive: .text("\(remaining) more", font: .caption, ink: .secondary, alignment: .center), slot: "list.more"))
                    y += g.rowHeight + 2
                    break groupLoop
                }
                if !headed { content += heading; headed = true }
                cardContent += body
                if let tint = entry.layout.backgroundTint, OverlayStyle.isLight(tint) {
                    for index in cardContent.indices { cardContent[index].onLight = true }
                }
                // The dismiss button stays as it is: it acts on an ended card as on a live one.
                let standing = OverlayStanding(entry.item)
                for index in cardContent.indices where cardContent[index].primitive != .dismiss { cardContent[index].standing = standing }
                let card = OverlayRect(x: cardX, y: cardTop, width: cardWidth, height: cardHeight)
                var cardShape = OverlayShape(id: "card.\(id)", kind: .card, rect: card, radius: g.cardRadius, keyline: nil, fill: entry.layout.backgroundTint)
                cardShape.stale = standing == .stale
                cards.append(cardShape)
                content += cardContent
                hits.append(OverlayHit(rect: card, target: .expand(id: id), name: "\(appName): \(IslandScene.lockScreenText(entry))"))
                for placed in body {
                    if case .button(let action, let label, _) = placed.primitive {
                        hits.append(OverlayHit(rect: placed.rect, target: .button(id: id, action: action), name: label))
                    }
                }
                let target = OverlayRect(
                    x: dismiss.midX - g.dismissTarget / 2, y: dismiss.midY - g.dismissTarget / 2, width: g.dismissTarget,
                    height: g.dismissTarget
                ).intersection(card)
                hits.append(OverlayHit(rect: target, target: .dismiss(id: id), name: "Dismiss \(appName): \(IslandScene.lockScreenText(entry))"))
                y = cardTop + cardHeight + g.cardGap
                shown += 1
                remaining -= 1
            }
            y += g.cardGap / 2
        }
        let panel = OverlayRect(x: x, y: top, width: width, height: max(40 * g.factor, y - top + pad - (entries.isEmpty ? 0 : g.cardGap * 1.5)))
        frame.shapes.append(OverlayShape(id: "panel", kind: .panel, rect: panel, radius: g.panelRadius))
        frame.shapes += cards
        frame.content += content
        frame.hits.append(OverlayHit(rect: panel, target: .list, name: "Live Activities"))
        frame.hits += hits
    }

    /// Whether what is on screen changes by itself each second: a timer or a time-based
    /// progress in the island, or in the list while it is open. A timer in the closed list
    /// wakes nobody; nor does an ended activity, which stands still at its end.
    package static func isTicking(_ scene: IslandScene, listOpen: Bool) -> Bool {
        var shown: [RenderedRegion?] = []
        func live(_ entry: IslandScene.Entry?) -> IslandScene.Entry? { entry?.item.isFrozen == true ? nil : entry }
        switch form(of: scene) {
        case .hidden: break
        case .compact: shown = [live(scene.attached)?.layout.compactLeading, live(scene.attached)?.layout.compactTrailing]
        case .minimal: shown = [scene.attached, scene.detached].map { live($0).flatMap { $0.layout.minimal ?? $0.layout.compactLeading } }
        case .expanded:
            let layout = live(scene.expanded)?.layout
            shown = [layout?.expandedLeading, layout?.expandedCenter, layout?.expandedTrailing, layout?.expandedBottom]
        case .alert: shown = [live(scene.expanded).flatMap { $0.layout.compactLeading ?? $0.layout.minimal }]
        }
        if listOpen { shown += scene.lockScreen.map { live($0)?.layout.lockScreen } }
        return shown.contains { $0?.view.containsTimeDependentView == true }
    }

    /// The shapes as rows of whole pixels, rounded corners included: the input region (clicks
    /// elsewhere reach the windows below) and, on X11 without compositing, the window's shape.
    /// Cards lie inside the panel and add nothing.
    package static func pixelRows(_ shapes: [OverlayShape]) -> [OverlayRect] {
        var rows: [OverlayRect] = []
        for shape in shapes where shape.kind != .card {
            let rect = shape.rect
            guard rect.width >= 1, rect.height >= 1, rect.x.isFinite, rect.y.isFinite, rect.maxX.isFinite, rect.maxY.isFinite else { continue }
            let r = max(0, min(shape.radius, rect.width / 2, rect.height / 2))
            var y = rect.y.rounded(.down)
            while y < rect.maxY {
                let inCorner = r > 0 && (y < rect.y + r || y + 1 > rect.maxY - r)
                let band = inCorner ? 1.0 : max(1, (rect.maxY - r - y).rounded(.down))
                let middle = y + band / 2
                let dy = middle < rect.y + r ? rect.y + r - middle : middle > rect.maxY - r ? middle - (rect.maxY - r) : 0
                let inset = r > 0 && dy > 0 ? r - max(0, r * r - dy * dy).squareRoot() : 0
                let left = (rect.x + inset).rounded(.down), right = (rect.maxX - inset).rounded(.up)
                if right > left { rows.append(OverlayRect(x: left, y: y, width: right - left, height: band)) }
                y += band
            }
        }
        return rows
    }

    private func accessibleText(_ entry: IslandScene.Entry, compact: Bool) -> String {
        let text = compact ? IslandScene.compactText(entry) : IslandScene.lockScreenText(entry)
        return ViewPlacement.sanitizedLine(text)
    }
}
