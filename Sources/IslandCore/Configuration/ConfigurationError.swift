/// A configuration file the daemon refuses to start with: where, and what is wrong.
package struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    package var path: String
    /// 1-based; for a continued line, the line it starts on.
    package var line: Int
    package var message: String

    package init(path: String, line: Int, message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    /// `path:line: message`, the form editors and compilers use, so the location is clickable.
    package var description: String { "\(path):\(line): \(message)" }
}
