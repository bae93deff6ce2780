import FreeDesktop
import Testing

@Suite struct KeyFileTests {
    @Test func groupsAndEntriesInFileOrder() {
        let file = KeyFile(parsing: "# c\n[A]\n  Key = a value  \n\n[B]\nOther=\n", syntax: .desktopEntry)
        #expect(
            file.lines == [
                .group(name: "A", line: 2), .entry(KeyFile.Entry(key: "Key", value: "a value", line: 3)),
                .group(name: "B", line: 5), .entry(KeyFile.Entry(key: "Other", value: "", line: 6)),
            ])
        #expect(file.problems.isEmpty)
    }

    @Test func groupHeadersMatchExactly() {
        let file = KeyFile(parsing: "[Desktop Entry]x\nName=Wrong\n[Desktop Entry]\nName=Right\n", syntax: .desktopEntry)
        #expect(file.value("Name", inGroup: "Desktop Entry") == "Right")
        #expect(file.value("Name", inGroup: "Desktop") == nil)
        #expect(
            KeyFile(parsing: "Name=Loose\n", syntax: .desktopEntry).entries(inGroup: "Desktop Entry") == nil,
            "keys before any group belong to none")
    }

    @Test func localizedKeysAreKeptApart() {
        let file = KeyFile(parsing: "[G]\nName[de_DE@euro]=Kaffee\nName=Coffee\n", syntax: .desktopEntry)
        #expect(file.entries(inGroup: "G")?.first == KeyFile.Entry(key: "Name", locale: "de_DE@euro", value: "Kaffee", line: 2))
        #expect(file.value("Name", inGroup: "G") == "Coffee")
        // In systemd syntax a bracket is part of the key.
        #expect(KeyFile(parsing: "[G]\nName[de]=x\n", syntax: .systemd).entries(inGroup: "G")?.first?.key == "Name[de]")
    }

    @Test func theFirstValueOfAKeyWinsAcrossRepeatedGroups() {
        let file = KeyFile(parsing: "[G]\nK=1\n[H]\nK=2\n[G]\nK=3\nL=4\n", syntax: .desktopEntry)
        #expect(file.value("K", inGroup: "G") == "1")
        #expect(file.value("L", inGroup: "G") == "4")
    }

    @Test func escapesOfStringValuesAreUndone() {
        #expect(KeyFile.unescape(#"a\sb\nc\td\re\\f"#) == "a b\nc\td\re\\f")
        #expect(KeyFile.unescape(#"\\s"#) == #"\s"#, "an escaped backslash does not start another escape")
        #expect(KeyFile.unescape(#"keep\q and \"#) == #"keep\q and \"#, "unknown escapes and a last backslash stay")
        #expect(KeyFile.unescape("plain") == "plain")
    }

    @Test func listsSplitOnUnescapedSemicolons() {
        #expect(KeyFile.list("a;b\\;c;d\\se;") == ["a", "b;c", "d e"])
        #expect(KeyFile.list("one") == ["one"])
        #expect(KeyFile.list("") == [])
        #expect(KeyFile.list(#"x\\;y"#) == [#"x\"#, "y"], "an escaped backslash before ; leaves the ; a separator")
    }

    @Test func crlfAndCommentsDesktopSyntax() {
        let file = KeyFile(parsing: "[G]\r\n#K=commented\r\n;K=not a comment here\r\nK=v\r\n", syntax: .desktopEntry)
        #expect(file.value("K", inGroup: "G") == "v")
        #expect(file.entries(inGroup: "G")?.first?.key == ";K", "';' starts a comment only in systemd syntax")
    }

    @Test func systemdSyntaxContinuesLinesAndSkipsSemicolonComments() {
        let file = KeyFile(parsing: "[S]\n; c\nK=a \\\n# inside\n  b\nLast=x\\", syntax: .systemd)
        #expect(
            file.lines == [
                .group(name: "S", line: 1), .entry(KeyFile.Entry(key: "K", value: "a  b", line: 3)),
                .entry(KeyFile.Entry(key: "Last", value: "x", line: 6)),
            ])
    }

    @Test func unreadableLinesAreProblemsAndSkipped() {
        let file = KeyFile(parsing: "[Open\njunk\n=value\n[G]\nK=v\n", syntax: .systemd)
        #expect(
            file.problems == [
                KeyFile.Problem(line: 1, kind: .unterminatedGroupHeader("[Open")),
                KeyFile.Problem(line: 2, kind: .notAnEntry("junk")),
                KeyFile.Problem(line: 3, kind: .missingKey),
            ])
        #expect(file.value("K", inGroup: "G") == "v")
        #expect(file.problems[0].description == "missing ']' at the end of the section header '[Open'")
    }

    @Test func tooLargeATextIsNotRead() {
        let file = KeyFile(parsing: "[G]\nK=" + String(repeating: "x", count: 100), syntax: .desktopEntry, maximumBytes: 64)
        #expect(file.lines.isEmpty)
        #expect(file.problems == [KeyFile.Problem(line: 1, kind: .tooLarge(limit: 64))])
    }
}

@Suite struct DesktopFileTests {
    @Test func readsTheDesktopEntryGroupOnly() throws {
        let file = try #require(
            DesktopFile(
                parsing: """
                    [Desktop Action new]
                    Name=New
                    [Desktop Entry]
                    Name=Two\\sWords
                    MimeType=x-scheme-handler/coffee;text/plain;
                    X-Flag=true
                    """))
        #expect(file.string("Name") == "Two Words")
        #expect(file.strings("MimeType") == ["x-scheme-handler/coffee", "text/plain"])
        #expect(file.boolean("X-Flag"))
        #expect(!file.isHidden)
    }

    @Test func noOrAnEmptyGroupIsNoDesktopFile() {
        #expect(DesktopFile(parsing: "") == nil)
        #expect(DesktopFile(parsing: "[Desktop Entry]\n# only a comment\n") == nil)
        #expect(DesktopFile(parsing: "[Desktop Entry]\nName=" + String(repeating: "x", count: DesktopFile.maximumBytes)) == nil)
        #expect(DesktopFile(parsing: "[Desktop Entry]\nHidden=true\n")?.isHidden == true)
    }

    @Test func theExecutableIsTryExecElseTheProgramOfExec() {
        #expect(DesktopFile(parsing: "[Desktop Entry]\nTryExec=mpv\nExec=other %U\n")?.executable == "mpv")
        #expect(DesktopFile(parsing: "[Desktop Entry]\nExec=spotify %U\n")?.executable == "spotify")
        #expect(DesktopFile(parsing: "[Desktop Entry]\nExec=\"/opt/My App/app\" %U\n")?.executable == "/opt/My App/app")
        #expect(DesktopFile(parsing: "[Desktop Entry]\nTryExec=/opt/a\\sb/app\n")?.executable == "/opt/a b/app")
        #expect(DesktopFile.program(ofExec: #""/opt/a\"b/app" %f"#) == #"/opt/a"b/app"#)
        #expect(DesktopFile.program(ofExec: #""/opt/broken"#) == nil, "an unterminated quote")
        #expect(DesktopFile.program(ofExec: "%U") == nil, "a field code is no program")
        #expect(DesktopFile.program(ofExec: "  ") == nil)
    }

    @Test func desktopFileIDs() {
        #expect(DesktopFile.validID("org.kde.dolphin.desktop") == "org.kde.dolphin")
        #expect(DesktopFile.validID("a/b") == nil)
        #expect(DesktopFile.validID(".hidden") == nil)
        #expect(DesktopFile.validID(String(repeating: "a", count: 256)) == nil)
    }
}
