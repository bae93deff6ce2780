import IslandCore
import Testing

/// Helpers for the configuration tests, namespaced so they cannot clash with other suites.
enum ConfigurationTestSupport {
    static let mainPath = "/etc/island/islandd.conf"

    static func parse(_ contents: String, path: String = mainPath) throws(ConfigurationError) -> IslandConfiguration {
        try IslandConfiguration.parse(files: [(path: path, contents: contents)])
    }

    /// Expects parsing to fail with exactly `expected` (`path:line: message`).
    static func expectError(
        _ files: [(path: String, contents: String)], _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let configuration = try IslandConfiguration.parse(files: files)
            Issue.record("parsed without error: \(configuration)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.description == expected, sourceLocation: sourceLocation)
        }
    }

    static func expectError(_ contents: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectError([(path: mainPath, contents: contents)], expected, sourceLocation: sourceLocation)
    }
}
