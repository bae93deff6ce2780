import IslandBridge
import IslandCore
import Testing

@Suite("Source identity, bounded text and bridge.conf")
struct IdentityAndConfigurationTests {
    @Test("a claim is believed only as an installed desktop entry")
    func resolve() {
        let fallback = SourceApp(name: "Fallback", icon: "audio-x-generic")
        let installed = ["spotify": DesktopEntry(name: "Spotify", icon: "spotify-client")]
        let lookup: (String) -> DesktopEntry? = { installed[$0] }
        #expect(SourceApp.resolve(entry: "spotify.desktop", label: "Evil", iconName: "x", fallback: fallback, lookup: lookup)
                == SourceApp(name: "Spotify", icon: "spotify-client", desktopEntry: "spotify"))
        #expect(SourceApp.resolve(entry: "../../etc/passwd", label: "Label", iconName: "/etc/passwd", fallback: fallback, lookup: lookup)
                == SourceApp(name: "Label", icon: "audio-x-generic"))
        #expect(SourceApp.resolve(entry: nil, label: "  ", iconName: "media-player", fallback: fallback, lookup: lookup)
                == SourceApp(name: "Fallback", icon: "media-player"))
        #expect(SourceApp.iconNameOrNil("file:///x.png") == nil)
        #expect(SourceApp.iconNameOrNil(".hidden") == nil)
        #expect(DesktopEntry.validID("org.kde.dolphin") == "org.kde.dolphin")
        #expect(DesktopEntry.validID("a/b") == nil)
    }

    @Test("desktop entries: Name and Icon of [Desktop Entry]; Hidden ones are not entries")
    func desktopEntries() {
        let entry = DesktopEntry(contents: "# c\n[Desktop Entry]\nName = Player \nName[de]=Spieler\nIcon=player\n[Desktop Action x]\nName=Other\n")
        #expect(entry == DesktopEntry(name: "Player", icon: "player"))
        #expect(DesktopEntry(contents: "[Desktop Entry]\nName=X\nHidden=true\n") == nil)
        #expect(DesktopEntry(contents: "no group") == nil)
    }

    @Test("text on one line, cut on a character with an ellipsis")
    func boundedText() {
        #expect(BoundedText.line("  a\n\tb  c ", maximumBytes: 100) == "a b c")
        #expect(BoundedText.line("éééé", maximumBytes: 7) == "éé…")
        #expect(BoundedText.line("éééé", maximumBytes: 6) == "é…", "the ellipsis counts")
        #expect(BoundedText.line("abc", maximumBytes: 3) == "abc")
        #expect(BoundedText.line("a\u{7}b\u{202E}c", maximumBytes: 10) == "a b c", "control and format characters separate words")
        #expect(BoundedText.notificationBody("<a href=\"x\">link</a> &lt;3 <notatag>", maximumBytes: 100) == "link <3 <notatag>")
    }

    @Test("bridge.conf: every key, and errors with their line")
    func configuration() throws {
        let text = """
            [Bridge]
            MaxActivities=3
            KeepEnded=2min
            [MPRIS]
            Enabled=no
            StaleAfterPause=30s
            [Notifications]
            Enabled=yes
            [Jobs]
            Enabled=auto
            MaxJobs=10
            MaxJobsPerSender=2
            """
        let configuration = try BridgeConfiguration.parse(text, path: "bridge.conf")
        #expect(configuration.maxActivities == 3 && configuration.keepEnded == 120)
        #expect(!configuration.mprisEnabled && configuration.staleAfterPause == 30)
        #expect(configuration.jobsEnabled == nil && configuration.maxJobs == 10 && configuration.maxJobsPerSender == 2)
        #expect(!configuration.servesJobs(currentDesktop: "KDE"))
        #expect(configuration.servesJobs(currentDesktop: "sway"))
        #expect(throws: ConfigurationError(path: "bridge.conf", line: 2, message: "MaxActivities= takes a whole number of at least 1, not '0'")) {
            try BridgeConfiguration.parse("[Bridge]\nMaxActivities=0\n", path: "bridge.conf")
        }
        #expect(throws: ConfigurationError.self) { try BridgeConfiguration.parse("[Mpris]\n", path: "p") }
        #expect(throws: ConfigurationError.self) { try BridgeConfiguration.parse("Enabled=yes\n", path: "p") }
        #expect(throws: ConfigurationError.self) { try BridgeConfiguration.parse("[Jobs]\nEnabled=maybe\n", path: "p") }
    }
}
