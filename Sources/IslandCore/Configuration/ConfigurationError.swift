/// A configuration file the daemon refuses to start with: where, and what is wrong.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    /// 1-based; for a continued line, the line it starts on.
    public var line: Int
    public var message: String

    public init(path: String, line: Int, message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    /// `path:line: message`, the form editors and compilers use, so the location is clickable.
    public var description: String { "\(path):\(line): \(message)" }
}
