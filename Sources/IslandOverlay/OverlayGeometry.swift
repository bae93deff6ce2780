package import IslandCore
package import IslandPresenter

/// A rectangle in the overlay's logical pixels (before the output's scale).
package struct OverlayRect: Sendable, Hashable {
    package var x: Double
    package var y: Double
    package var width: Double
    package var height: Double

    package init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    package static let zero = OverlayRect(x: 0, y: 0, width: 0, height: 0)

    package var maxX: Double { x + width }
    package var maxY: Double { y + height }
    package var midX: Double { x + width / 2 }
    package var midY: Double { y + height / 2 }
    package var isEmpty: Bool { !(width > 0 && height > 0) }

    package func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    /// The part of this rectangle inside `other` (empty, at zero size, when they do not meet).
    package func intersection(_ other: OverlayRect) -> OverlayRect {
        let minX = max(x, other.x), minY = max(y, other.y)
        let width = min(maxX, other.maxX) - minX, height = min(maxY, other.maxY) - minY
        guard width > 0, height > 0 else { return OverlayRect(x: minX, y: minY, width: 0, height: 0) }
        return OverlayRect(x: minX, y: minY, width: width, height: height)
    }

    package func union(_ other: OverlayRect) -> OverlayRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let minX = min(x, other.x), minY = min(y, other.y)
        return OverlayRect(x: minX, y: minY, width: max(maxX, other.maxX) - minX, height: max(maxY, other.maxY) - minY)
    }
}

/// The type styles the overlay draws with; the painter maps them to Pango fonts. A hierarchy:
/// a title, body text, captions (secondary text), and tabular digits for what ticks (large
/// ones for a timer in the expanded island).
package enum OverlayFont: Sendable, Hashable, CaseIterable {
    case body, title, caption, digits, largeDigits
}

/// Measures text as it will be drawn: Pango in the overlay, a fixed advance in tests.
package protocol TextMetrics {
    func width(of text: String, font: OverlayFont) -> Double
}

/// What colours a piece of text: the style's foreground, its dimmer secondary colour.
package enum OverlayInk: Sendable, Hashable {
    case primary, secondary
}

package enum OverlayAlignment: Sendable, Hashable {
    case leading, center, trailing
}

/// One thing the painter draws inside its rectangle.
package enum OverlayPrimitive: Sendable, Hashable {
    /// One line, ellipsized at the rectangle's width.
    case text(String, font: OverlayFont, ink: OverlayInk, alignment: OverlayAlignment)
    /// A freedesktop icon name or an emoji, fitted to the rectangle's height.
    case symbol(String)
    case bar(RenderedProgress, tint: LayoutColor?)
    case ring(Double, tint: LayoutColor?)
    case button(action: String, label: String, symbol: String?)
    case dismiss
    /// A picture from the local file at `path` (an `image` view the artwork source could
    /// decode), a rounded square fitted to the rectangle's height.
    case image(path: String)
}

/// A primitive at its place. `slot` names the place across frames (e.g. "compact.trailing.0"),
/// so motion can roll a number that changed in place and crossfade the rest.
package struct OverlayPlaced: Sendable, Hashable {
    package var rect: OverlayRect
    package var primitive: OverlayPrimitive
    package var slot: String
    /// Drawn on a light background (a card whose `backgroundTint` is light): in dark ink, so
    /// text keeps its contrast.
    package var onLight: Bool
    /// Whether what it says is current: the content of a stale activity is drawn dimmed, that
    /// of an ended one dimmed with its progress in a neutral colour, so neither looks live.
    package var standing: OverlayStanding

    package init(rect: OverlayRect, primitive: OverlayPrimitive, slot: String, onLight: Bool = false, standing: OverlayStanding = .live) {
        self.rect = rect
        self.primitive = primitive
        self.slot = slot
        self.onLight = onLight
        self.standing = standing
    }
}

/// How current an activity's content is, as the island shows it.
package enum OverlayStanding: Sendable, Hashable {
    case live
    /// Not updated by its staleDate: dimmed, in a shape with a dashed keyline.
    case stale
    /// Ended (shown in the list until dismissed): its final state, dimmed, never a live
    /// accent colour on its bar or ring.
    case ended

    package init(_ item: PresenterItem) {
        self = item.hasEnded ? .ended : item.isStale ? .stale : .live
    }
}

/// A filled rounded rectangle of the overlay: the island, the detached bubble, the list panel,
/// a card in it. `id` follows the shape across forms so its size and radius can morph.
package struct OverlayShape: Sendable, Hashable {
    package enum Kind: Sendable, Hashable { case island, bubble, panel, card }
    package var id: String
    package var kind: Kind
    package var rect: OverlayRect
    package var radius: Double
    package var keyline: LayoutColor?
    /// A card's own background (the layout's `backgroundTint`); nil: the style's.
    package var fill: LayoutColor?
    /// It shows a stale activity: its outline is dashed, the mark of content not updated lately.
    package var stale = false

    package init(id: String, kind: Kind, rect: OverlayRect, radius: Double, keyline: LayoutColor? = nil, fill: LayoutColor? = nil) {
        self.id = id
        self.kind = kind
        self.rect = rect
        self.radius = radius
        self.keyline = keyline
        self.fill = fill
    }
}

