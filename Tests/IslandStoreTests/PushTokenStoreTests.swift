import Foundation
import OrderedJSON
import OrderedCollections
import Testing

@testable import IslandStore

/// Push tokens (schema v3): an activity's and an owner's push-to-start tokens, stored and read
/// back; and a database written before they existed.
@Suite struct PushTokenStoreTests {
    @Test func tokensRoundTripAndTheLastStartIsUpdatedInPlace() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        let activityToken = StoredPushToken(token: "island/d/org.example.A/aa", app: "org.example.A", activityID: "A1")
        let startToken = StoredPushToken(token: "island/d/org.example.A/bb", app: "org.example.A", uid: 1000, type: "Delivery")
        try writer.commitNow([.putPushToken(activityToken), .putPushToken(startToken)])
        #expect(Set(try store.load().pushTokens) == [activityToken, startToken])

        var started = startToken
        started.lastTimestamp = 1_700_000_000.5
        try writer.commitNow([.putPushToken(started), .deletePushToken(token: activityToken.token)])
        #expect(try store.load().pushTokens == [started])
    }

    @Test func aRowThatIsNeitherAnActivitysNorAStartTokenCannotBeStored() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        #expect(throws: StoreError.self) {
            try writer.commitNow([.putPushToken(StoredPushToken(token: "t", app: "org.example.A", activityID: "A1", type: "T"))])
        }
        #expect(throws: StoreError.self) {
            try writer.commitNow([.putPushToken(StoredPushToken(token: "t", app: "org.example.A"))])
        }
    }

    /// A database made by the daemon before push tokens (schema v2, built here as that version
    /// wrote it) opens, keeps its activities, and takes tokens.
    @Test func aVersion2DatabaseOpensAndMigrates() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        do {
            let connection = try SQLiteConnection(path: directory.path + "/islandd.sqlite3")
            try connection.execute(
                """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations (identifier) VALUES ('v1'), ('v2');
                CREATE TABLE activities (id TEXT PRIMARY KEY NOT NULL, app TEXT NOT NULL, state TEXT NOT NULL, body TEXT NOT NULL, updated_at REAL);
                CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT);
                CREATE TABLE layouts (app TEXT NOT NULL, uid INTEGER NOT NULL DEFAULT -1, type TEXT NOT NULL, body TEXT, PRIMARY KEY (app, uid, type));
                INSERT INTO activities (id, app, state, body, updated_at) VALUES ('A1', 'org.example.A', 'active', '{"id":"A1"}', 5);
                INSERT INTO settings (key, value) VALUES ('manager', '{}');
                """)
        }
        let store = try IslandStore.open(directory: directory.path)
        let loaded = try store.load()
        #expect(loaded.activities.map(\.id) == ["A1"])
        #expect(loaded.settings["manager"] == .object([:]))
        #expect(loaded.pushTokens == [])
        #expect(loaded.damaged == [])
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        let token = StoredPushToken(token: "island/d/org.example.A/cc", app: "org.example.A", activityID: "A1")
        try writer.commitNow([.putPushToken(token)])
        #expect(try store.load().pushTokens == [token])
    }
}
