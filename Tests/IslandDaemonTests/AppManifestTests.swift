import Testing
@testable import IslandDaemon

@Suite struct AppManifestTests {
    func parse(_ contents: String, id: String = "org.example.App") -> AppManifest? {
        AppManifest(id: id, path: "/apps/\(id).desktop", contents: contents)
    }

    @Test func readsTheIslandKeys() throws {
        let manifest = try #require(
            parse(
                """
                [Desktop Entry]
                Type=Application
                Name=Coffee
                Exec=/usr/bin/coffee --fresh %U
                X-Island-LiveActivities=true
                X-Island-FrequentUpdates=true
                """))
        #expect(manifest.id == "org.example.App")
        #expect(manifest.path == "/apps/org.example.App.desktop")
        #expect(manifest.name == "Coffee")
        #expect(manifest.supportsLiveActivities)
        #expect(manifest.supportsFrequentUpdates)
        #expect(manifest.executable == "/usr/bin/coffee")
    }

    @Test func theKeysAreOffUnlessExactlyTrue() throws {
        let absent = try #require(parse("[Desktop Entry]\nName=Plain\n"))
        #expect(!absent.supportsLiveActivities && !absent.supportsFrequentUpdates)
        #expect(absent.executable == nil)
        let other = try #require(parse("[Desktop Entry]\nX-Island-LiveActivities=yes\nX-Island-FrequentUpdates=1\n"))
        #expect(!other.supportsLiveActivities && !other.supportsFrequentUpdates)
    }

    @Test func whitespaceAroundKeysAndValuesIsIgnored() throws {
        let manifest = try #require(parse("  [Desktop Entry]  \n  Name = Spaced  \nX-Island-LiveActivities =true\n"))
        #expect(manifest.name == "Spaced")
        #expect(manifest.supportsLiveActivities)
    }

    @Test func crlfLineEndingsAreRead() throws {
        let manifest = try #require(parse("[Desktop Entry]\r\nName=Windows\r\nX-Island-LiveActivities=true\r\nExec=win\r\n"))
        #expect(manifest.name == "Windows")
        #expect(manifest.supportsLiveActivities)
        #expect(manifest.executable == "win")
    }

    @Test func tryExecWinsOverExec() throws {
        let both = try #require(parse(desktopEntry([("TryExec", "/opt/coffee/bin/coffee"), ("Exec", "coffee-launcher %f")])))
        #expect(both.executable == "/opt/coffee/bin/coffee")
        let emptyTryExec = try #require(parse(desktopEntry([("TryExec", ""), ("Exec", "coffee-launcher %f")])))
        #expect(emptyTryExec.executable == "coffee-launcher")
        let execOnly = try #require(parse(desktopEntry([("Exec", "coffee")])))
        #expect(execOnly.executable == "coffee")
    }

    @Test func aQuotedExecProgramKeepsItsSpaces() throws {
        let quoted = try #require(parse(desktopEntry([("Exec", #""/opt/My App/bin/app" --flag %U"#)])))
        #expect(quoted.executable == "/opt/My App/bin/app")
        let escapedQuote = try #require(parse(desktopEntry([("Exec", #""/opt/a\\"b/app" %U"#)])))
        #expect(escapedQuote.executable == #"/opt/a"b/app"#)
        let unterminated = try #require(parse(desktopEntry([("Exec", #""/opt/broken"#)])))
        #expect(unterminated.executable == nil)
    }

    @Test func stringEscapesAreUndone() throws {
        let manifest = try #require(parse(desktopEntry([("Name", #"Two\sWords\\"#), ("TryExec", #"/opt/a\sb/app"#)])))
        #expect(manifest.name == #"Two Words\"#)
        #expect(manifest.executable == "/opt/a b/app")
    }

    @Test func hiddenEntriesAreDeleted() {
        #expect(parse(liveEntry() + "Hidden=true\n") == nil)
        #expect(AppManifest.entry(id: "a.b", path: "/p", contents: liveEntry() + "Hidden=true\n") == .hidden)
        #expect(parse(liveEntry() + "Hidden=false\n") != nil)
    }

    @Test func onlyTheDesktopEntryGroupCounts() throws {
        let manifest = try #require(
            parse(
                """
                [Desktop Action new-order]
                Name=New order
                Exec=/usr/bin/other
                X-Island-LiveActivities=true
                [Desktop Entry]
                Name=Coffee
                [Desktop Action reorder]
                Exec=/usr/bin/reorder
                X-Island-FrequentUpdates=true
                Hidden=true
                """))
        #expect(manifest.name == "Coffee")
        #expect(!manifest.supportsLiveActivities)
        #expect(!manifest.supportsFrequentUpdates)
        #expect(manifest.executable == nil)
    }

    @Test func noDesktopEntryGroupIsNoManifest() {
        #expect(parse("") == nil)
        #expect(parse("Name=Loose\nX-Island-LiveActivities=true\n") == nil, "keys before any group belong to none")
        #expect(parse("[Desktop Action x]\nName=X\n") == nil)
        #expect(parse("[Desktop Entry]\n# only a comment\n") == nil)
        #expect(AppManifest.entry(id: "a.b", path: "/p", contents: "garbage") == .invalid)
    }

    @Test func commentsAndLocalizedKeysAreIgnored() throws {
        let manifest = try #require(
            parse(
                """
                # X-Island-LiveActivities=false
                [Desktop Entry]
                # Name=Commented
                Name[de]=Kaffee
                Name=Coffee
                  # X-Island-FrequentUpdates=true
                X-Island-LiveActivities=true
                """))
        #expect(manifest.name == "Coffee")
        #expect(manifest.supportsLiveActivities)
        #expect(!manifest.supportsFrequentUpdates)
    }

    @Test func theFirstOfARepeatedKeyWins() throws {
        let manifest = try #require(parse("[Desktop Entry]\nName=First\nName=Second\n"))
        #expect(manifest.name == "First")
    }

    @Test func linesWithoutAnEqualsSignAreSkipped() throws {
        let manifest = try #require(parse("[Desktop Entry]\nnonsense line\nName=Still\n"))
        #expect(manifest.name == "Still")
    }
}
