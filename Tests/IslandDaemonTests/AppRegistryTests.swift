import Foundation
import Testing
@testable import IslandDaemon

@Suite struct AppRegistryScanTests {
    @Test func readsEveryDesktopFileOfEveryDataDirectory() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/applications/org.example.Coffee.desktop", liveEntry())
        try tree.write("usr/applications/org.example.Timer.desktop", liveEntry(frequent: true))
        try tree.write("usr/applications/org.example.Plain.desktop", desktopEntry([("Name", "Plain")]))
        try tree.write("usr/applications/README", "not a desktop file")
        try tree.write("usr/applications/org.example.Notes.txt", liveEntry())
        let registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr"), tree.path("missing")])
        #expect(Set(registry.manifests.keys) == ["org.example.Coffee", "org.example.Timer", "org.example.Plain"])
        #expect(registry.manifest(for: "org.example.Timer")?.supportsFrequentUpdates == true)
        #expect(registry.manifest(for: "org.example.Plain")?.supportsLiveActivities == false)
        #expect(registry.manifest(for: "org.example.Coffee")?.path == tree.path("home/applications/org.example.Coffee.desktop"))
    }

    /// `yes` is no desktop-entry boolean (the spec's are true and false): the refusal says so,
    /// and what to write; `false` and no key at all are refused as before.
    @Test func aBooleanThatIsNotTrueOrFalseIsNamedInTheRefusal() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/applications/org.example.Yes.desktop", desktopEntry([("Name", "Yes"), ("X-Island-LiveActivities", "yes")]))
        try tree.write("share/applications/org.example.No.desktop", desktopEntry([("Name", "No"), ("X-Island-LiveActivities", "false")]))
        let registry = AppRegistry.scan(dataDirectories: [tree.path("share")])
        let yes = tree.path("share/applications/org.example.Yes.desktop")
        #expect(
            registry.refusal(for: "org.example.Yes") == "its desktop entry \(yes) does not declare X-Island-LiveActivities=true: "
                + "it says X-Island-LiveActivities=yes, and a desktop entry's booleans are true or false; write true")
        let no = tree.path("share/applications/org.example.No.desktop")
        #expect(registry.refusal(for: "org.example.No") == "its desktop entry \(no) does not declare X-Island-LiveActivities=true")
    }

    @Test func subfoldersPrefixTheIDWithDashes() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/applications/kde/org.example.Konsole.desktop", liveEntry())
        try tree.write("share/applications/vendor/games/chess.desktop", liveEntry())
        let registry = AppRegistry.scan(dataDirectories: [tree.path("share")])
        #expect(Set(registry.manifests.keys) == ["kde-org.example.Konsole", "vendor-games-chess"])
    }

    @Test func anEarlierDirectoryHidesALaterOne() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/applications/org.example.Coffee.desktop", desktopEntry([("Name", "Mine")]))
        try tree.write("usr/applications/org.example.Coffee.desktop", liveEntry())
        let registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr")])
        let coffee = try #require(registry.manifest(for: "org.example.Coffee"))
        #expect(coffee.name == "Mine")
        #expect(!coffee.supportsLiveActivities, "the user's own entry wins, even when it turns the key off")
        let reversed = AppRegistry.scan(dataDirectories: [tree.path("usr"), tree.path("home")])
        #expect(reversed.manifest(for: "org.example.Coffee")?.supportsLiveActivities == true)
    }

    @Test func aHiddenEntryHidesTheAppInLaterDirectories() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/applications/org.example.Coffee.desktop", "[Desktop Entry]\nHidden=true\n")
        try tree.write("usr/applications/org.example.Coffee.desktop", liveEntry())
        try tree.write("usr/applications/org.example.Timer.desktop", liveEntry())
        let registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr")])
        #expect(registry.manifest(for: "org.example.Coffee") == nil)
        #expect(registry.manifest(for: "org.example.Timer") != nil)
    }

    @Test func unreadableAndBadFilesAreSkipped() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/applications/org.example.Good.desktop", liveEntry())
        try tree.write("share/applications/org.example.Binary.desktop", "")
        try Data([0xFF, 0xFE, 0x00, 0x80]).write(to: URL(fileURLWithPath: tree.path("share/applications/org.example.Binary.desktop")))
        try tree.write("share/applications/org.example.NoGroup.desktop", "Name=Nothing\n")
        try tree.makeDirectory("share/applications/org.example.Folder.desktop")
        try tree.write("share/applications/org.example.Locked.desktop", liveEntry(), permissions: 0)
        let registry = AppRegistry.scan(dataDirectories: [tree.path("share")])
        let readable = (try? String(contentsOfFile: tree.path("share/applications/org.example.Locked.desktop"), encoding: .utf8)) != nil
        // Root reads mode-0 files; everyone else does not. Either way nothing else is lost.
        #expect(Set(registry.manifests.keys) == (readable ? ["org.example.Good", "org.example.Locked"] : ["org.example.Good"]))
    }

    @Test func whatIsNoRegularFileIsSkippedWithoutBlocking() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/applications/org.example.Good.desktop", liveEntry())
        #expect(mkfifo(tree.path("share/applications/org.example.Fifo.desktop"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: tree.path("share/applications/org.example.Zero.desktop"),
            withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(
            atPath: tree.path("share/applications/org.example.Loop.desktop"),
            withDestinationPath: tree.path("share/applications/org.example.Loop.desktop"))
        let huge = try tree.write("share/applications/org.example.Huge.desktop", liveEntry())
        #expect(truncate(huge, 1 << 40) == 0)
        // A Flatpak's exported entry is a link to a regular file: followed.
        let exported = try tree.write("flatpak/org.example.Linked.desktop", liveEntry())
        try FileManager.default.createSymbolicLink(
            atPath: tree.path("share/applications/org.example.Linked.desktop"),
            withDestinationPath: exported)
        let registry = AppRegistry.scan(dataDirectories: [tree.path("share")])
        #expect(Set(registry.manifests.keys) == ["org.example.Good", "org.example.Linked"])
        #expect(
            registry.refusal(for: "org.example.Fifo")
                == "its desktop entry \(tree.path("share/applications/org.example.Fifo.desktop")) is not a regular file")
        #expect(registry.refusal(for: "org.example.Huge")?.hasSuffix("could not be read: larger than 65536 bytes") == true)
    }

    @Test func aBadEntryDoesNotHideAGoodOneOfALaterDirectory() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/applications/org.example.Coffee.desktop", "this is not a desktop entry")
        try tree.write("usr/applications/org.example.Coffee.desktop", liveEntry())
        let registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr")])
        #expect(registry.manifest(for: "org.example.Coffee")?.supportsLiveActivities == true)
    }

    @Test func theInitializerKeepsTheFirstOfEachID() {
        let first = AppManifest(id: "a.b", name: "first", supportsLiveActivities: true, supportsFrequentUpdates: false, executable: nil, path: "/1")
        let second = AppManifest(id: "a.b", name: "second", supportsLiveActivities: false, supportsFrequentUpdates: false, executable: nil, path: "/2")
        #expect(AppRegistry(manifests: [first, second]).manifest(for: "a.b")?.name == "first")
    }
}

