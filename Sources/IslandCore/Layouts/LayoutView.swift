/// One view of a layout, as validated from its JSON (tagged by `"type"`).
package indirect enum LayoutView: Sendable, Hashable {
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
    package var typeName: String {
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
package enum LayoutNumber: Sendable, Hashable {
    case constant(Double)
    case template(LayoutTemplate)
}

/// An icon. `name` may be a template; `names` then maps what it renders to the icon to show,
/// since Mustache cannot compare values (`"name": "{{state.stage}}"`,
/// `"names": {"brewing": "☕", "onTheWay": "🛵"}`). A rendered name not in `names` is shown as is.
package struct LayoutSymbol: Sendable, Hashable {
    package var name: LayoutTemplate
    package var names: [String: String]

    package init(name: LayoutTemplate, names: [String: String] = [:]) {
        self.name = name
        self.names = names
    }
}

/// A timer between two instants (seconds since the Unix epoch). Counting down needs `to`
/// (the remaining time); counting up needs `from` (the elapsed time, stopping at `to` if given).
package struct LayoutTimer: Sendable, Hashable {
    package var from: LayoutNumber?
    package var to: LayoutNumber?
    package var countsDown: Bool

    package init(from: LayoutNumber?, to: LayoutNumber?, countsDown: Bool = true) {
        self.from = from
        self.to = to
        self.countsDown = countsDown
    }
}

/// A progress bar, with optional segments and points like Android's `ProgressStyle`.
///
/// Segment lengths and point positions share one scale: the sum of the segment lengths when
/// there are segments, else `total` for a value, else 0…1 for a time range.
package struct LayoutProgress: Sendable, Hashable {
    package enum Measure: Sendable, Hashable {
        /// `value` out of `total` (1 unless given).
        case value(LayoutNumber, total: LayoutNumber)
        /// The share of the time range `from`…`to` that has passed.
        case timeRange(from: LayoutNumber, to: LayoutNumber)
    }

    package struct Segment: Sendable, Hashable {
        package var length: Double
        package var color: LayoutColor?
        package init(length: Double, color: LayoutColor? = nil) {
            self.length = length
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

    package var measure: Measure
    package var segments: [Segment]
    package var points: [Point]

    package init(measure: Measure, segments: [Segment] = [], points: [Point] = []) {
        self.measure = measure
        self.segments = segments
        self.points = points
    }
}

/// Children laid out in a row (`hstack`) or a column (`vstack`).
package struct LayoutStack: Sendable, Hashable {
    package var children: [LayoutView]
    /// Points between children; the presenter's default when nil.
    package var spacing: Double?

    package init(children: [LayoutView], spacing: Double? = nil) {
        self.children = children
        self.spacing = spacing
    }
}

/// A view that opens `url` when tapped.
package struct LayoutLink: Sendable, Hashable {
    package var url: LayoutURL
    package var child: LayoutView

    package init(url: LayoutURL, child: LayoutView) {
        self.url = url
        self.child = child
    }
}

/// A button whose press is routed to the app as `action` (like a `LiveActivityIntent`).
package struct LayoutButton: Sendable, Hashable {
    package var action: String
    /// What the button says: its accessible name, and what text presenters print.
    package var label: LayoutTemplate
    /// An icon shown with the label, resolved as a symbol view's (`"symbol": "{{state.status}}"`,
    /// `"symbols": {"playing": "media-playback-pause-symbolic"}`), so it can follow the state.
    package var symbol: LayoutSymbol?

    package init(action: String, label: LayoutTemplate, symbol: LayoutSymbol? = nil) {
        self.action = action
        self.label = label
        self.symbol = symbol
    }
}

/// A picture from a local file, or its fallback.
package struct LayoutImage: Sendable, Hashable {
    /// What renders to the file: a `file:///` URL or an absolute path.
    package var source: LayoutTemplate
    /// Shown where the picture is not: no file, not a picture, or a presenter of text.
    package var fallback: LayoutView?

    package init(source: LayoutTemplate, fallback: LayoutView? = nil) {
        self.source = source
        self.fallback = fallback
    }
}
