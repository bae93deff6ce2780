import Testing

@testable import IslandOverlay

/// What of the user's overlay.css is handed to GTK: colours and fonts, never a sheet that makes
/// GTK read another file (`OverlayStyle.refusal(ofUserCSS:)`).
@Suite struct OverlayUserCSSTests {
    @Test func coloursAndFontsAreTaken() {
        let sheet = """
            /* the island in a light theme */
            @define-color island_background #f6f5f4;
            @define-color island_foreground rgba(0, 0, 0, 0.9);
            window { font-family: "Inter", sans-serif; }
            """
        #expect(OverlayStyle.refusal(ofUserCSS: sheet) == nil)
    }

    @Test(arguments: [
        "@import url(\"file:///run/user/1000/fifo\");",
        "@IMPORT \"other.css\";",
        "window { background-image: url('file:///dev/zero'); }",
        "window { background-image: URL(/dev/zero); }",
        "@\\69mport \"other.css\";",
        "window { background-image: u\\72l(/dev/zero); }",
    ])
    func whatMakesGTKReadAFileIsRefused(sheet: String) {
        #expect(OverlayStyle.refusal(ofUserCSS: sheet) != nil)
    }
}
