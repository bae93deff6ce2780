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
        for (name, reason) in [("islandd.conf", "not a regular file"), ("binary.conf", "not valid UTF-8"), ("huge.conf", "larger than")] {
            let path = tree.path(name)
            #expect {
                _ = try ConfigurationLoader.load(mainFile: path)
            } throws: { error in
                let message = "\(error)"
                return message.hasPrefix(path + ": ") && message.localizedCaseInsensitiveContains(reason)
            }
        }
    }

    /// Any program of the user's can write the configuration folder. A FIFO no one writes to
    /// once blocked the start in `open` for good (and a reload, with every later rescan of the
    /// data directories behind it); a device or a link to one was read as a stream.
    @Test(.timeLimit(.minutes(1))) func whatIsNoRegularFileIsRefusedByNameWithoutBeingRead() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.makeDirectory("islandd.conf.d")
        #expect(mkfifo(tree.path("fifo.conf"), 0o600) == 0)
        #expect(mkfifo(tree.path("islandd.conf.d/10-fifo.conf"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: tree.path("zero.conf"), withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: tree.path("tty.conf"), withDestinationPath: "/dev/tty")
        try FileManager.default.createSymbolicLink(atPath: tree.path("loop.conf"), withDestinationPath: tree.path("loop.conf"))
        let cases = [
            ("fifo.conf", tree.path("fifo.conf"), "not a regular file"),
            ("islandd.conf", tree.path("islandd.conf.d/10-fifo.conf"), "not a regular file"),
            ("zero.conf", tree.path("zero.conf"), "not a regular file"),
            ("tty.conf", tree.path("tty.conf"), "not a regular file"),
            ("loop.conf", tree.path("loop.conf"), "too many levels of symbolic links"),
        ]
        for (main, named, reason) in cases {
            #expect {
                _ = try ConfigurationLoader.load(mainFile: tree.path(main))
            } throws: { error in
                let message = "\(error)"
                return message.hasPrefix(named + ": ") && message.localizedCaseInsensitiveContains(reason)
            }
        }
    }

    /// A name that is not UTF-8 was read through a lossy String, so the file was "No such file
    /// or directory" and the daemon would not start, saying so.
    @Test func aDropInWhoseNameIsNotUTF8IsNamedAsSuch() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.makeDirectory("islandd.conf.d")
        let name = Array(tree.path("islandd.conf.d/").utf8) + [0xFF, 0xFE] + Array(".conf".utf8) + [0]
        let fd = name.withUnsafeBufferPointer { path in
            path.baseAddress!.withMemoryRebound(to: CChar.self, capacity: name.count) { open($0, O_CREAT | O_WRONLY, 0o600) }
        }
        #expect(fd >= 0)
        close(fd)
        #expect {
            _ = try ConfigurationLoader.load(mainFile: tree.path("islandd.conf"))
        } throws: { error in
            "\(error)" == tree.path("islandd.conf.d/\u{FFFD}\u{FFFD}.conf") + ": the file name is not UTF-8; rename the file"
        }
    }

    @Test func aDropInLinkedToTheNullDeviceIsEmpty() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("islandd.conf", "[Limits]\nMaxActivities=10\n")
        try tree.makeDirectory("islandd.conf.d")
        try FileManager.default.createSymbolicLink(atPath: tree.path("islandd.conf.d/10-null.conf"), withDestinationPath: "/dev/null")
        #expect(try ConfigurationLoader.files(for: tree.path("islandd.conf")).map(\.contents) == ["[Limits]\nMaxActivities=10\n", ""])
    }

    /// Each file is bounded, and so are all of them together: a thousand links to one file of
    /// a megabyte would otherwise be a gigabyte held.
    @Test func theFilesTogetherAreBounded() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        let comment = String(repeating: "#", count: ConfigurationLoader.maximumFileSize - 1) + "\n"
        try tree.write("large", comment)
        try tree.makeDirectory("islandd.conf.d")
        for index in 0..<(ConfigurationLoader.maximumTotalSize / ConfigurationLoader.maximumFileSize + 1) {
            try FileManager.default.createSymbolicLink(
                atPath: tree.path("islandd.conf.d/\(index).conf"), withDestinationPath: tree.path("large"))
        }
        let last = tree.path("islandd.conf.d/\(ConfigurationLoader.maximumTotalSize / ConfigurationLoader.maximumFileSize).conf")
        #expect {
            _ = try ConfigurationLoader.load(mainFile: tree.path("islandd.conf"))
        } throws: { error in
            "\(error)" == "\(last): the configuration files together are larger than \(ConfigurationLoader.maximumTotalSize) bytes"
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