@Suite struct AppRegistryLookUpTests {
    @Test func anEntryWrittenAfterTheScanIsFoundByItsIDAlone() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.makeDirectory("home/applications")
        var registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr")])
        #expect(registry.manifest(for: "org.example.Late") == nil)
        #expect(registry.lookedUpOnceMore("org.example.Late") == nil)

        try tree.write("usr/applications/org.example.Late.desktop", liveEntry())
        let found = try #require(registry.lookedUpOnceMore("org.example.Late"))
        #expect(found.path == tree.path("usr/applications/org.example.Late.desktop"))
        registry.adopt(found)
        #expect(registry.refusal(for: "org.example.Late") == nil)

        // The search path's order, and Hidden=, as the scan has them.
        try tree.write("home/applications/org.example.Mine.desktop", desktopEntry([("Name", "Mine")]))
        try tree.write("usr/applications/org.example.Mine.desktop", liveEntry())
        #expect(registry.lookedUpOnceMore("org.example.Mine")?.name == "Mine")
        try tree.write("home/applications/org.example.Gone.desktop", "[Desktop Entry]\nHidden=true\n")
        try tree.write("usr/applications/org.example.Gone.desktop", liveEntry())
        #expect(registry.lookedUpOnceMore("org.example.Gone") == nil)
    }

    @Test func anIDThatNamesNoSingleFileIsNotLookedUp() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/applications/x.desktop", liveEntry())
        #expect(mkfifo(tree.path("share/applications/org.example.Fifo.desktop"), 0o600) == 0)
        let registry = AppRegistry(manifests: [], dataDirectories: [tree.path("share")])
        #expect(registry.lookedUpOnceMore("../applications/x") == nil)
        #expect(registry.lookedUpOnceMore(".hidden") == nil)
        #expect(registry.lookedUpOnceMore("") == nil)
        #expect(registry.lookedUpOnceMore("org.example.Fifo") == nil)
        #expect(registry.lookedUpOnceMore("x") != nil)
    }
}