/// What a click at a point means.
package enum OverlayTarget: Sendable, Hashable {
    /// Compact or minimal island (or a card in the list): Presenter Interact `expand`.
    case expand(id: String)
    /// The expanded island or an alert: Interact `tap`; `url` is the region's own, if any.
    case tap(id: String, url: String?)
    case button(id: String, action: String)
    case dismiss(id: String)
    /// Somewhere on the list panel that is no card.
    case list
    /// Nothing drawn there: the click went to the window below (when the input shape lets it).
    case outside
}

package struct OverlayHit: Sendable, Hashable {
    package var rect: OverlayRect
    package var target: OverlayTarget
    /// An accessible name for the region.
    package var name: String
}

/// What the island looks like now.
package enum OverlayForm: String, Sendable, Hashable, CaseIterable {
    case hidden, compact, minimal, expanded, alert
}

/// Everything one instant of the overlay draws, and what each place does when clicked.
package struct OverlayFrame: Sendable, Hashable {
    package var form: OverlayForm
    package var listOpen: Bool
    package var shapes: [OverlayShape]
    package var content: [OverlayPlaced]
    /// Checked last first: later hits lie on top of earlier ones.
    package var hits: [OverlayHit]

    /// The union of the shapes: what the input region must cover.
    package var bounds: OverlayRect { shapes.reduce(OverlayRect.zero) { $0.union($1.rect) } }

    package func target(x: Double, y: Double) -> OverlayTarget {
        hits.last { $0.rect.contains(x: x, y: y) }?.target ?? .outside
    }

    package func shape(_ id: String) -> OverlayShape? { shapes.first { $0.id == id } }
}

