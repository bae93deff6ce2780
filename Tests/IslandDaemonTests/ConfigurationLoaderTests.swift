import Foundation
import IslandCore
import Testing
@testable import IslandDaemon

@Suite struct ConfigurationLoaderTests {
    @Test func noFilesAtAllIsNoConfiguration() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        #expect(try ConfigurationLoader.files(for: tree.path("islandd.conf")).isEmpty)
        #expect(try ConfigurationLoader.load(mainFile: tree.path("islandd.conf")) == .defaults)
    }

    @Test func devNullIsAnEmptyConfiguration() throws {
        #expect(try ConfigurationLoader.files(for: "/dev/null").map(\.contents) == [""])
        #expect(try ConfigurationLoader.load(mainFile: "/dev/null") == .defaults)
    }

    @Test func anUnreadableFileIsNamedWithTheReason() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.makeDirectory("islandd.conf")  // a directory where the file should be
        _ = FileManager.default.createFile(atPath: tree.path("binary.conf"), contents: Data([0x5B, 0xFF, 0xFE, 0x5D]))
        try tree.write("huge.conf", String(repeating: "#", count: ConfigurationLoader.maximumFileSize + 1))
        for (name, reason) in [("islandd.conf", "is a directory"), ("binary.conf", "not valid UTF-8"), ("huge.conf", "larger than")] {
            let path = tree.path(name)
            #expect {
                _ = try ConfigurationLoader.load(mainFile: path)
            } throws: { error in
                let message = "\(error)"
                return message.hasPrefix(path + ": ") && message.localizedCaseInsensitiveContains(reason)
            }
        }
    }

    @Test func theMainFileComesFirstThenSortedDropIns() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf", "[Limits]\nMaxActivities=10\n")
        try tree.write("islandd.conf.d/20-b.conf", "b")
        try tree.write("islandd.conf.d/10-a.conf", "a")
        try tree.write("islandd.conf.d/30-c.conf", "c")
        let files = try ConfigurationLoader.files(for: tree.path("islandd.conf"))
        #expect(
            files.map(\.path) == [
                tree.path("islandd.conf"), tree.path("islandd.conf.d/10-a.conf"),
                tree.path("islandd.conf.d/20-b.conf"), tree.path("islandd.conf.d/30-c.conf"),
            ])
        #expect(files.map(\.contents) == ["[Limits]\nMaxActivities=10\n", "a", "b", "c"])
    }

    @Test func dropInsWorkWithoutAMainFile() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf.d/50-limits.conf", "[Limits]\nMaxActivities=7\n")
        let files = try ConfigurationLoader.files(for: tree.path("islandd.conf"))
        #expect(files.map(\.path) == [tree.path("islandd.conf.d/50-limits.conf")])
        #expect(try ConfigurationLoader.load(mainFile: tree.path("islandd.conf")).limits.global.maximumActivities == 7)
    }

    @Test func onlyConfFilesAreDropIns() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf.d/10-a.conf", "a")
        try tree.write("islandd.conf.d/20-b.conf.disabled", "b")
        try tree.write("islandd.conf.d/30-c.conf~", "c")
        try tree.write("islandd.conf.d/README", "d")
        try tree.write("islandd.conf.d/40-d.CONF", "e")
        let files = try ConfigurationLoader.files(for: tree.path("islandd.conf"))
        #expect(files.map(\.path) == [tree.path("islandd.conf.d/10-a.conf")])
    }

    @Test func laterDropInsOverrideEarlierOnes() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf", "[Limits]\nMaxActivities=10\nMaxActivitiesPerApp=3\n")
        try tree.write("islandd.conf.d/90-late.conf", "[Limits]\nMaxActivities=30\n")
        try tree.write("islandd.conf.d/10-early.conf", "[Limits]\nMaxActivities=20\n")
        let configuration = try ConfigurationLoader.load(mainFile: tree.path("islandd.conf"))
        #expect(configuration.limits.global.maximumActivities == 30)
        #expect(configuration.limits.global.maximumActivitiesPerApp == 3)
    }

    @Test func anErrorNamesTheFileAndLine() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf", "[Limits]\nMaxActivities=10\n")
        try tree.write("islandd.conf.d/10-bad.conf", "# comment\n[Limits]\nBogus=1\n")
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(mainFile: tree.path("islandd.conf"))
        }
        #expect(error?.path == tree.path("islandd.conf.d/10-bad.conf"))
        #expect(error?.line == 3)
        #expect(error.map { "\($0)" }?.hasPrefix(tree.path("islandd.conf.d/10-bad.conf") + ":3:") == true)
    }
}
