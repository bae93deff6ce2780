public import OrderedJSON

/// How the activities of one type look (docs/design.md §6): data an extension registers, validated
/// by the daemon. Build one with `init(json:)` or `Layout.default(for:attributes:state:)`.
///
/// Every region is optional; a presenter draws a missing one from the default layout.
public struct Layout: Sendable, Hashable {
    public let lockScreen: LayoutRegion?
    public let compactLeading: LayoutRegion?
    public let compactTrailing: LayoutRegion?
    public let minimal: LayoutRegion?
    public let expanded: ExpandedLayout
    /// The island's outline color.
    public let keylineTint: LayoutColor?
    /// The lock-screen background color.
    public let backgroundTint: LayoutColor?
    /// A short static text for bars, at most `LayoutLimits.maximumChipLength` characters.
    public let chip: String?
    /// Privacy: on a locked screen, presenters show the app and not the content.
    public let hideContentOnLockScreen: Bool
    /// What a tap opens when the region tapped has no `url` of its own.
    public let url: LayoutURL?
    /// The validated document, as presenters receive it.
    public let json: JSONObject

    /// Validates a layout document.
    /// - Throws: the first problem, with its path and reason.
    public init(json: JSON) throws(LayoutError) {
        var parser = LayoutParser()
        self = try parser.parse(json)
    }

    /// Validates a layout document given as JSON text (an installed layout file).
    public init(text: String) throws(LayoutError) {
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
        backgroundTint: LayoutColor?, chip: String?, hideContentOnLockScreen: Bool, url: LayoutURL?,
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
        self.hideContentOnLockScreen = hideContentOnLockScreen
        self.url = url
        self.json = json
    }
}
