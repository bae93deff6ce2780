import Foundation
import OrderedJSON
import Testing

@testable import IslandStore

@Suite struct OpenAndLoadTests {
    @Test func commitsAreDurableBeforeTheyAreAcknowledged() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        #expect(try store.pragma("journal_mode") == "wal")
        #expect(try store.pragma("synchronous") == "2")  // FULL
        #expect(try store.pragma("busy_timeout").flatMap { Int($0) } ?? 0 > 0)
    }

    @Test func createsTheStateDirectoryPrivate() throws {
        let directory = TemporaryDirectory()
        let nested = directory.path + "/state/island"
        let store = try IslandStore.open(directory: nested)
        #expect(store.path == nested + "/islandd.sqlite3")
        #expect(FileManager.default.fileExists(atPath: store.path))
        let attributes = try FileManager.default.attributesOfItem(atPath: nested)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test func theDatabaseIsPrivateInADirectoryOthersMayRead() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.path, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        let store = try IslandStore.open(directory: directory.path)
        try store.execute(sql: "CREATE TABLE probe(x)")  // makes the -wal file appear
        for file in [store.path, store.path + "-wal"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
        }
        #expect(!store.foundEmptyFile)
    }

    @Test func aDatabaseAnEarlierVersionLeftReadableIsNarrowed() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/islandd.sqlite3"
        try IslandStore.open(directory: directory.path).close()
        #expect(chmod(path, 0o644) == 0)
        let store = try IslandStore.open(directory: directory.path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(!store.foundEmptyFile)
    }

    @Test func anEmptyFileIsTakenAsEmptyButReported() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory.path + "/islandd.sqlite3", contents: Data()))
        let store = try IslandStore.open(directory: directory.path)
        #expect(store.foundEmptyFile)
        #expect(try store.load().activities.isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsNamed() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/islandd.sqlite3"
        try Data(String(repeating: "this is not an SQLite database\n", count: 200).utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try IslandStore.open(directory: directory.path)
            Issue.record("opened a text file as a database")
        } catch {
            #expect(error.kind == .notADatabase)
            #expect(error.path == path)
            #expect(error.description.hasPrefix(path + ": "))
        }
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let directory = TemporaryDirectory()
        do {
            let store = try IslandStore.open(directory: directory.path)
            // A migration this version does not know (v2 is a real one now).
            try store.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999')")
            try store.close()
        }
        do {
            _ = try IslandStore.open(directory: directory.path)
            Issue.record("opened a database from a newer schema")
        } catch {
            #expect(error.kind == .newerSchema)
            #expect(error.description.hasPrefix(directory.path + "/islandd.sqlite3: "))
            #expect(error.message.contains("v999"))
        }
    }

    @Test func damagedRowsAreSkippedAndReported() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try writer.commitNow([
            .putActivity(id: "good1", app: "x.y", state: "active", body: ["ok": true]),
            .putSetting(key: "good", value: ["ok": true]),
            .putLayout(app: "x.y", type: "T", body: "fine"),
        ])
        try store.execute(
            sql: """
                INSERT INTO activities (id, app, state, body) VALUES ('truncated', 'x.y', 'active', '{"a":');
                INSERT INTO activities (id, app, state, body) VALUES ('notAnObject', 'x.y', 'active', '[1, 2]');
                INSERT INTO activities (id, app, state, body) VALUES ('badBytes', 'x.y', 'active', X'FFFE7B7D');
                INSERT INTO activities (id, app, state, body) VALUES ('badState', 'x.y', X'80', '{}');
                INSERT INTO settings (key, value) VALUES ('broken', 'tru');
                INSERT INTO settings (key, value) VALUES ('missing', NULL);
                INSERT INTO layouts (app, type, body) VALUES ('x.y', 'Null', NULL);
                """)
        try writer.commitNow([.putActivity(id: "good2", app: "x.y", state: "ended", body: [:])])

        let state = try store.load()
        #expect(state.activities.map(\.id) == ["good1", "good2"])
        #expect(state.settings == ["good": ["ok": true]])
        #expect(state.layouts == [StoredLayout(app: "x.y", type: "T", body: "fine")])
        #expect(
            state.damaged == [
                "truncated", "notAnObject", "badBytes", "badState",
                "setting:broken", "setting:missing", "layout:x.y/Null",
            ])
    }
}
