import CSQLite
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

    /// A run's texts are copied into the statement's own memory, which SQLite reads in place:
    /// texts larger than that memory at first (which it grows to before it binds), empty texts
    /// (text, not NULL) and NULs within survive; and what one run bound is unbound when it
    /// ends, so a later run of the statement with nothing bound reads NULLs, not the memory
    /// another run has since written over.
    @Test func textsAreBoundFromTheStatementsMemoryForOneRunOnly() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        defer { try? store.close() }
        let large = String(repeating: "é☕x", count: 40_000)
        try store.database.sync { (db: SQLiteConnection) throws in
            try db.execute("CREATE TABLE t (a TEXT, b TEXT, c TEXT)")
            let insert = try db.cachedStatement("INSERT INTO t (a, b, c) VALUES (?, ?, ?)")
            try insert.execute("", large, SQLiteText(utf8: Array("n\u{0}l".utf8)))
            try insert.execute("second", "small", Optional<String>.none)
            try insert.execute()
            let rows = try db.prepare("SELECT a, typeof(a), b, CAST(c AS BLOB), typeof(c) FROM t ORDER BY rowid")
            #expect(try rows.step())
            #expect(rows[0] == .text("") && rows.text(1) == "text" && rows[2] == .text(large))
            #expect(rows[3] == .blob(Array("n\u{0}l".utf8)))
            #expect(try rows.step())
            #expect(rows[0] == .text("second") && rows[2] == .text("small") && rows.text(4) == "null")
            #expect(try rows.step())
            #expect(rows[0] == .null && rows[2] == .null && rows[3] == .null)
            #expect(try !rows.step())
        }
    }

    /// SQLite keeps no statistics of its memory, which would take a global lock for each of
    /// its allocations: set before the store's first connection.
    @Test func sqliteCountsNoMemory() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try writer.commitNow([.putActivity(id: "a", app: "x", state: "active", body: ["v": 1])])
        #expect(sqlite3_memory_used() == 0)
        #expect(sqlite3_memory_highwater(0) == 0)
    }
}
