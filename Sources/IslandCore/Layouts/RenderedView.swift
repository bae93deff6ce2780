/// A view resolved for one activity at one instant: text substituted, timers and progress
/// computed. Presenters draw this; only timers need redrawing as time passes.
package indirect enum RenderedView: Sendable, Hashable {
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
    package var plainText: String {
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
package struct RenderedTimer: Sendable, Hashable {
    package var from: Double?
    package var to: Double?
    package var countsDown: Bool
    /// Remaining seconds when counting down, elapsed seconds when counting up; never negative.
    /// Nil when a bound's template did not render to a number.
    package var seconds: Double?

    package init(from: Double?, to: Double?, countsDown: Bool, seconds: Double?) {
        self.from = from
        self.to = to
        self.countsDown = countsDown
        // Bounds a producer chose can be any finite number, and their difference overflows to
        // infinity: NaN is no time at all, and the rest is clamped to what `text` can show.
        self.seconds = seconds.flatMap { $0.isNaN ? nil : min(Self.maximumSeconds, max(0, $0)) }
    }

    /// The longest time a timer shows, 99999:59:59 (over eleven years); past it, it stands still.
    package static let maximumSeconds = 99_999.0 * 3600 + 3599

    /// `m:ss`, or `h:mm:ss` from an hour on, as a clock shows it: a countdown shows 0:01 until
    /// it is over, a count-up 0:00 until a full second has passed. Empty when unresolved.
    package var text: String {
        guard let seconds, !seconds.isNaN else { return "" }
        let clamped = min(Self.maximumSeconds, max(0, seconds))
        let whole = Int(countsDown ? clamped.rounded(.up) : clamped.rounded(.down))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }
}

/// A progress bar at the instant it was rendered; every position is a fraction 0…1 of the bar.
package struct RenderedProgress: Sendable, Hashable {
    package struct Segment: Sendable, Hashable {
        package var start: Double
        package var end: Double
        package var color: LayoutColor?
        package init(start: Double, end: Double, color: LayoutColor? = nil) {
            self.start = start
            self.end = end
            self.color = color
        }
    }

    package struct Point: Sendable, Hashable {
        package var position: Double
        package var color: LayoutColor?
        package init(position: Double, color: LayoutColor? = nil) {
            self.position = position
            self.color = color
        }
    }

    /// 0 when the value did not render to a number.
    package var fraction: Double
    package var segments: [Segment]
    package var points: [Point]

    package init(fraction: Double, segments: [Segment] = [], points: [Point] = []) {
        self.fraction = Self.unit(fraction)
        self.segments = segments.map { .init(start: Self.unit($0.start), end: Self.unit($0.end), color: $0.color) }
        self.points = points.map { .init(position: Self.unit($0.position), color: $0.color) }
    }

    /// The fraction as a whole percentage, 0…100, for text.
    package var percent: Int { Int((Self.unit(fraction) * 100).rounded(.down)) }

    /// Clamped to 0…1, NaN as 0: every drawing multiplies these by a width, and a NaN or an
    /// infinity there is `x="nan"` in SVG or a trap in `Int(_:)`.
    package static func unit(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }
}

/// A region resolved for one activity.
package struct RenderedRegion: Sendable, Hashable {
    package var view: RenderedView
    package var priority: Double
    package var belowIfTooWide: Bool
    /// What a tap opens: the region's URL, else the layout's; nil when neither resolves.
    package var url: String?

    package init(view: RenderedView, priority: Double = 0, belowIfTooWide: Bool = false, url: String? = nil) {
        self.view = view
        self.priority = priority
        self.belowIfTooWide = belowIfTooWide
        self.url = url
    }
}

/// A whole layout resolved for one activity.
package struct RenderedLayout: Sendable, Hashable {
    package var lockScreen: RenderedRegion?
    package var compactLeading: RenderedRegion?
    package var compactTrailing: RenderedRegion?
    package var minimal: RenderedRegion?
    package var expandedLeading: RenderedRegion?
    package var expandedTrailing: RenderedRegion?
    package var expandedCenter: RenderedRegion?
    package var expandedBottom: RenderedRegion?
    package var keylineTint: LayoutColor?
    package var backgroundTint: LayoutColor?
    package var chip: String?
    package var lockScreenVisibility: LockScreenVisibility
    /// Whether a locked screen hides the content: the visibility is not `public`.
    package var hideContentOnLockScreen: Bool { lockScreenVisibility != .public }
    /// The layout's tap URL, what `tap` on the activity as a whole returns.
    package var url: String?
}
