package import OrderedJSON

/// How the activities of one type look (docs/design.md §6): data an extension registers, validated
/// by the daemon. Build one with `init(json:)` or `Layout.default(for:attributes:state:)`.
///
/// Every region is optional; a presenter draws a missing one from the default layout.
package struct Layout: Sendable, Hashable {
    package let lockScreen: LayoutRegion?
    package let compactLeading: LayoutRegion?
    package let compactTrailing: LayoutRegion?
    package let minimal: LayoutRegion?
    package let expanded: ExpandedLayout
    /// The island's outline color.
    package let keylineTint: LayoutColor?
    /// The lock-screen background color.
    package let backgroundTint: LayoutColor?
    /// A short static text for bars, at most `LayoutLimits.maximumChipLength` characters.
    package let chip: String?
    /// Privacy: how much of the activity a locked screen shows (`lockScreenVisibility`; the
    /// older `hideContentOnLockScreen: true` is `private`). Public unless the layout says.
    package let lockScreenVisibility: LockScreenVisibility
    /// What a `private` activity shows on a locked screen instead of its own layout: a layout
    /// of text and symbols only, drawn with no attributes or state (the daemon sends none).
    package var publicLayout: Layout? { publicLayoutStorage.first }
    /// `publicLayout`, in an array: a value cannot hold its own type directly.
    private let publicLayoutStorage: [Layout]
    /// Whether a locked screen hides the content: `lockScreenVisibility` is not `public`.
    package var hideContentOnLockScreen: Bool { lockScreenVisibility != .public }
    /// What a tap opens when the region tapped has no `url` of its own.
    package let url: LayoutURL?
    /// The validated document, as presenters receive it.
    package let json: JSONObject

    /// Validates a layout document.
    /// - Throws: the first problem, with its path and reason.
    package init(json: JSON) throws(LayoutError) {
        var parser = LayoutParser()
        self = try parser.parse(json)
    }

    /// Validates a layout document given as JSON text (an installed layout file).
    package init(text: String) throws(LayoutError) {
        let json: JSON
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw LayoutPath.root.error("not JSON: \(error)")
        }
        try self.init(json: json)
    }

    init(
        lockScreen: LayoutRegion?, compactLeading: LayoutRegion?, compactTrailing: LayoutRegion?,
        minimal: LayoutRegion?, expanded: ExpandedLayout, keylineTint: LayoutColor?,
        backgroundTint: LayoutColor?, chip: String?, lockScreenVisibility: LockScreenVisibility, publicLayout: Layout?, url: LayoutURL?,
        json: JSONObject
    ) {
        self.lockScreen = lockScreen
        self.compactLeading = compactLeading
        self.compactTrailing = compactTrailing
        self.minimal = minimal
        self.expanded = expanded
        self.keylineTint = keylineTint
        self.backgroundTint = backgroundTint
        self.chip = chip
        self.lockScreenVisibility = lockScreenVisibility
        self.publicLayoutStorage = publicLayout.map { [$0] } ?? []
        self.url = url
        self.json = json
    }
}