@Suite struct AppRegistryExecutableTests {
    func manifest(_ id: String, exec: String?, live: Bool = true) -> AppManifest {
        AppManifest(id: id, name: nil, supportsLiveActivities: live, supportsFrequentUpdates: false, executable: exec, path: "/\(id)")
    }

    @Test func aFullPathMatchesOnlyThatPath() {
        let registry = AppRegistry(manifests: [manifest("org.example.Coffee", exec: "/usr/bin/coffee")])
        #expect(registry.app(forExecutable: "/usr/bin/coffee") == "org.example.Coffee")
        #expect(registry.app(forExecutable: "/home/mallory/bin/coffee") == nil)
        #expect(registry.app(forExecutable: "coffee") == nil)
    }

    @Test func aBareNameMatchesTheFileNameAnywhere() {
        let registry = AppRegistry(manifests: [manifest("org.example.Coffee", exec: "coffee")])
        #expect(registry.app(forExecutable: "/usr/bin/coffee") == "org.example.Coffee")
        #expect(registry.app(forExecutable: "/opt/coffee/bin/coffee") == "org.example.Coffee")
        #expect(registry.app(forExecutable: "/usr/bin/coffee-grinder") == nil)
        #expect(registry.app(forExecutable: "/usr/bin/tea") == nil)
    }

    @Test func aReplacedExecutableIsStillItsProgram() {
        let registry = AppRegistry(manifests: [manifest("org.example.Coffee", exec: "/usr/bin/coffee")])
        #expect(registry.app(forExecutable: "/usr/bin/coffee (deleted)") == "org.example.Coffee")
    }

    @Test func twoAppsWithOneProgramIdentifyNeither() {
        let registry = AppRegistry(manifests: [
            manifest("org.example.Coffee", exec: "launcher"),
            manifest("org.example.Timer", exec: "/usr/bin/launcher"),
        ])
        #expect(registry.app(forExecutable: "/usr/bin/launcher") == nil)
        #expect(registry.app(forExecutable: "/opt/launcher") == "org.example.Coffee", "only the bare name matches here")
    }

    @Test func appsWithoutLiveActivitiesAreIgnored() {
        let registry = AppRegistry(manifests: [
            manifest("org.example.Python", exec: "python3", live: false),
            manifest("org.example.Coffee", exec: "coffee"),
            manifest("org.example.NoExec", exec: nil),
        ])
        #expect(registry.app(forExecutable: "/usr/bin/python3") == nil)
        // The non-Live app does not make the program ambiguous either.
        let shared = AppRegistry(manifests: [
            manifest("org.example.Other", exec: "coffee", live: false),
            manifest("org.example.Coffee", exec: "coffee"),
        ])
        #expect(shared.app(forExecutable: "/usr/bin/coffee") == "org.example.Coffee")
    }
}
