/// Why a layout was refused: the daemon answers `org.island.InvalidLayout(type, path, reason)`
/// with these two strings.
package struct LayoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the layout document, e.g. `expanded.center.children[2].template`; empty for
    /// the document as a whole.
    package var path: String
    /// What is wrong there, in words for the extension's author.
    package var reason: String

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    package var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}
