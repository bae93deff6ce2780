import Foundation
import IslandBridge
import IslandCore
import Testing

@Suite("Source identity, bounded text and bridge.conf")
struct IdentityAndConfigurationTests {
    @Test("a claim is believed only from a sender verified as that installed app; otherwise the bridge's own source")
    func resolve() {
        let installed = [
            "spotify": DesktopEntry(name: "Spotify", icon: "spotify-client", executable: "spotify"),
            "org.example.Player": DesktopEntry(name: "Player", icon: "/abs/icon.png", executable: "/usr/bin/player"),
            "com.spotify.Client": DesktopEntry(name: "Spotify (Flatpak)", icon: "com.spotify.Client", executable: "/usr/bin/flatpak"),
            "firefox_firefox": DesktopEntry(name: "Firefox (Snap)", icon: "firefox", executable: "env"),
        ]
        let lookup: (String) -> DesktopEntry? = { installed[$0] }
        let generic = SourceApp(name: "Media", icon: SourceApp.bridgeIcon, label: "Evil")
        func resolve(_ claim: String?, _ identity: SenderIdentity) -> SourceApp {
            SourceApp.resolve(claim: claim, identity: identity, kind: .media, label: "Evil", lookup: lookup)
        }
        // The executable: by file name for a bare program, by path for an absolute one.
        #expect(
            resolve("spotify.desktop", SenderIdentity(confinement: .none, executable: "/usr/share/spotify/spotify"))
                == SourceApp(name: "Spotify", icon: "spotify-client", desktopEntry: "spotify"))
        #expect(resolve("spotify", SenderIdentity(confinement: .none, executable: "/usr/bin/python3")) == generic)
        #expect(resolve("spotify", .unknown) == generic, "credentials that could not be read verify nothing")
        #expect(resolve("org.example.Player", SenderIdentity(confinement: .none, executable: "/tmp/player")) == generic)
        #expect(
            resolve("org.example.Player", SenderIdentity(confinement: .none, executable: "/usr/bin/player (deleted)"))
                == SourceApp(name: "Player", icon: SourceApp.bridgeIcon, desktopEntry: "org.example.Player"),
            "an icon that is a path is never shown")
        // A sandbox: only what the sandbox says, whatever its executable.
        #expect(resolve("spotify", SenderIdentity(confinement: .other, executable: "/usr/bin/spotify")) == generic)
        #expect(resolve("spotify", SenderIdentity(confinement: .flatpak(appID: "com.spotify.Client"))) == generic)
        #expect(
            resolve(nil, SenderIdentity(confinement: .flatpak(appID: "com.spotify.Client")))
                == SourceApp(name: "Spotify (Flatpak)", icon: "com.spotify.Client", desktopEntry: "com.spotify.Client"))
        #expect(resolve("firefox_firefox", SenderIdentity(confinement: .snap(name: "firefox"))).desktopEntry == "firefox_firefox")
        #expect(resolve("spotify", SenderIdentity(confinement: .snap(name: "firefox"))) == generic)
        // An app unit names its app.
        #expect(
            resolve("org.example.Player", SenderIdentity(confinement: .other, unitAppID: "org.example.Player")).desktopEntry
                == "org.example.Player")
        #expect(resolve("spotify", SenderIdentity(confinement: .none, unitAppID: "org.example.Player")) == generic)
        // A claim that is no entry, or not installed.
        #expect(resolve("../../etc/passwd", SenderIdentity(confinement: .none, executable: "/etc/passwd")) == generic)
        #expect(
            SourceApp.resolve(claim: nil, identity: .unknown, kind: .notification, label: "  ", lookup: lookup)
                == SourceApp(name: "Notification", icon: SourceApp.bridgeIcon))
        // Entries that run a launcher or an interpreter identify no process by its executable.
        #expect(!SenderIdentity(confinement: .none, executable: "/usr/bin/python3.11").verifies("x", executable: "python3.11"))
        #expect(!SenderIdentity(confinement: .none, executable: "/usr/bin/env").verifies("x", executable: "/usr/bin/env"))
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
        #expect(DesktopEntry(contents: "[Desktop Entry]\nExec=\"/opt/My App/app\" %U\n")?.executable == "/opt/My App/app")
        #expect(DesktopEntry(contents: "[Desktop Entry]\nTryExec=mpv\nExec=mpv --x %U\n")?.executable == "mpv")
        #expect(DesktopEntry(contents: "[Desktop Entry]\nExec=spotify %U\n")?.executable == "spotify")
        // Read as the daemon reads them (FreeDesktop's DesktopFile): the header exactly, the
        // string escapes undone.
        #expect(DesktopEntry(contents: "[Desktop Entry]x\nName=Not the entry\n") == nil)
        #expect(DesktopEntry(contents: "[Desktop Entry]\nName=Two\\sWords\nIcon=a\\\\b\n") == DesktopEntry(name: "Two Words", icon: "a\\b"))
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

    /// The user guide's bridge.conf example, as written: its comments once trailed the values,
    /// which the file's syntax (systemd's) reads as part of them, and `MaxActivities=5      # …`
    /// was refused.
    @Test("bridge.conf: the user guide's example is read as written")
    func theGuidesExample() throws {
        let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/user-guide.md").standardizedFileURL
        let text = try String(contentsOf: guide, encoding: .utf8)
        let fence = try #require(text.range(of: "```ini\n[Bridge]\n"))
        let start = text.index(fence.lowerBound, offsetBy: "```ini\n".count)
        let end = try #require(text.range(of: "```", range: start..<text.endIndex))
        let configuration = try BridgeConfiguration.parse(String(text[start..<end.lowerBound]), path: "user-guide.md")
        #expect(configuration.maxActivities == 5 && configuration.keepEnded == 60 && configuration.staleAfterPause == 600)
        #expect(configuration.jobsEnabled == nil && configuration.maxJobs == 32 && configuration.maxJobsPerSender == 8)
    }
}
