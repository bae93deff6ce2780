import Foundation
import OrderedJSON
import Testing

@testable import IslandStore

/// In the system scope a registered layout belongs to its app and the uid of the extension
/// that registered it: two users' layouts of one app and type are two rows.
@Suite struct LayoutOwnerTests {
    @Test func layoutsOfOneAppAndTypeAreKeptPerUID() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try writer.commitNow([
            .putLayout(app: "org.example.App", type: "T", body: "user scope"),
            .putLayout(app: "org.example.App", uid: 1000, type: "T", body: "alice"),
            .putLayout(app: "org.example.App", uid: 1001, type: "T", body: "bob"),
            .putLayout(app: "org.example.App", uid: 0, type: "T", body: "root"),
        ])
        #expect(
            try store.load().layouts == [
                StoredLayout(app: "org.example.App", type: "T", body: "user scope"),
                StoredLayout(app: "org.example.App", uid: 0, type: "T", body: "root"),
                StoredLayout(app: "org.example.App", uid: 1000, type: "T", body: "alice"),
                StoredLayout(app: "org.example.App", uid: 1001, type: "T", body: "bob"),
            ])
        try writer.commitNow([
            .deleteLayout(app: "org.example.App", uid: 1001, type: "T"),
            .putLayout(app: "org.example.App", uid: 1000, type: "T", body: "alice 2"),
        ])
        #expect(try store.load().layouts.map(\.body) == ["user scope", "root", "alice 2"])
    }

    @Test func aReductionKeepsOneUIDsWriteFromReplacingAnothers() {
        let reduced = StoreMutation.reduced([
            [
                .putLayout(app: "x", uid: 1000, type: "t", body: "1"),
                .putLayout(app: "x", uid: 1001, type: "t", body: "2"),
                .deleteLayout(app: "x", type: "t"),
            ]
        ])
        #expect(reduced.count == 3)
    }

    /// A database of schema v1 (layouts keyed by app and type alone) keeps its layouts, as
    /// the user scope's (no uid).
    @Test func layoutsOfAVersion1DatabaseComeBackWithoutUID() throws {
        let directory = TemporaryDirectory()
        do {
            let store = try IslandStore.open(directory: directory.path)
            try store.execute(
                sql: """
                    DROP TABLE layouts;
                    CREATE TABLE layouts (app TEXT NOT NULL, type TEXT NOT NULL, body TEXT, PRIMARY KEY (app, type));
                    INSERT INTO layouts (app, type, body) VALUES ('org.example.App', 'T', 'old'), ('org.example.B', 'U', 'older');
                    DELETE FROM grdb_migrations WHERE identifier = 'v2';
                    """)
            try store.close()
        }
        let store = try IslandStore.open(directory: directory.path)
        #expect(
            try store.load().layouts == [
                StoredLayout(app: "org.example.App", type: "T", body: "old"),
                StoredLayout(app: "org.example.B", type: "U", body: "older"),
            ])
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try writer.commitNow([.putLayout(app: "org.example.App", type: "T", body: "new")])
        #expect(try store.load().layouts.map(\.body) == ["new", "older"], "the migrated row is the user scope's")
    }

    @Test func aLayoutRowWithABadUIDIsSkippedAsDamaged() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        try store.execute(
            sql: """
                INSERT INTO layouts (app, uid, type, body) VALUES ('org.example.App', -5, 'T', 'x'), ('org.example.App', 7, 'T', 'fine');
                """)
        let state = try store.load()
        #expect(state.layouts == [StoredLayout(app: "org.example.App", uid: 7, type: "T", body: "fine")])
        #expect(state.damaged == ["layout:org.example.App/T"])
    }
}
