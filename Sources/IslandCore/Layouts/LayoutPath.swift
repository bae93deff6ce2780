/// A location in a layout document, spelled the way `LayoutError.path` reports it.
struct LayoutPath: Sendable, Hashable, CustomStringConvertible {
    private(set) var description = ""

    static let root = LayoutPath()

    func appending(_ key: String) -> LayoutPath {
        LayoutPath(description: description.isEmpty ? key : "\(description).\(key)")
    }

    func appending(index: Int) -> LayoutPath {
        LayoutPath(description: "\(description)[\(index)]")
    }

    func error(_ reason: String) -> LayoutError {
        LayoutError(path: description, reason: reason)
    }
}
