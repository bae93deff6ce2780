/// The bounds every layout must stay within (docs/design.md §6), so one extension cannot make
/// presenters slow or the daemon's messages large.
package enum LayoutLimits {
    /// The deepest a view may be nested; a region's own view is at depth 1.
    package static let maximumDepth = 8
    /// Views in the whole layout, every region counted.
    package static let maximumViews = 64
    /// The layout's compact JSON text.
    package static let maximumBytes = 32 * 1024
    /// Sections (or transforms) nested in one template. swift-mustache's parser recurses per
    /// level, so this bounds its stack use; real templates nest two or three deep.
    package static let maximumTemplateNesting = 16
    /// The work all the templates of one render may do together, in units of about a byte of
    /// output (see `MustacheBudget`): far above what any real layout spends, small enough that
    /// no template, however its sections multiply, runs for more than milliseconds.
    package static let maximumRenderWork = 1 << 20
    /// What one template renders to, in UTF-8 bytes; longer text is cut and a longer URL is
    /// not opened.
    package static let maximumRenderedBytes = 4096
    /// The bar chip, in Characters (what a user sees as one letter or emoji).
    package static let maximumChipLength = 7
    /// Layouts one app's extension may register, each of at most `maximumBytes`: what the daemon
    /// keeps for an app stays around a megabyte, and `ListLayouts` always fits in one reply.
    /// Fixed, like the size, so that no configuration can make that reply too large to send.
    package static let maximumLayoutsPerApp = 32
}
