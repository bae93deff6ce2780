/// Why a layout was refused: the daemon answers `org.island.InvalidLayout(type, path, reason)`
/// with these two strings.
public struct LayoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the layout document, e.g. `expanded.center.children[2].template`; empty for
    /// the document as a whole.
    public var path: String
    /// What is wrong there, in words for the extension's author.
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}
