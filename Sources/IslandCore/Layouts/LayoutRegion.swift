/// A place a layout fills: its view plus how it is placed and what a tap on it opens.
///
/// In JSON a region is its view with the region's keys beside the view's:
/// `{"type": "text", "template": "…", "priority": 1, "url": "https://…"}`. `priority` and
/// `belowIfTooWide` belong to the expanded regions only. When the view is a `link`, its `url`
/// is the link's and the region has none of its own: tapping opens the link either way.
package struct LayoutRegion: Sendable, Hashable {
    package var view: LayoutView
    /// Which expanded region gets room first when space runs out; higher first.
    package var priority: Double
    /// An expanded leading/trailing region that does not fit beside the center goes below it.
    package var belowIfTooWide: Bool
    /// What a tap on this region opens; the layout's `url` when nil.
    package var url: LayoutURL?

    package init(view: LayoutView, priority: Double = 0, belowIfTooWide: Bool = false, url: LayoutURL? = nil) {
        self.view = view
        self.priority = priority
        self.belowIfTooWide = belowIfTooWide
        self.url = url
    }
}

/// The four regions of the expanded island (`expanded` in JSON).
package struct ExpandedLayout: Sendable, Hashable {
    package var leading: LayoutRegion?
    package var trailing: LayoutRegion?
    package var center: LayoutRegion?
    package var bottom: LayoutRegion?

    package init(leading: LayoutRegion? = nil, trailing: LayoutRegion? = nil, center: LayoutRegion? = nil, bottom: LayoutRegion? = nil) {
        self.leading = leading
        self.trailing = trailing
        self.center = center
        self.bottom = bottom
    }

    package var isEmpty: Bool { leading == nil && trailing == nil && center == nil && bottom == nil }
}
