/// The bounds every layout must stay within (DESIGN.md §6), so one extension cannot make
/// presenters slow or the daemon's messages large.
public enum LayoutLimits {
    /// The deepest a view may be nested; a region's own view is at depth 1.
    public static let maximumDepth = 8
    /// Views in the whole layout, every region counted.
    public static let maximumViews = 64
    /// The layout's compact JSON text.
    public static let maximumBytes = 32 * 1024
    /// Sections (or transforms) nested in one template. swift-mustache's parser recurses per
    /// level, so this bounds its stack use; real templates nest two or three deep.
    public static let maximumTemplateNesting = 16
    /// The bar chip, in Characters (what a user sees as one letter or emoji).
    public static let maximumChipLength = 7
}
