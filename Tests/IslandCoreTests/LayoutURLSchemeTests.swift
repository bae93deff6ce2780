import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// Which URLs a tap may open (docs/design.md §6): an allowlist, `http`, `https` and the schemes
/// the app's desktop entry declares, whatever the case the layout writes them in.
@Suite struct LayoutURLSchemeTests {
    static let declared: Set<String> = ["myapp"]

    @Test(arguments: [
        ("https://example.org/a", true), ("http://example.org/a", true), ("HTTPS://example.org/a", true),
        ("myapp://order/1", true), ("MyApp://order/1", true),
        ("smb://host/share", false), ("sftp://host/f", false), ("ssh://host", false), ("vnc://host", false),
        ("view-source:file:///etc/passwd", false), ("jar:file:///tmp/x.jar!/a", false), ("apt:python3", false),
        ("help:gnome-help", false), ("mailto:a@example.org", false), ("x-other://x", false), ("myapp2://x", false),
    ])
    func onlyTheAllowlistOpens(url: String, allowed: Bool) throws {
        let parsed = try LayoutURL(url)
        #expect(parsed.isAllowed(declaredSchemes: Self.declared) == allowed)
        // Without declared schemes, only the web's.
        #expect(parsed.isAllowed(declaredSchemes: []) == ["http", "https"].contains(parsed.scheme))
    }

    @Test(arguments: [
        "javascript:alert(1)", "JAVASCRIPT:alert(1)", " javascript:alert(1)", "\tjavascript:x", "\u{1}https://example.org",
        "\u{85}https://example.org", "%6Aavascript:alert(1)", "%68ttps://example.org", "java\u{0}script:x", "file:///etc/passwd",
    ])
    func whatIsNotASchemeOrRunsLocallyIsNoLayoutURL(url: String) {
        #expect(throws: LayoutError.self) { try LayoutURL(url) }
    }

    @Test func theOpenedURLHasItsSchemeLowercased() throws {
        let renderer = LayoutRenderer(attributes: [:], state: ["id": "A 1"], now: 0)
        #expect(renderer.resolve(try LayoutURL("HTTPS://Example.org/{{state.id}}")) == "https://Example.org/A%201")
        #expect(renderer.resolve(try LayoutURL("MyApp://order/{{state.id}}")) == "myapp://order/A%201")
    }
}
