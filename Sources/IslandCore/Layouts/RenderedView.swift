/// A view resolved for one activity at one instant: text substituted, timers and progress
/// computed. Presenters draw this; only timers need redrawing as time passes.
public indirect enum RenderedView: Sendable, Hashable {
    case text(String)
    /// A freedesktop icon name or an emoji.
    case symbol(String)
    case timer(RenderedTimer)
    case progress(RenderedProgress)
    case hstack([RenderedView], spacing: Double?)
    case vstack([RenderedView], spacing: Double?)
    case spacer
    /// `url` is nil when the template produced something that is not an allowed URL.
    case link(url: String?, child: RenderedView)
    case button(action: String, label: String, symbol: String?)
    /// A picture from the local file at `path` (absolute, clean: `LocalFile`), which a presenter
    /// decodes only as PNG or JPEG; `fallback` where it cannot, and in every text.
    case image(path: String, fallback: RenderedView?)

    /// The view as one line of text (rows joined by " · "), for terminals, bars and tests.
    public var plainText: String {
        switch self {
        case .text(let text): text
        case .symbol(let name): name
        case .timer(let timer): timer.text
        case .progress(let progress): "\(progress.percent)%"
        case .hstack(let children, _): Self.join(children, separator: " ")
        case .vstack(let children, _): Self.join(children, separator: " · ")
        case .spacer: ""
        case .link(_, let child): child.plainText
        case .button(_, let label, let symbol): [symbol, label].compactMap { $0 }.joined(separator: " ")
        case .image(_, let fallback): fallback?.plainText ?? ""
        }
    }

    private static func join(_ children: [RenderedView], separator: String) -> String {
        children.map(\.plainText).filter { !$0.isEmpty }.joined(separator: separator)
    }
}

/// A timer at the instant it was rendered. `from`/`to` let a presenter keep it ticking.
public struct RenderedTimer: Sendable, Hashable {
    public var from: Double?
    public var to: Double?
    public var countsDown: Bool
    /// Remaining seconds when counting down, elapsed seconds when counting up; never negative.
    /// Nil when a bound's template did not render to a number.
    public var seconds: Double?

    public init(from: Double?, to: Double?, countsDown: Bool, seconds: Double?) {
        self.from = from
        self.to = to
        self.countsDown = countsDown
        // Bounds a producer chose can be any finite number, and their difference overflows to
        // infinity: NaN is no time at all, and the rest is clamped to what `text` can show.
        self.seconds = seconds.flatMap { $0.isNaN ? nil : min(Self.maximumSeconds, max(0, $0)) }
    }

    /// The longest time a timer shows, 99999:59:59 (over eleven years); past it, it stands still.
    public static let maximumSeconds = 99_999.0 * 3600 + 3599

    /// `m:ss`, or `h:mm:ss` from an hour on, as a clock shows it: a countdown shows 0:01 until
    /// it is over, a count-up 0:00 until a full second has passed. Empty when unresolved.
    public var text: String {
        guard let seconds, !seconds.isNaN else { return "" }
        let clamped = min(Self.maximumSeconds, max(0, seconds))
        let whole = Int(countsDown ? clamped.rounded(.up) : clamped.rounded(.down))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }
}

/// A progress bar at the instant it was rendered; every position is a fraction 0…1 of the bar.
public struct RenderedProgress: Sendable, Hashable {
    public struct Segment: Sendable, Hashable {
        public var start: Double
        public var end: Double
        public var color: LayoutColor?
        public init(start: Double, end: Double, color: LayoutColor? = nil) {
            self.start = start
            self.end = end
            self.color = color
        }
    }

    public struct Point: Sendable, Hashable {
        public var position: Double
        public var color: LayoutColor?
        public init(position: Double, color: LayoutColor? = nil) {
            self.position = position
            self.color = color
        }
    }

    /// 0 when the value did not render to a number.
    public var fraction: Double
    public var segments: [Segment]
    public var points: [Point]

    public init(fraction: Double, segments: [Segment] = [], points: [Point] = []) {
        self.fraction = Self.unit(fraction)
        self.segments = segments.map { .init(start: Self.unit($0.start), end: Self.unit($0.end), color: $0.color) }
        self.points = points.map { .init(position: Self.unit($0.position), color: $0.color) }
    }

    /// The fraction as a whole percentage, 0…100, for text.
    public var percent: Int { Int((Self.unit(fraction) * 100).rounded(.down)) }

    /// Clamped to 0…1, NaN as 0: every drawing multiplies these by a width, and a NaN or an
    /// infinity there is `x="nan"` in SVG or a trap in `Int(_:)`.
    public static func unit(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }
}

/// A region resolved for one activity.
public struct RenderedRegion: Sendable, Hashable {
    public var view: RenderedView
    public var priority: Double
    public var belowIfTooWide: Bool
    /// What a tap opens: the region's URL, else the layout's; nil when neither resolves.
    public var url: String?

    public init(view: RenderedView, priority: Double = 0, belowIfTooWide: Bool = false, url: String? = nil) {
        self.view = view
        self.priority = priority
        self.belowIfTooWide = belowIfTooWide
        self.url = url
    }
}

/// A whole layout resolved for one activity.
public struct RenderedLayout: Sendable, Hashable {
    public var lockScreen: RenderedRegion?
    public var compactLeading: RenderedRegion?
    public var compactTrailing: RenderedRegion?
    public var minimal: RenderedRegion?
    public var expandedLeading: RenderedRegion?
    public var expandedTrailing: RenderedRegion?
    public var expandedCenter: RenderedRegion?
    public var expandedBottom: RenderedRegion?
    public var keylineTint: LayoutColor?
    public var backgroundTint: LayoutColor?
    public var chip: String?
    public var lockScreenVisibility: LockScreenVisibility
    /// Whether a locked screen hides the content: the visibility is not `public`.
    public var hideContentOnLockScreen: Bool { lockScreenVisibility != .public }
    /// The layout's tap URL, what `tap` on the activity as a whole returns.
    public var url: String?
}
