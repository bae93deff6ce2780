package import FreeDesktop

extension IslandConfiguration {
    /// The section headers and assignments of a configuration file, in systemd's syntax
    /// (`KeyFile.Syntax.systemd`). islandd's policy, and the bridge's: the first line the
    /// reader cannot make sense of is an error, never skipped, so a typo cannot pass silently.
    package static func lines(of contents: String, path: String) throws(ConfigurationError) -> [KeyFile.Line] {
        let file = KeyFile(parsing: contents, syntax: .systemd)
        if let problem = file.problems.first {
            throw ConfigurationError(path: path, line: problem.line, message: problem.description)
        }
        return file.lines
    }
}
