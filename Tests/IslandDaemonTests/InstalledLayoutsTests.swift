import Foundation
import OrderedJSON
import Logging
import Testing
@testable import IslandDaemon

@Suite struct InstalledLayoutsTests {
    let logger = Logger(label: "test")

    @Test func readsAppAndTypeFromThePath() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/island/layouts/org.example.Coffee/Order.json", #"{"chip": "Order"}"#)
        try tree.write("share/island/layouts/org.example.Coffee/Brew.json", #"{"chip": "Brew"}"#)
        try tree.write("share/island/layouts/org.example.Timer/Timer.json", #"{"url": "https://example.org"}"#)
        try tree.write("share/island/layouts/org.example.Timer/notes.txt", "ignored")
        let layouts = InstalledLayouts.scan(dataDirectories: [tree.path("share"), tree.path("missing")], logger: logger)
        #expect(layouts["org.example.Coffee"]?["Order"] == ["chip": "Order"])
        #expect(layouts["org.example.Coffee"]?["Brew"] == ["chip": "Brew"])
        #expect(layouts["org.example.Timer"]?.keys.sorted() == ["Timer"])
    }

    @Test func anEarlierDirectoryHidesALaterOne() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/island/layouts/org.example.Coffee/Order.json", #"{"chip": "Mine"}"#)
        try tree.write("usr/island/layouts/org.example.Coffee/Order.json", #"{"chip": "Vendor"}"#)
        try tree.write("usr/island/layouts/org.example.Coffee/Brew.json", #"{"chip": "Brew"}"#)
        let layouts = InstalledLayouts.scan(dataDirectories: [tree.path("home"), tree.path("usr")], logger: logger)
        #expect(layouts["org.example.Coffee"]?["Order"] == ["chip": "Mine"])
        #expect(layouts["org.example.Coffee"]?["Brew"] == ["chip": "Brew"])
    }

    @Test func invalidLayoutsAreSkipped() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/island/layouts/org.example.Coffee/Good.json", #"{"chip": "ok"}"#)
        try tree.write("share/island/layouts/org.example.Coffee/NotJSON.json", "{chip")
        try tree.write("share/island/layouts/org.example.Coffee/TooLongChip.json", #"{"chip": "far too long for a chip"}"#)
        try tree.write("share/island/layouts/org.example.Coffee/Unknown.json", #"{"colour": "red"}"#)
        let layouts = InstalledLayouts.scan(dataDirectories: [tree.path("share")], logger: logger)
        #expect(layouts["org.example.Coffee"]?.keys.sorted() == ["Good"])
        // Each named, for `Reload`'s reply.
        let found = InstalledLayouts.read(dataDirectories: [tree.path("share")])
        #expect(found.skipped.map { ($0.path as NSString).lastPathComponent } == ["NotJSON.json", "TooLongChip.json", "Unknown.json"])
    }

    @Test func whatIsNoRegularFileIsSkippedWithoutBlocking() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("share/island/layouts/org.example.Coffee/Good.json", #"{"chip": "ok"}"#)
        #expect(mkfifo(tree.path("share/island/layouts/org.example.Coffee/Fifo.json"), 0o600) == 0)
        #expect(mkfifo(tree.path("share/island/layouts/org.example.Fifo"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: tree.path("share/island/layouts/org.example.Coffee/Zero.json"),
            withDestinationPath: "/dev/zero")
        let huge = try tree.write("share/island/layouts/org.example.Coffee/Huge.json", "{}")
        #expect(truncate(huge, 1 << 40) == 0)
        let found = InstalledLayouts.read(dataDirectories: [tree.path("share")])
        #expect(found.layouts.keys.sorted() == ["org.example.Coffee"])
        #expect(found.layouts["org.example.Coffee"]?.keys.sorted() == ["Good"])
        #expect(found.skipped.map(\.reason) == ["not a regular file", "larger than \(InstalledLayouts.maximumFileBytes) bytes", "not a regular file"])
    }
}
