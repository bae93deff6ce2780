import IslandCore
public import IslandPresenter
import FreeDesktop

/// The island's geometry as a pure function of the scene: every form's rectangles and corner
/// radii, the content placed in them, and what a click on each place means.
public struct OverlayLayout {
    /// The width of the surface the island is centred in.
    public var canvasWidth: Double
    /// The room below the island for the list panel.
    public var canvasHeight: Double
    /// The gap between the surface's top and the island.
    public var top: Double
    public let metrics: any TextMetrics

    /// Apple's resting island, in points: the compact and minimal height.
    public static let pillHeight = 37.0
    public static let pillMinimumWidth = 126.0
    public static let compactMaximumWidth = 300.0
    public static let expandedWidth = 371.0
    public static let bubbleGap = 6.0
    public static let expandedRadius = 38.0
    /// The tallest the expanded island grows (Apple's is at most 160 pt): a long `vstack` is
    /// cut there, and what is cut is neither drawn nor clickable (issue #25).
    public static let expandedMaximumHeight = 160.0
    /// The tallest a card in the list grows, header included (Apple's lock-screen presentation
    /// is at most 160 pt tall, too).
    public static let cardMaximumHeight = 160.0

    public init(canvasWidth: Double = 440, canvasHeight: Double = 640, top: Double = 8, metrics: any TextMetrics) {
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.top = top
        self.metrics = metrics
    }

    var placement: ViewPlacement { ViewPlacement(metrics: metrics) }

    /// The form a scene shows: an alert while its activity is expanded for it.
    public static func form(of scene: IslandScene) -> OverlayForm {
        switch scene.mode {
        case .none: return .hidden
        case .compact: return .compact
        case .minimal: return .minimal
        case .expanded:
            if let alert = scene.alert, alert.id == scene.expanded?.item.id, !(alert.title.isEmpty && alert.body.isEmpty) { return .alert }
            return .expanded
        }
    }

    public func frame(_ scene: IslandScene, listOpen: Bool = false) -> OverlayFrame {
        var frame = OverlayFrame(form: Self.form(of: scene), listOpen: listOpen, shapes: [], content: [], hits: [])
        switch frame.form {
        case .hidden: break
        case .compact: if let entry = scene.attached { compact(entry, into: &frame) }
        case .minimal: if let attached = scene.attached, let detached = scene.detached { minimal(attached, detached, into: &frame) }
        case .expanded: if let entry = scene.expanded { expanded(entry, into: &frame) }
        case .alert: if let entry = scene.expanded, let alert = scene.alert { alertForm(alert, entry, into: &frame) }
        }
        if listOpen { list(scene.lockScreen, below: frame.shape("island")?.rect.maxY ?? top - 10, into: &frame) }
        return frame
    }

    // MARK: Compact

