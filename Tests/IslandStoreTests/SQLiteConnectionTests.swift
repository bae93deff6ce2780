import OrderedCollections
import OrderedJSON
import Testing

@testable import IslandStore

/// The store's binding to SQLite, on the statements and values every commit writes.
@Suite struct SQLiteConnectionTests {
    /// Every commit runs the same three statements: each is prepared the first time and then
    /// found again, not prepared anew (which a cache keyed wrongly would do, on every commit).
    @Test func aStatementIsPreparedOnceAndFoundAgain() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        defer { try? store.close() }
        try store.database.sync { (db: SQLiteConnection) throws in
            let first = try db.cachedStatement("SELECT 1")
            let again = try db.cachedStatement("SELECT 1")
            let other = try db.cachedStatement("SELECT 2")
            #expect(first === again)
            #expect(first !== other)
            #expect(try first.step())
            #expect(first.text(0) == "1")
            first.reset()
            #expect(try other.step())
            #expect(other.text(0) == "2")
            other.reset()
        }
    }

    /// A document is bound as the bytes the JSON writer made, not through a `String`: every
    /// byte is stored as text as it was written — multi-byte UTF-8, escapes and an escaped
    /// NUL among them — and reads back as the same document.
    @Test func aDocumentIsStoredAsItsBytes() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        let body: JSONObject = ["title": "Café ☕ 🚲", "quote": "\"a\\b\"", "nul": "x\u{0}y", "line": "one\ntwo"]
        let text = JSON.object(body).serialized()
        try writer.commitNow([.putActivity(id: "a1", app: "org.example.App", state: "active", body: StoredDocument(body))])
        try store.database.sync { (db: SQLiteConnection) throws in
            let row = try db.prepare("SELECT typeof(body), CAST(body AS BLOB) FROM activities WHERE id = 'a1'")
            #expect(try row.step())
            #expect(row.text(0) == "text")
            #expect(row[1] == .blob(text))
            row.reset()
        }
        #expect(try store.load().activities.first?.body == body)
    }
}
