/// What a source's event makes of its activities, for the `ActivityBook`.
package enum SourceChange: Sendable, Hashable {
    /// Show this, or bring it up to date.
    case show(BridgedActivity)
    /// The thing ended: its activity ends with `content` (or its last), and stays listed as
    /// ended for a while when `keep`, or is dismissed at once.
    case finish(source: String, content: BridgedContent?, keep: Bool)
}