/// The sizes of every form of the island, in logical pixels (the output's scale factor stays
/// cairo's): one value that the layout, and through it the window, the SVG output and the
/// gallery, read. `Size=` in overlay.conf scales all of it, type included.
///
/// A desktop's island, not a phone's: there is no camera to hide, so the compact capsule hugs
/// its content, and the minimal bubble is a circle no wider than the pill is tall.
package struct IslandGeometry: Sendable, Hashable {
    /// The named sizes of `Size=`; a number between `factors` is accepted as well.
    package enum Size: String, Sendable, CaseIterable {
        case small, medium, large
        package var factor: Double {
            switch self {
            case .small: 0.875
            case .medium: 1
            case .large: 1.25
            }
        }
    }

    /// The factors `Size=` accepts: from a compact capsule still legible at 0.75 to one twice
    /// as large (a television across the room).
    package static let factors = 0.75...2.0

    /// How much larger than medium every size is.
    package let factor: Double

    /// `factor` outside `factors` (or not finite) is brought to the nearest end of the range.
    package init(factor: Double = 1) {
        self.factor = factor.isFinite ? min(Self.factors.upperBound, max(Self.factors.lowerBound, factor)) : 1
    }

    package init(size: Size) { self.init(factor: size.factor) }

    /// Size= and --size: small, medium or large, or a factor in `factors`; nil for anything else.
    package init?(named text: String) {
        if let size = Size(rawValue: text.lowercased()) {
            self.init(size: size)
        } else if let factor = Double(text), Self.factors.contains(factor) {
            self.init(factor: factor)
        } else {
            return nil
        }
    }

    package static let medium = IslandGeometry()

    private func scaled(_ value: Double) -> Double { value * factor }

    // MARK: Compact and minimal

    /// The resting capsule's height, and the minimal bubble's diameter.
    package var pillHeight: Double { scaled(34) }
    /// The height of the content row inside the capsule (symbols, rings, text).
    package var compactContentHeight: Double { scaled(20) }
    /// From the capsule's end to a symbol or ring there: the vertical inset, so it sits in a
    /// circle concentric with the end's curve.
    package var compactSymbolInset: Double { (pillHeight - compactContentHeight) / 2 }
    /// From the capsule's end to text there: text needs more air than a round symbol.
    package var compactTextInset: Double { scaled(12) }
    /// The one gap between leading and trailing content: no camera to leave room for.
    package var compactGap: Double { scaled(10) }
    /// A capsule with almost nothing in it still reads as the island, not as a dot.
    package var compactMinimumWidth: Double { scaled(84) }
    package var compactMaximumWidth: Double { scaled(280) }
    /// The minimal (detached) bubble: a true circle.
    package var minimalDiameter: Double { pillHeight }
    /// The room the bubble keeps around its content.
    package var minimalInset: Double { scaled(6) }
    package var bubbleGap: Double { scaled(6) }

    // MARK: Expanded and alert

    package var expandedWidth: Double { scaled(360) }
    package var expandedPadding: Double { scaled(18) }
    package var expandedRadius: Double { scaled(30) }
    /// Between regions of the top row, and between rows.
    package var expandedGap: Double { scaled(10) }
    /// A leading or trailing symbol in the top row.
    package var expandedSymbol: Double { scaled(30) }
    /// A picture alone in a top-row region (album art beside a title and its subtitle).
    package var expandedArtwork: Double { scaled(44) }
    /// Lines in the top row: a title, then subtitles.
    package var titleLineHeight: Double { scaled(20) }
    package var subtitleLineHeight: Double { scaled(18) }
    /// The top row's height for a value in large digits.
    package var largeDigitsHeight: Double { scaled(34) }
    /// A leading or trailing value at most this share of the row is never cut: the centre
    /// gives way first.
    package static let shortValueShare = 0.4
    package var expandedMinimumHeight: Double { scaled(72) }
    /// The tallest the expanded island grows (~160 at scale 1): a long `vstack` is cut there,
    /// and what is cut is neither drawn nor clickable, so no layout makes the island as tall
    /// as the screen.
    package var expandedMaximumHeight: Double { scaled(160) }
    package var alertHeight: Double { scaled(72) }
    package var alertIcon: Double { scaled(34) }

    // MARK: Rows of a block (the expanded bottom, cards)

    package var rowHeight: Double { scaled(22) }
    package var barRowHeight: Double { scaled(14) }
    package var barThickness: Double { scaled(6) }
    package var buttonRowHeight: Double { scaled(36) }
    /// An icon button is a circle this wide, whatever its label: a row of them never shifts.
    package var iconButton: Double { scaled(34) }
    package var buttonPadding: Double { scaled(14) }
    package var buttonSymbol: Double { scaled(18) }
    package var rowSymbol: Double { scaled(18) }
    package var rowGap: Double { scaled(4) }
    package var inlineGap: Double { scaled(6) }

    // MARK: The list

    package var listWidth: Double { scaled(360) }
    package var panelRadius: Double { scaled(26) }
    package var panelPadding: Double { scaled(10) }
    package var cardRadius: Double { scaled(18) }
    package var cardPadding: Double { scaled(14) }
    package var cardGap: Double { scaled(8) }
    /// The tallest a card grows (Apple's lock-screen presentation is at most 160 pt, too).
    package var cardMaximumHeight: Double { scaled(160) }
    /// A group's heading: the app's icon and name.
    package var headingHeight: Double { scaled(26) }
    package var headingIcon: Double { scaled(16) }
    /// The dismiss button as drawn, and the larger square a click on it may land in.
    package var dismissSize: Double { scaled(26) }
    package var dismissTarget: Double { scaled(36) }

    // MARK: The window

    /// The gap between the window's top and the island.
    package var top: Double { 1 }
    /// The canvas the window opens: the widest form with a margin either side (a compact
    /// capsule at its widest with a bubble split off to each side fits too).
    package var canvasWidth: Double {
        (max(expandedWidth, listWidth, compactMaximumWidth + 2 * (bubbleGap + minimalDiameter)) + scaled(40)).rounded(.up)
    }

    /// The margin either side of the widest expanded island in its canvas (the layout's).
    package static let canvasMargin = 8.0

    /// The share of the output's width the expanded island may grow to when its centre would
    /// otherwise be cut ("artist — album" beside a large clock), past `expandedWidth`.
    package static let expandedOutputShare = 0.25
    /// However wide the output, the expanded island grows no wider than this: a card read at a
    /// glance, not a banner across the screen.
    package var expandedWidestWidth: Double { scaled(520) }

    /// The widest the expanded island may grow on an output `outputWidth` logical pixels
    /// wide: a quarter of it, never less than the standard canvas allows (so narrow outputs
    /// keep today's island) and never more than `expandedWidestWidth`; nil (no output known):
    /// as on a narrow one.
    package func expandedMaximumWidth(outputWidth: Double?) -> Double {
        let standard = canvasWidth - 2 * Self.canvasMargin
        guard let outputWidth, outputWidth.isFinite, outputWidth > 0 else { return standard }
        return max(standard, min(expandedWidestWidth, (outputWidth * Self.expandedOutputShare).rounded(.down)))
    }

    /// The canvas for an output `outputWidth` wide: the standard one, or wider by what the
    /// expanded island may grow there, with the same margin either side.
    package func canvasWidth(outputWidth: Double?) -> Double {
        max(canvasWidth, (expandedMaximumWidth(outputWidth: outputWidth) + 2 * Self.canvasMargin).rounded(.up))
    }
    /// The tallest canvas the list may use, below whatever the output leaves.
    package var canvasMaximumHeight: Double { scaled(720).rounded(.up) }

    /// Type sizes in pixels, scaled like the rest.
    package func fontSize(_ font: OverlayFont) -> Double {
        switch font {
        case .title: scaled(15)
        case .body, .digits: scaled(14)
        case .caption: scaled(12)
        case .largeDigits: scaled(26)
        }
    }
}
