public import IslandCore

/// A rectangle in the overlay's logical pixels (before the output's scale).
public struct OverlayRect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = OverlayRect(x: 0, y: 0, width: 0, height: 0)

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }
    public var isEmpty: Bool { !(width > 0 && height > 0) }

    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    /// The part of this rectangle inside `other` (empty, at zero size, when they do not meet).
    public func intersection(_ other: OverlayRect) -> OverlayRect {
        let minX = max(x, other.x), minY = max(y, other.y)
        let width = min(maxX, other.maxX) - minX, height = min(maxY, other.maxY) - minY
        guard width > 0, height > 0 else { return OverlayRect(x: minX, y: minY, width: 0, height: 0) }
        return OverlayRect(x: minX, y: minY, width: width, height: height)
    }

    public func union(_ other: OverlayRect) -> OverlayRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let minX = min(x, other.x), minY = min(y, other.y)
        return OverlayRect(x: minX, y: minY, width: max(maxX, other.maxX) - minX, height: max(maxY, other.maxY) - minY)
    }
}

/// The type styles the overlay draws with; the painter maps them to Pango fonts.
public enum OverlayFont: Sendable, Hashable, CaseIterable {
    case body, title, caption, digits
}

/// Measures text as it will be drawn: Pango in the overlay, a fixed advance in tests.
public protocol TextMetrics {
    func width(of text: String, font: OverlayFont) -> Double
}

/// What colours a piece of text: the style's foreground, its dimmer secondary colour.
public enum OverlayInk: Sendable, Hashable {
    case primary, secondary
}

public enum OverlayAlignment: Sendable, Hashable {
    case leading, center, trailing
}

/// One thing the painter draws inside its rectangle.
public enum OverlayPrimitive: Sendable, Hashable {
    /// One line, ellipsized at the rectangle's width.
    case text(String, font: OverlayFont, ink: OverlayInk, alignment: OverlayAlignment)
    /// A freedesktop icon name or an emoji, fitted to the rectangle's height.
    case symbol(String)
    case bar(RenderedProgress, tint: LayoutColor?)
    case ring(Double, tint: LayoutColor?)
    case button(action: String, label: String, symbol: String?)
    case dismiss
}

/// A primitive at its place. `slot` names the place across frames (e.g. "compact.trailing.0"),
/// so motion can roll a number that changed in place and crossfade the rest.
public struct OverlayPlaced: Sendable, Hashable {
    public var rect: OverlayRect
    public var primitive: OverlayPrimitive
    public var slot: String

    public init(rect: OverlayRect, primitive: OverlayPrimitive, slot: String) {
        self.rect = rect
        self.primitive = primitive
        self.slot = slot
    }
}

/// A filled rounded rectangle of the overlay: the island, the detached bubble, the list panel,
/// a card in it. `id` follows the shape across forms so its size and radius can morph.
public struct OverlayShape: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case island, bubble, panel, card }
    public var id: String
    public var kind: Kind
    public var rect: OverlayRect
    public var radius: Double
    public var keyline: LayoutColor?
    /// A card's own background (the layout's `backgroundTint`); nil: the style's.
    public var fill: LayoutColor?

    public init(id: String, kind: Kind, rect: OverlayRect, radius: Double, keyline: LayoutColor? = nil, fill: LayoutColor? = nil) {
        self.id = id
        self.kind = kind
        self.rect = rect
        self.radius = radius
        self.keyline = keyline
        self.fill = fill
    }
}

/// What a click at a point means.
public enum OverlayTarget: Sendable, Hashable {
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

public struct OverlayHit: Sendable, Hashable {
    public var rect: OverlayRect
    public var target: OverlayTarget
    /// An accessible name for the region.
    public var name: String
}

/// What the island looks like now.
public enum OverlayForm: String, Sendable, Hashable, CaseIterable {
    case hidden, compact, minimal, expanded, alert
}

/// Everything one instant of the overlay draws, and what each place does when clicked.
public struct OverlayFrame: Sendable, Hashable {
    public var form: OverlayForm
    public var listOpen: Bool
    public var shapes: [OverlayShape]
    public var content: [OverlayPlaced]
    /// Checked last first: later hits lie on top of earlier ones.
    public var hits: [OverlayHit]

    /// The union of the shapes: what the input region must cover.
    public var bounds: OverlayRect { shapes.reduce(OverlayRect.zero) { $0.union($1.rect) } }

    public func target(x: Double, y: Double) -> OverlayTarget {
        hits.last { $0.rect.contains(x: x, y: y) }?.target ?? .outside
    }

    public func shape(_ id: String) -> OverlayShape? { shapes.first { $0.id == id } }
}
