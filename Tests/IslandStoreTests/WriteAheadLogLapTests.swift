import Foundation
import OrderedCollections
import OrderedJSON
import Testing

@testable import IslandStore

#if canImport(Glibc)
import Glibc
#endif

/// The log's first lap written at open (`WriteAheadLogLap`): SQLite must read the zeros past
/// its last frame as the log's end, before a crash and after one.
@Suite struct WriteAheadLogLapTests {
    let lap = WriteAheadLogLap.bytes(pageSize: 4096, pagesPerCheckpoint: 1000)

    @Test func theLogStartsOneLapLong() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        #expect(try store.pragma("page_size") == "4096")
        #expect(try store.pragma("wal_autocheckpoint") == "1000")
        #expect(try size(of: store.path + "-wal") == lap)
    }

    @Test func whatACrashLeavesIsReadBackThroughTheZeros() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        for n in 1...3 {
            try writer.commitNow([.putActivity(id: "a\(n)", app: "org.example.App", state: "active", body: ["n": .int(n)])])
        }
        // The store still open, as a `kill -9` leaves it: the database and its log, zeros and all.
        let copy = TemporaryDirectory()
        try copyFiles(of: store, to: copy.path)
        let reopened = try IslandStore.open(directory: copy.path)
        let state = try reopened.load()
        #expect(state.activities.map(\.id) == ["a1", "a2", "a3"])
        #expect(try reopened.pragma("integrity_check") == "ok")
        writer.close()
    }

    @Test func laterLapsWriteOverTheFirstWithoutGrowingIt() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        // Well past one checkpoint's worth of pages, so that SQLite starts the log over.
        for n in 0..<1_200 {
            try writer.commitNow([.putActivity(id: "a\(n % 7)", app: "org.example.App", state: "active", body: ["n": .int(n)])])
        }
        #expect(try size(of: store.path + "-wal") == lap)
        let copy = TemporaryDirectory()
        try copyFiles(of: store, to: copy.path)
        let reopened = try IslandStore.open(directory: copy.path)
        let state = try reopened.load()
        #expect(state.activities.count == 7)
        #expect(state.activities.first { $0.id == "a3" }?.body == ["n": 1_193])
        #expect(try reopened.pragma("integrity_check") == "ok")
        writer.close()
    }

    @Test func aLogAlreadyThatLongIsLeftAlone() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/log"
        let bytes = Data((0..<100).map { UInt8($0) })
        #expect(FileManager.default.createFile(atPath: path, contents: bytes))
        #expect(WriteAheadLogLap.reserve(path, length: 50))
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(WriteAheadLogLap.reserve(path, length: 200_000))
        let grown = try #require(FileManager.default.contents(atPath: path))
        #expect(grown.count == 200_000)
        #expect(grown.prefix(100) == bytes)
        #expect(grown.dropFirst(100).allSatisfy { $0 == 0 })
    }

    @Test func onlyARegularFileThatIsThereIsWritten() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let missing = directory.path + "/missing"
        #expect(!WriteAheadLogLap.reserve(missing, length: 4096))
        #expect(!FileManager.default.fileExists(atPath: missing))
        // A FIFO without a reader: the open must not wait for one.
        let fifo = directory.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(!WriteAheadLogLap.reserve(fifo, length: 4096))
        let target = directory.path + "/target"
        #expect(FileManager.default.createFile(atPath: target, contents: Data()))
        #expect(symlink(target, directory.path + "/link") == 0)
        #expect(!WriteAheadLogLap.reserve(directory.path + "/link", length: 4096))
        #expect(try size(of: target) == 0)
    }

    private func size(of path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue)
    }

    private func copyFiles(of store: IslandStore, to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: directory + "/" + IslandStore.fileName + suffix)
        }
    }
}