    private func compact(_ entry: IslandScene.Entry, into frame: inout OverlayFrame) {
        let height = Self.pillHeight, pad = 14.0, gap = 12.0
        var leadingView = entry.layout.compactLeading?.view
        let trailingView = entry.layout.compactTrailing?.view
        let leadingNatural = leadingView.map { placement.inlineWidth($0, height: 22, rings: true) } ?? 0
        let trailingNatural = trailingView.map { placement.inlineWidth($0, height: 22, rings: true) } ?? 0
        if leadingNatural == 0, trailingNatural == 0 { leadingView = .text(entry.layout.chip ?? entry.item.type) }
        let leading = leadingView.map { placement.inlineWidth($0, height: 22, rings: true) } ?? 0
        let maximum = min(Self.compactMaximumWidth, canvasWidth - 16)
        let width = min(maximum, max(Self.pillMinimumWidth, pad + leading + gap + trailingNatural + pad))
        let x = (canvasWidth - width) / 2
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: height / 2, keyline: entry.layout.keylineTint))
        let room = width - 2 * pad - (trailingNatural > 0 ? gap : 0)
        let leadingRoom = leading + trailingNatural <= room ? leading : min(leading, max(room / 2, room - trailingNatural))
        var links: [(OverlayRect, String?)] = []
        if let leadingView {
            frame.content += placement.inline(leadingView, in: .init(x: x + pad, y: top + 7.5, width: leadingRoom, height: 22), rings: true,
                                              tint: entry.layout.keylineTint, slot: "compact.leading", links: &links)
        }
        if let trailingView {
            let trailingRoom = room - leadingRoom
            frame.content += placement.inline(trailingView, in: .init(x: x + width - pad - trailingRoom, y: top + 7.5, width: trailingRoom, height: 22),
                                              alignment: .trailing, rings: true, tint: entry.layout.keylineTint, slot: "compact.trailing", links: &links)
        }
        frame.hits.append(OverlayHit(rect: rect, target: .expand(id: entry.item.id), name: "Island: \(accessibleText(entry, compact: true))"))
    }

    // MARK: Minimal

    private func minimal(_ attached: IslandScene.Entry, _ detached: IslandScene.Entry, into frame: inout OverlayFrame) {
        let height = Self.pillHeight
        let width = Self.pillMinimumWidth
        let x = (canvasWidth - width) / 2
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: height / 2, keyline: attached.layout.keylineTint))
        var links: [(OverlayRect, String?)] = []
        if let view = (attached.layout.minimal ?? attached.layout.compactLeading)?.view {
            frame.content += placement.inline(view, in: .init(x: x + 14, y: top + 7.5, width: width - 28, height: 22), rings: true,
                                              tint: attached.layout.keylineTint, slot: "minimal.attached", links: &links)
        }
        frame.hits.append(OverlayHit(rect: rect, target: .expand(id: attached.item.id), name: "Island: \(accessibleText(attached, compact: false))"))

        // The detached bubble is a circle; text that does not fit widens it a little, no more.
        let view = (detached.layout.minimal ?? detached.layout.compactLeading)?.view
        let natural = view.map { placement.inlineWidth($0, font: .caption, height: 22, rings: true) } ?? 0
        let bubbleWidth = min(64, max(height, natural + 14))
        let bubble = OverlayRect(x: rect.maxX + Self.bubbleGap, y: top, width: bubbleWidth, height: height)
        frame.shapes.append(OverlayShape(id: "bubble", kind: .bubble, rect: bubble, radius: height / 2, keyline: detached.layout.keylineTint))
        if let view {
            frame.content += placement.inline(view, in: .init(x: bubble.x + 7, y: top + 7.5, width: bubbleWidth - 14, height: 22), font: .caption,
                                              alignment: .center, rings: true, tint: detached.layout.keylineTint, slot: "minimal.detached", links: &links)
        }
        frame.hits.append(OverlayHit(rect: bubble, target: .expand(id: detached.item.id), name: "Second activity: \(accessibleText(detached, compact: false))"))
    }

    // MARK: Expanded

    /// Which top-row regions get room, by priority: a region keeps its natural width while
    /// room is left; a leading or trailing region marked `belowIfTooWide` that does not fit
    /// moves to a row of its own below, any other one is ellipsized.
    struct TopRow: Equatable {
        enum Region: String, Equatable { case leading, center, trailing }
        var widths: [Region: Double] = [:]
        var below: [Region] = []
    }

    func allocateTopRow(_ regions: [(TopRow.Region, RenderedRegion)], room: Double, gap: Double) -> TopRow {
        var row = TopRow()
        let order: [TopRow.Region] = [.center, .leading, .trailing]
        let sorted = regions.sorted { a, b in
            a.1.priority != b.1.priority ? a.1.priority > b.1.priority : order.firstIndex(of: a.0)! < order.firstIndex(of: b.0)!
        }
        var remaining = room
        var placedCount = 0
        for (index, (region, rendered)) in sorted.enumerated() {
            let natural = placement.inlineWidth(rendered.view, font: region == .center ? .title : .body, height: 24)
            guard natural > 0 else { continue }
            let reserve = Double(sorted.count - index - 1) * 36
            let available = max(0, remaining - (placedCount > 0 ? gap : 0) - reserve)
            if natural > available, rendered.belowIfTooWide, region != .center {
                row.below.append(region)
                continue
            }
            let width = min(natural, available)
            guard width > 0 else { continue }
            row.widths[region] = width
            remaining -= width + (placedCount > 0 ? gap : 0)
            placedCount += 1
        }
        row.below.sort { order.firstIndex(of: $0)! > order.firstIndex(of: $1)! }
        return row
    }

    private func expanded(_ entry: IslandScene.Entry, into frame: inout OverlayFrame) {
        let width = min(Self.expandedWidth, canvasWidth - 16)
        let x = (canvasWidth - width) / 2
        let pad = 22.0, gap = 10.0, rowHeight = 28.0
        let layout = entry.layout
        var regions: [(TopRow.Region, RenderedRegion)] = []
        if let region = layout.expandedLeading { regions.append((.leading, region)) }
        if let region = layout.expandedCenter { regions.append((.center, region)) }
        if let region = layout.expandedTrailing { regions.append((.trailing, region)) }
        let inner = width - 2 * pad
        let row = allocateTopRow(regions, room: inner, gap: gap)
        var y = top + 16
        var links: [(OverlayRect, String?)] = []
        var content: [OverlayPlaced] = []
        if !row.widths.isEmpty {
            let leading = row.widths[.leading] ?? 0, trailing = row.widths[.trailing] ?? 0
            if let region = layout.expandedLeading, leading > 0 {
                let rect = OverlayRect(x: x + pad, y: y, width: leading, height: rowHeight)
                content += placement.inline(region.view, in: rect, symbolSize: 26, tint: layout.keylineTint, slot: "expanded.leading", links: &links)
                links.append((rect, region.url))
            }
            if let region = layout.expandedTrailing, trailing > 0 {
                let rect = OverlayRect(x: x + width - pad - trailing, y: y, width: trailing, height: rowHeight)
                content += placement.inline(region.view, in: rect, alignment: .trailing, symbolSize: 26, tint: layout.keylineTint, slot: "expanded.trailing", links: &links)
                links.append((rect, region.url))
            }
            if let region = layout.expandedCenter, let centerWidth = row.widths[.center] {
                // Centred on the island when the sides leave room, else between them.
                let left = x + pad + (leading > 0 ? leading + gap : 0), right = x + width - pad - (trailing > 0 ? trailing + gap : 0)
                let centred = x + (width - centerWidth) / 2
                let cx = min(max(centred, left), max(left, right - centerWidth))
                let rect = OverlayRect(x: cx, y: y, width: min(centerWidth, max(0, right - left)), height: rowHeight)
                content += placement.inline(region.view, in: rect, font: .title, alignment: .center, symbolSize: 24, tint: layout.keylineTint,
                                            slot: "expanded.center", links: &links)
                links.append((rect, region.url))
            }
            y += rowHeight + 6
        }
        for region in row.below {
            guard let rendered = region == .leading ? layout.expandedLeading : layout.expandedTrailing else { continue }
            let rect = OverlayRect(x: x + pad, y: y, width: inner, height: 24)
            content += placement.inline(rendered.view, in: rect, alignment: region == .leading ? .leading : .trailing, symbolSize: 22,
                                        tint: layout.keylineTint, slot: "expanded.\(region.rawValue)", links: &links)
            links.append((rect, rendered.url))
            y += 24 + 6
        }
        if let bottom = layout.expandedBottom {
            let block = placement.block(bottom.view, x: x + pad, y: y, width: inner, tint: layout.keylineTint, slot: "expanded.bottom", links: &links)
            content += block.placed
            if block.height > 0 { links.append((OverlayRect(x: x + pad, y: y, width: inner, height: block.height), bottom.url)) }
            y += block.height + 4
        }
        let height = min(Self.expandedMaximumHeight, max(84, y - top + 12))
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: min(Self.expandedRadius, height / 2), keyline: layout.keylineTint))
        // Rows that do not fit above the bottom padding are cut: not drawn, not clickable.
        let visible = OverlayRect(x: x, y: top, width: width, height: max(0, height - 6))
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
        let width = min(Self.expandedWidth, canvasWidth - 16)
        let x = (canvasWidth - width) / 2
        let pad = 20.0, icon = 36.0
        let height = 76.0
        let rect = OverlayRect(x: x, y: top, width: width, height: height)
        frame.shapes.append(OverlayShape(id: "island", kind: .island, rect: rect, radius: min(Self.expandedRadius, height / 2), keyline: entry.layout.keylineTint))
        var links: [(OverlayRect, String?)] = []
        var textX = x + pad
        if let view = (entry.layout.compactLeading ?? entry.layout.minimal)?.view {
            frame.content += placement.inline(view, in: .init(x: x + pad, y: top + (height - icon) / 2, width: icon, height: icon), alignment: .center,
                                              rings: true, tint: entry.layout.keylineTint, slot: "alert.icon", links: &links)
            textX += icon + 12
        }
        let textWidth = x + width - pad - textX
        let title = ViewPlacement.sanitizedLine(alert.title), body = ViewPlacement.sanitizedLine(alert.body)
        frame.content.append(.init(rect: .init(x: textX, y: top + 15, width: textWidth, height: 22), primitive: .text(title, font: .title, ink: .primary, alignment: .leading), slot: "alert.title"))
        frame.content.append(.init(rect: .init(x: textX, y: top + 39, width: textWidth, height: 20), primitive: .text(body, font: .body, ink: .secondary, alignment: .leading), slot: "alert.body"))
        frame.hits.append(OverlayHit(rect: rect, target: .tap(id: entry.item.id, url: entry.layout.url), name: "Alert: \(title). \(body)"))
    }

    // MARK: List

    /// The lock-screen list as a panel under the island: one card per activity, each with a
    /// dismiss button; cards that do not fit in the canvas are counted, not drawn.
    private func list(_ entries: [IslandScene.Entry], below islandBottom: Double, into frame: inout OverlayFrame) {
        let width = min(Self.expandedWidth, canvasWidth - 16)
        let x = (canvasWidth - width) / 2
        let top = islandBottom + 10
        let pad = 10.0, cardPad = 14.0
        let limit = canvasHeight - 8
        var y = top + pad
        var cards: [OverlayShape] = []
        var content: [OverlayPlaced] = []
        var hits: [OverlayHit] = []
        var shown = 0
        if entries.isEmpty {
            content.append(.init(rect: .init(x: x + cardPad, y: y + 4, width: width - 2 * cardPad, height: 22),
                                 primitive: .text("No Live Activities", font: .body, ink: .secondary, alignment: .center), slot: "list.empty"))
            y += 30
        }
        for (index, entry) in entries.enumerated() {
            let cardX = x + pad, cardWidth = width - 2 * pad
            var links: [(OverlayRect, String?)] = []
            var cardContent: [OverlayPlaced] = []
            let id = entry.item.id
            var header = ViewPlacement.sanitizedLine(entry.item.displayName)
            if entry.item.activityState == "stale" || entry.item.activityState == "ended" {
                header = ViewPlacement.isolated(header) + (entry.item.activityState == "stale" ? " · stale" : " · ended")
            }
            var headerX = cardX + cardPad
            // The app's Icon= when it is a theme icon name (a path is never drawn from here).
            if let icon = entry.item.appIcon, IconName.isValid(icon) {
                cardContent.append(.init(rect: .init(x: headerX, y: y + 11, width: 16, height: 16), primitive: .symbol(icon), slot: "list.\(id).icon"))
                headerX += 22
            }
            cardContent.append(.init(rect: .init(x: headerX, y: y + 10, width: cardX + cardWidth - cardPad - 28 - headerX, height: 18),
                                     primitive: .text(header, font: .caption, ink: .secondary, alignment: .leading), slot: "list.\(id).header"))
            let dismiss = OverlayRect(x: cardX + cardWidth - 10 - 24, y: y + 7, width: 24, height: 24)
            cardContent.append(.init(rect: dismiss, primitive: .dismiss, slot: "list.\(id).dismiss"))
            let view = entry.layout.lockScreen?.view ?? .text(entry.item.type)
            let block = placement.block(view, x: cardX + cardPad, y: y + 32, width: cardWidth - 2 * cardPad, tint: entry.layout.keylineTint,
                                        slot: "list.\(id).body", links: &links)
            let bodyHeight = min(Self.cardMaximumHeight - 32 - 12, max(22, block.height))
            let cardHeight = 32 + bodyHeight + 12
            // A body taller than a card holds is cut: its rows below are neither drawn nor clickable.
            let body = Self.inside(block.placed, OverlayRect(x: cardX, y: y + 32, width: cardWidth, height: bodyHeight + 6))
            // Room for this card, and for the line counting the rest when more follow.
            let reserve = index < entries.count - 1 ? 32.0 : 0
            if y + cardHeight + reserve + pad > limit, shown > 0 {
                let more = entries.count - index
                content.append(.init(rect: .init(x: cardX, y: y, width: cardWidth, height: 20),
                                     primitive: .text("\(more) more", font: .caption, ink: .secondary, alignment: .center), slot: "list.more"))
                y += 24
                break
            }
            cardContent += body
            let card = OverlayRect(x: cardX, y: y, width: cardWidth, height: cardHeight)
            cards.append(OverlayShape(id: "card.\(id)", kind: .card, rect: card, radius: 22, keyline: nil, fill: entry.layout.backgroundTint))
            content += cardContent
            hits.append(OverlayHit(rect: card, target: .expand(id: id), name: "\(header): \(IslandScene.lockScreenText(entry))"))
            for placed in body {
                if case .button(let action, let label, _) = placed.primitive {
                    hits.append(OverlayHit(rect: placed.rect, target: .button(id: id, action: action), name: label))
                }
            }
            hits.append(OverlayHit(rect: dismiss, target: .dismiss(id: id), name: "Dismiss \(header)"))
            y += cardHeight + 8
            shown += 1
        }
        let panel = OverlayRect(x: x, y: top, width: width, height: max(40, y - top + pad - (entries.isEmpty ? 0 : 8)))
        frame.shapes.append(OverlayShape(id: "panel", kind: .panel, rect: panel, radius: 28))
        frame.shapes += cards
        frame.content += content
        frame.hits.append(OverlayHit(rect: panel, target: .list, name: "Live Activities"))
        frame.hits += hits
    }

    /// Whether what is on screen changes by itself each second: a timer or a time-based
    /// progress in the island, or in the list while it is open. A timer in the closed list
    /// wakes nobody.
    public static func isTicking(_ scene: IslandScene, listOpen: Bool) -> Bool {
        var shown: [RenderedRegion?] = []
        switch form(of: scene) {
        case .hidden: break
        case .compact: shown = [scene.attached?.layout.compactLeading, scene.attached?.layout.compactTrailing]
        case .minimal: shown = [scene.attached, scene.detached].map { $0.flatMap { $0.layout.minimal ?? $0.layout.compactLeading } }
        case .expanded:
            let layout = scene.expanded?.layout
            shown = [layout?.expandedLeading, layout?.expandedCenter, layout?.expandedTrailing, layout?.expandedBottom]
        case .alert: shown = [scene.expanded.flatMap { $0.layout.compactLeading ?? $0.layout.minimal }]
        }
        if listOpen { shown += scene.lockScreen.map { $0.layout.lockScreen } }
        return shown.contains { $0?.view.containsTimeDependentView == true }
    }

    /// The shapes as rows of whole pixels, rounded corners included: the input region (clicks
    /// elsewhere reach the windows below) and, on X11 without compositing, the window's shape.
    /// Cards lie inside the panel and add nothing.
    public static func pixelRows(_ shapes: [OverlayShape]) -> [OverlayRect] {
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
