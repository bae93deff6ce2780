import Testing

@testable import Systemd

@Suite struct AppUnitNameTests {
    @Test(arguments: [
        ("app-gnome-org.gnome.Terminal-4242.scope", "org.gnome.Terminal"),
        ("app-org.kde.konsole-7d3ab2c1f0f4.scope", "org.kde.konsole"),
        ("app-flatpak-org.telegram.desktop-12345.scope", "org.telegram.desktop"),
        ("app-gnome-org.gnome.Evince@12345.service", "org.gnome.Evince"),
        ("app-KDE-org.kde.okular@a1b2c3.service", "org.kde.okular"),
        ("app-org.gnome.Nautilus@autostart.service", "org.gnome.Nautilus"),
        ("app-org.kde.amarok.service", "org.kde.amarok"),
        (#"app-gnome-com.example.My\x2dApp-99.scope"#, "com.example.My-App"),
        (#"app-com.example.My\x2dApp\x2dBeta@x.service"#, "com.example.My-App-Beta"),
        // Launchers that forget to escape: launchers have no dots, IDs do.
        ("app-gnome-com.example.my-app-99.scope", "com.example.my-app"),
        ("app-io.github.0x7ff.Tool-1.scope", "io.github.0x7ff.Tool"),
    ])
    func extractsTheApplicationID(unit: String, expected: String) {
        #expect(ProcessIdentity.appID(fromUnit: unit) == expected)
    }

    @Test(arguments: [
        "session-3.scope",
        "user@1000.service",
        "init.scope",
        "app.slice",
        "app-gnome-firefox-4242.scope",  // not reverse-DNS
        "app-org.gnome.Terminal.scope",  // scopes need the random part
        "app-gnome-org.gnome.Terminal-.scope",
        "app-gnome-org.gnome.Terminal-4242.slice",
        "app-gnome-org.gnome.Evince@.service",  // a template, not an instance
        "app--org.gnome.Evince-1.scope",
        #"app-gnome-org.example.Bad\xZZ-1.scope"#,
        #"app-gnome-org.example.Bad\xff-1.scope"#,  // not UTF-8
        "app-gnome-1.2-3.scope",
        "app-gnome-org..Evince-1.scope",
        "",
        "app-",
        "dbus-:1.2-org.freedesktop.portal.Desktop@0.service",
    ])
    func rejectsEverythingElse(unit: String) {
        #expect(ProcessIdentity.appID(fromUnit: unit) == nil)
    }

    @Test func unescapesSystemdUnitEscapes() {
        #expect(ProcessIdentity.unescapeUnitName(#"a\x2db\x2Dc"#) == "a-b-c")
        #expect(ProcessIdentity.unescapeUnitName(#"caf\xc3\xa9"#) == "café")
        #expect(ProcessIdentity.unescapeUnitName(#"trailing\x2"#) == nil)
        #expect(ProcessIdentity.unescapeUnitName(#"back\slash"#) == nil)
    }
}
