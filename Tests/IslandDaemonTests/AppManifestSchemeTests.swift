import Testing
@testable import IslandDaemon

/// The schemes an app's desktop entry declares (`MimeType=` … `x-scheme-handler/<scheme>`),
/// the only ones besides `http` and `https` a tap on its activities may open.
@Suite struct AppManifestSchemeTests {
    private func schemes(_ mimeTypes: String?) throws -> Set<String> {
        let line = mimeTypes.map { "MimeType=\($0)\n" } ?? ""
        return try #require(AppManifest(id: "org.example.App", path: "/a.desktop", contents: "[Desktop Entry]\nName=A\n\(line)")).urlSchemes
    }

    @Test func readsTheSchemeHandlersOfMimeType() throws {
        #expect(try schemes(nil) == [])
        #expect(try schemes("text/plain;image/png;") == [])
        #expect(try schemes("text/plain;x-scheme-handler/myapp;") == ["myapp"])
        #expect(try schemes("x-scheme-handler/myapp;x-scheme-handler/my-app+v2.x") == ["myapp", "my-app+v2.x"])
        // Scheme names are case-insensitive; openers and the allowlist use lowercase.
        #expect(try schemes(" X-Scheme-Handler/MyApp ; ") == ["myapp"])
    }

    @Test func whatIsNotASchemeIsNoScheme() throws {
        #expect(try schemes("x-scheme-handler/;x-scheme-handler/1app;x-scheme-handler/a b;x-scheme-handler/%6Aa;x-scheme-handler") == [])
        #expect(try schemes("application/x-scheme-handler/myapp;text/x-scheme-handler/other") == [])
    }
}
