/// One view of a layout, as validated from its JSON (tagged by `"type"`).
public indirect enum LayoutView: Sendable, Hashable {
    /// `{"type": "text", "template": "{{state.minutes}} min"}`
    case text(LayoutTemplate)
    /// `{"type": "symbol", "name": "☕"}`: a freedesktop icon name or an emoji.
    case symbol(LayoutSymbol)
    /// `{"type": "timer", "from": …, "to": …, "countsDown": true}`: ticks on the presenter.
    case timer(LayoutTimer)
    /// `{"type": "progress", "value": …, "total": …}` or a time range `from`/`to`.
    case progress(LayoutProgress)
    /// `{"type": "hstack", "children": […], "spacing": 4}`
    case hstack(LayoutStack)
    /// `{"type": "vstack", "children": […], "spacing": 4}`
    case vstack(LayoutStack)
    /// `{"type": "spacer"}`: takes the room left in its stack.
    case spacer
    /// `{"type": "link", "url": "https://…", "child": {…}}`
    case link(LayoutLink)
    /// `{"type": "button", "action": "pause", "label": "Pause", "symbol": "media-playback-pause"}`;
    /// `symbol` may be a template with `symbols` mapping what it renders, as a symbol's `name`
    /// and `names` do.
    case button(LayoutButton)
    /// `{"type": "image", "source": "{{state.artUrl}}", "fallback": {…}}`: a picture from a
    /// local file (a `file:///` URL or an absolute path, `LocalFile`'s rule), decoded only as
    /// PNG or JPEG by a presenter that draws pictures; `fallback` where it does not, or the
    /// file is not one. Text presenters show the fallback, never the path.
    case image(LayoutImage)

    /// The `"type"` tag of each kind of view.
    public var typeName: String {
        switch self {
        case .text: "text"
        case .symbol: "symbol"
        case .timer: "timer"
        case .progress: "progress"
        case .hstack: "hstack"
        case .vstack: "vstack"
        case .spacer: "spacer"
        case .link: "link"
        case .button: "button"
        case .image: "image"
        }
    }
}

/// A number written out, or a template that renders to one (`"{{state.eta}}"`).
public enum LayoutNumber: Sendable, Hashable {
    case constant(Double)
    case template(LayoutTemplate)
}

/// An icon. `name` may be a template; `names` then maps what it renders to the icon to show,
/// since Mustache cannot compare values (`"name": "{{state.stage}}"`,
/// `"names": {"brewing": "☕", "onTheWay": "🛵"}`). A rendered name not in `names` is shown as is.
public struct LayoutSymbol: Sendable, Hashable {
    public var name: LayoutTemplate
    public var names: [String: String]

    public init(name: LayoutTemplate, names: [String: String] = [:]) {
        self.name = name
        self.names = names
    }
}

/// A timer between two instants (seconds since the Unix epoch). Counting down needs `to`
/// (the remaining time); counting up needs `from` (the elapsed time, stopping at `to` if given).
public struct LayoutTimer: Sendable, Hashable {
    public var from: LayoutNumber?
    public var to: LayoutNumber?
    public var countsDown: Bool

    public init(from: LayoutNumber?, to: LayoutNumber?, countsDown: Bool = true) {
        self.from = from
        self.to = to
        self.countsDown = countsDown
    }
}

/// A progress bar, with optional segments and points like Android's `ProgressStyle`.
///
/// Segment lengths and point positions share one scale: the sum of the segment lengths when
/// there are segments, else `total` for a value, else 0…1 for a time range.
public struct LayoutProgress: Sendable, Hashable {
    public enum Measure: Sendable, Hashable {
        /// `value` out of `total` (1 unless given).
        case value(LayoutNumber, total: LayoutNumber)
        /// The share of the time range `from`…`to` that has passed.
        case timeRange(from: LayoutNumber, to: LayoutNumber)
    }

    public struct Segment: Sendable, Hashable {
        public var length: Double
        public var color: LayoutColor?
        public init(length: Double, color: LayoutColor? = nil) {
            self.length = length
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

    public var measure: Measure
    public var segments: [Segment]
    public var points: [Point]

    public init(measure: Measure, segments: [Segment] = [], points: [Point] = []) {
        self.measure = measure
        self.segments = segments
        self.points = points
    }
}

/// Children laid out in a row (`hstack`) or a column (`vstack`).
public struct LayoutStack: Sendable, Hashable {
    public var children: [LayoutView]
    /// Points between children; the presenter's default when nil.
    public var spacing: Double?

    public init(children: [LayoutView], spacing: Double? = nil) {
        self.children = children
        self.spacing = spacing
    }
}

/// A view that opens `url` when tapped.
public struct LayoutLink: Sendable, Hashable {
    public var url: LayoutURL
    public var child: LayoutView

    public init(url: LayoutURL, child: LayoutView) {
        self.url = url
        self.child = child
    }
}

/// A button whose press is routed to the app as `action` (like a `LiveActivityIntent`).
public struct LayoutButton: Sendable, Hashable {
    public var action: String
    /// What the button says: its accessible name, and what text presenters print.
    public var label: LayoutTemplate
    /// An icon shown with the label, resolved as a symbol view's (`"symbol": "{{state.status}}"`,
    /// `"symbols": {"playing": "media-playback-pause-symbolic"}`), so it can follow the state.
    public var symbol: LayoutSymbol?

    public init(action: String, label: LayoutTemplate, symbol: LayoutSymbol? = nil) {
        self.action = action
        self.label = label
        self.symbol = symbol
    }
}

/// A picture from a local file, or its fallback.
public struct LayoutImage: Sendable, Hashable {
    /// What renders to the file: a `file:///` URL or an absolute path.
    public var source: LayoutTemplate
    /// Shown where the picture is not: no file, not a picture, or a presenter of text.
    public var fallback: LayoutView?

    public init(source: LayoutTemplate, fallback: LayoutView? = nil) {
        self.source = source
        self.fallback = fallback
    }
}
