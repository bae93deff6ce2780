import FreeDesktop
import OrderedCollections
import OrderedJSON
import SDBus
import Testing
@testable import IslandBridge

@Suite("GNOME's lock-screen privacy: only the values the user set, as islandd's levels")
struct GnomeLockScreenTests {
    /// `dconf dump /org/gnome/desktop/notifications/` as GNOME Shell and Settings leave it:
    /// an app that only ever notified has its id and nothing else; toggles write a value.
    static let dump = """
        [/]
        application-children=['org-gnome-nautilus', 'firefox', 'org-example-chat', 'org-example-mail', 'evil']
        show-banners=true

        [application/firefox]
        application-id='firefox.desktop'

        [application/org-gnome-nautilus]
        application-id='org.gnome.Nautilus.desktop'
        show-in-lock-screen=false

        [application/org-example-chat]
        application-id='org.example.Chat.desktop'
        details-in-lock-screen=false
        enable=true

        [application/org-example-mail]
        application-id='org.example.Mail.desktop'
        details-in-lock-screen=true
        show-in-lock-screen=true

        [application/evil]
        application-id='\\x1b[2J'
        show-in-lock-screen=false

        [application/nameless]
        show-in-lock-screen=false
        """

    @Test("hidden is secret, no details is private; defaults, true values and ids islandd would refuse say nothing")
    func mapsExplicitValuesOnly() {
        let levels = GnomeLockScreen.parse(dump: Self.dump)
        #expect(levels == GnomeLockScreen(everyAppSecret: false, privateApps: ["org.example.Chat"], secretApps: ["org.gnome.Nautilus"]))
        #expect(GnomeLockScreen.parse(dump: "") == GnomeLockScreen(), "nothing set: nothing hidden, though GNOME's default hides details")
    }

    @Test("GNOME's switch for every app hides every app")
    func everyApp() {
        #expect(GnomeLockScreen.parse(dump: "[/]\nshow-in-lock-screen=false\n").everyAppSecret)
        #expect(!GnomeLockScreen.parse(dump: "[/]\nshow-in-lock-screen=true\n").everyAppSecret)
        #expect(!GnomeLockScreen.parse(dump: "[application/x]\nshow-in-lock-screen=false\n").everyAppSecret, "an app's key is not the global one")
    }

    @Test("an app both hidden and without details is secret; the lists are bounded")
    func bounded() {
        var dump = "[application/a]\napplication-id='a.desktop'\nshow-in-lock-screen=false\ndetails-in-lock-screen=false\n"
        for index in 0..<(GnomeLockScreen.maximumApps + 10) {
            dump += "[application/p\(index)]\napplication-id='p\(index).desktop'\ndetails-in-lock-screen=false\n"
        }
        let levels = GnomeLockScreen.parse(dump: dump)
        #expect(levels.secretApps == ["a"])
        #expect(levels.privateApps.count == GnomeLockScreen.maximumApps && !levels.privateApps.contains("a"))
    }

    @Test("application ids: quoted desktop entry ids, without .desktop")
    func appIDs() {
        #expect(GnomeLockScreen.appID(fromVariant: "'org.gnome.Nautilus.desktop'") == "org.gnome.Nautilus")
        #expect(GnomeLockScreen.appID(fromVariant: "\"firefox-esr.desktop\"") == "firefox-esr")
        #expect(GnomeLockScreen.appID(fromVariant: "'vlc'") == "vlc")
        for refused in [
            "org.gnome.Nautilus.desktop", "'it\\'s.desktop'", "'.desktop'", "''", "'a b.desktop'", "'caf\u{E9}.desktop'",
            "'" + String(repeating: "x", count: 256) + "'",
        ] {
            #expect(GnomeLockScreen.appID(fromVariant: refused) == nil, "\(refused)")
        }
    }

    @Test("which dconf writes touch the settings")
    func touches() {
        #expect(GnomeLockScreen.touchesDirectory(prefix: "/org/gnome/desktop/notifications/application/firefox/show-in-lock-screen", changes: [""]))
        #expect(GnomeLockScreen.touchesDirectory(prefix: "/org/gnome/desktop/notifications/", changes: ["show-in-lock-screen"]))
        #expect(GnomeLockScreen.touchesDirectory(prefix: "/org/gnome/", changes: ["desktop/"]))
        #expect(!GnomeLockScreen.touchesDirectory(prefix: "/org/gnome/desktop/interface/", changes: ["color-scheme"]))
    }

    @Test("read at start and after each write that touches it, one read at a time")
    func follows() {
        let bus = FakeBus()
        var reads = 0
        var levels: [GnomeLockScreen?] = []
        let follower = GnomeLockScreenFollower(bus: bus, read: { reads += 1 }, reading: { levels.append($0) })
        try! follower.start()
        #expect(reads == 1)
        follower.answered(dump: "[/]\nshow-in-lock-screen=false\n")
        #expect(levels == [GnomeLockScreen(everyAppSecret: true)])
        bus.send(GnomeFocusTests.notify("/org/gnome/desktop/interface/", ["color-scheme"]))
        #expect(reads == 1)
        for _ in 0..<100 { bus.send(GnomeFocusTests.notify("/org/gnome/desktop/notifications/application/a/", ["details-in-lock-screen"])) }
        #expect(reads == 2, "one read at a time")
        follower.answered(dump: nil)
        #expect(levels.last == .some(nil), "unreadable is told as such")
        #expect(reads == 3, "and one more for all that came meanwhile")
    }

    @Test("said as SetDesktopLockScreen, and again to a daemon that restarted")
    func announced() {
        var desktop = DesktopAnnouncements(backoff: Backoff(first: .seconds(1), maximum: .seconds(30)))
        desktop.lockScreen.wish(GnomeLockScreen())
        #expect(desktop.nextCalls().isEmpty, "a daemon starts with no desktop levels")
        let levels = GnomeLockScreen(privateApps: ["org.example.Chat"], secretApps: ["org.gnome.Nautilus"])
        desktop.lockScreen.wish(levels)
        let calls = desktop.nextCalls()
        #expect(calls.map(\.method) == ["org.island.Admin.SetDesktopLockScreen"])
        #expect(calls.first?.parameters == ["everyAppSecret": false, "privateApps": ["org.example.Chat"], "secretApps": ["org.gnome.Nautilus"]])
        desktop.completed(calls[0], succeeded: true, now: .now)
        desktop.lockScreen.wish(levels, again: true)
        #expect(desktop.nextCalls().map(\.method) == ["org.island.Admin.SetDesktopLockScreen"])
    }
}
