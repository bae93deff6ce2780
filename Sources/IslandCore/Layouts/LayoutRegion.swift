/// A place a layout fills: its view plus how it is placed and what a tap on it opens.
///
/// In JSON a region is its view with the region's keys beside the view's:
/// `{"type": "text", "template": "…", "priority": 1, "url": "https://…"}`. `priority` and
/// `belowIfTooWide` belong to the expanded regions only. When the view is a `link`, its `url`
/// is the link's and the region has none of its own: tapping opens the link either way.
public struct LayoutRegion: Sendable, Hashable {
    public var view: LayoutView
    /// Which expanded region gets room first when space runs out; higher first.
    public var priority: Double
    /// An expanded leading/trailing region that does not fit beside the center goes below it.
    public var belowIfTooWide: Bool
    /// What a tap on this region opens; the layout's `url` when nil.
    public var url: LayoutURL?

    public init(view: LayoutView, priority: Double = 0, belowIfTooWide: Bool = false, url: LayoutURL? = nil) {
        self.view = view
        self.priority = priority
        self.belowIfTooWide = belowIfTooWide
        self.url = url
    }
}

/// The four regions of the expanded island (`expanded` in JSON).
public struct ExpandedLayout: Sendable, Hashable {
    public var leading: LayoutRegion?
    public var trailing: LayoutRegion?
    public var center: LayoutRegion?
    public var bottom: LayoutRegion?

    public init(leading: LayoutRegion? = nil, trailing: LayoutRegion? = nil, center: LayoutRegion? = nil, bottom: LayoutRegion? = nil) {
        self.leading = leading
        self.trailing = trailing
        self.center = center
        self.bottom = bottom
    }

    public var isEmpty: Bool { leading == nil && trailing == nil && center == nil && bottom == nil }
}
