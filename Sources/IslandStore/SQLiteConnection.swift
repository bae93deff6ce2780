import CSQLite
import Dispatch

/// Why SQLite refused: its primary result code (`SQLITE_BUSY`, `SQLITE_NOTADB`, …) and its
/// message.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String

    var description: String { message }
}

/// A column's value as SQLite stores it.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// What a statement's `?` can stand for.
protocol SQLiteBindable {
    /// Bytes the value copies into the run's arena to bind (text); 0 for one bound by value.
    var arenaBytes: Int { get }
    /// Binds the value to the parameter at `index` (1-based), text through `arena`; returns
    /// SQLite's result code.
    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32
}

extension SQLiteBindable {
    var arenaBytes: Int { 0 }
}

extension String: SQLiteBindable {
    var arenaBytes: Int { utf8.count }

    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32 {
        var text = self
        // Every byte, NULs included; an empty string is text, not NULL.
        return text.withUTF8 { arena.bindText(UnsafeRawBufferPointer($0), to: statement, at: index) }
    }
}

/// Text the caller wrote as UTF-8 bytes (a stored document, which the JSON writer makes of
/// Swift strings), bound as they are: no `String` made of them first, which copied and checked
/// every byte of every document written.
struct SQLiteText: SQLiteBindable {
    let utf8: [UInt8]

    var arenaBytes: Int { utf8.count }

    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32 {
        utf8.withUnsafeBytes { arena.bindText($0, to: statement, at: index) }
    }
}

extension Int64: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Double: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32 { sqlite3_bind_double(statement, index, self) }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    var arenaBytes: Int { self?.arenaBytes ?? 0 }

    func bind(to statement: OpaquePointer, at index: Int32, arena: inout SQLiteArena) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index, arena: &arena)
        case .none: sqlite3_bind_null(statement, index)
        }
    }
}

/// A statement's own memory for the text of one run's arguments, which SQLite reads where it
/// lies (`SQLITE_STATIC`) instead of copying each value into an allocation of its own
/// (`SQLITE_TRANSIENT`: a `malloc` and a `free` per text bound, ~3,500 instructions of a
/// lone commit's ~60,000). Sized before a run binds anything, for all its arguments, so it
/// never moves while SQLite holds pointers into it; the run clears its bindings when it ends,
/// so none outlives it.
struct SQLiteArena: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private var used = 0

    init(capacity: Int = 1024) {
        self.capacity = max(capacity, 1)
        base = .allocate(byteCount: self.capacity, alignment: 1)
    }

    deinit { base.deallocate() }

    /// Makes room for `count` bytes of a new run: before it binds, so nothing points here.
    mutating func startRun(needing count: Int) {
        used = 0
        guard count > capacity else { return }
        base.deallocate()
        capacity = max(count, capacity * 2)
        base = .allocate(byteCount: capacity, alignment: 1)
    }

    /// Copies `bytes` here and binds them as text. A zero-length text gets a pointer too (to
    /// the arena): SQLite takes a null one for NULL.
    mutating func bindText(_ bytes: UnsafeRawBufferPointer, to statement: OpaquePointer, at index: Int32) -> Int32 {
        precondition(bytes.count <= capacity - used, "the run's arguments were measured before they were bound")
        let target = base + used
        if let source = bytes.baseAddress, !bytes.isEmpty { target.copyMemory(from: source, byteCount: bytes.count) }
        used += bytes.count
        return sqlite3_bind_text(statement, index, target.assumingMemoryBound(to: CChar.self), Int32(bytes.count), SQLiteStatement.static)
    }
}

/// SQLite's process-wide settings, made once before its first connection (after, SQLite
/// refuses them, and keeps its own). Without statistics of its memory (which nothing here
/// reads), SQLite takes no global mutex for each of its allocations: ~20 locks and unlocks
/// in a lone commit.
private let sqliteConfigured: Void = {
    _ = island_sqlite3_config_memstatus(0)
}()

/// One connection to an SQLite database (the C library, Debian's libsqlite3), with the
/// statements it runs again and again prepared once. Not thread-safe, and opened without
/// SQLite's own mutexes: it is used on one serial queue only (`DatabaseQueue`).
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// The statements prepared once, by the address of their text: a handful, compared one by
    /// one, where hashing each statement's text (a few hundred bytes) cost more than running
    /// an update's commit through the rest of this file.
    private var cache: [(sql: UnsafeRawPointer, statement: SQLiteStatement)] = []
    /// Whether a commit waits for the disk (`PRAGMA synchronous = FULL`) rather than only for
    /// the log's write (`NORMAL`), as last set by `setSyncsCommits`; the store opens with FULL.
    private(set) var syncsCommits = true

    /// Opens `path` for reading and writing, creating an empty database when there is no file.
    /// SQLite reads nothing yet: a file that is not a database fails at the first statement.
    init(path: String) throws(SQLiteError) {
        _ = sqliteConfigured
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(handle)
            throw SQLiteError(code: code & 0xff, message: message)
        }
        self.handle = handle
    }

    deinit {
        cache.forEach { $0.statement.finalize() }
        sqlite3_close(handle)
    }

    /// Rows the last INSERT, UPDATE or DELETE to end changed (`sqlite3_changes`).
    var changes: Int32 { handle.map { sqlite3_changes($0) } ?? 0 }

    /// Whether `close()` has not run yet: SQLite must never be handed a closed connection.
    var isOpen: Bool { handle != nil }

    /// Whether a transaction is open (SQLite is out of autocommit mode).
    var isInTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// How long a statement waits for another connection's lock before failing with
    /// `SQLITE_BUSY`.
    func setBusyTimeout(seconds: Double) throws(SQLiteError) {
        let milliseconds = (seconds * 1000).rounded()
        let bounded = milliseconds.isNaN ? 0 : Int32(min(max(milliseconds, 0), Double(Int32.max)))
        try check(sqlite3_busy_timeout(try openHandle(), bounded))
    }

    /// Runs `sql`, one statement or several separated by semicolons, ignoring any rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let handle = try openHandle()
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code & 0xff, message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code)))
        }
    }

    /// The first column of the first row of `sql`, as text (SQLite converts numbers), or nil
    /// when there is no row or the value is NULL.
    func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// `sql` prepared for this one use; finalized when the statement is released.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        let handle = try openHandle()
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil))
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in \(sql)") }
        return SQLiteStatement(statement)
    }

    /// `sql` prepared the first time it is asked for and kept until `close()`: for the
    /// statements every transaction runs. A literal's text is at one address for the life of
    /// the program, which is what it is looked up by.
    func cachedStatement(_ sql: StaticString) throws(SQLiteError) -> SQLiteStatement {
        precondition(sql.hasPointerRepresentation, "a statement's text is a string literal")
        let key = UnsafeRawPointer(sql.utf8Start)
        for entry in cache where entry.sql == key { return entry.statement }
        let handle = try openHandle()
        var statement: OpaquePointer?
        try check(
            sqlite3_prepare_v2(handle, UnsafeRawPointer(sql.utf8Start).assumingMemoryBound(to: CChar.self), Int32(sql.utf8CodeUnitCount), &statement, nil))
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in \(sql)") }
        let prepared = SQLiteStatement(statement)
        cache.append((key, prepared))
        return prepared
    }

    /// Makes the following commits wait for the disk (`synchronous = FULL`: the log's
    /// `fdatasync` in every commit) or not (`NORMAL`: in WAL mode a commit is then written to
    /// the log and survives the process's death, `kill -9`, but the last ones may be lost with
    /// the machine's power until the next commit that syncs, or a checkpoint, syncs the log —
    /// which holds every commit before it). Changed only when it differs: a statement each
    /// time the kind of commit changes, none while it does not. Outside a transaction only.
    func setSyncsCommits(_ syncs: Bool) throws(SQLiteError) {
        guard syncs != syncsCommits else { return }
        try cachedStatement(syncs ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL").execute()
        syncsCommits = syncs
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func inTransaction<T>(_ begin: StaticString = "BEGIN IMMEDIATE TRANSACTION", _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try cachedStatement(begin).execute()
        do {
            let result = try body()
            try cachedStatement("COMMIT TRANSACTION").execute()
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// Rolls back the open transaction, if SQLite has not already rolled it back itself (as it
    /// does after some errors).
    func rollback() {
        if isInTransaction { try? execute("ROLLBACK TRANSACTION") }
    }

    /// Finalizes the cached statements and closes the connection; later uses fail.
    func close() throws(SQLiteError) {
        guard let handle else { return }
        cache.forEach { $0.statement.finalize() }
        cache = []
        try check(sqlite3_close(handle))
        self.handle = nil
    }

    private func openHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        return handle
    }

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code != SQLITE_OK else { return }
        throw SQLiteError(code: code & 0xff, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code)))
    }
}

/// A prepared statement. Run it with `execute` for its effect, or `step` through its rows and
/// read their columns. A run that reaches its end, or fails, resets the statement for the next.
final class SQLiteStatement {
    private var handle: OpaquePointer?

    /// SQLite reads a bound value where it lies until it is bound again or cleared.
    static var `static`: sqlite3_destructor_type? { nil }
    /// The text of the current run's arguments (`SQLiteArena`).
    private var arena = SQLiteArena()

    fileprivate init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { finalize() }

    fileprivate func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    /// Binds `arguments` to the statement's parameters in order and runs it to its end. A pack,
    /// not a variadic array of existentials: nothing is allocated or boxed per run, and each
    /// argument binds through its own type's code.
    func execute<each Argument: SQLiteBindable>(_ arguments: repeat each Argument) throws(SQLiteError) {
        let handle = try liveHandle()
        var needed = 0
        for argument in repeat each arguments { needed += argument.arenaBytes }
        arena.startRun(needing: needed)
        // What is bound points into the arena: unbound when the run ends, whichever way, so
        // that no later run (nor a `step` without binding) reads what the arena holds then.
        defer { sqlite3_clear_bindings(handle) }
        var index: Int32 = 0
        for argument in repeat each arguments {
            index += 1
            try check(argument.bind(to: handle, at: index, arena: &arena))
        }
        while try step() {}
    }

    /// Moves to the next row: true when there is one, false at the end.
    func step() throws(SQLiteError) -> Bool {
        let handle = try liveHandle()
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        case let code:
            let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            throw SQLiteError(code: code & 0xff, message: message)
        }
    }

    /// Ends a run before its last row, releasing what it holds.
    func reset() {
        sqlite3_reset(handle)
    }

    /// The current row's value in column `index` (0-based).
    subscript(index: Int32) -> SQLiteValue {
        guard let handle else { return .null }
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT: return .text(text(index) ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// The current row's value in column `index` as SQLite converts it to text (numbers
    /// included), with every byte; nil for NULL.
    func text(_ index: Int32) -> String? {
        guard let handle, let text = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private func liveHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the statement is finalized") }
        return handle
    }

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code != SQLITE_OK, let handle else { return }
        throw SQLiteError(code: code & 0xff, message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))
    }
}

/// The store's one connection and the serial queue it is used on: every use, from whichever
/// thread, runs on that queue, so the connection never sees two threads at once. A Dispatch
/// queue of its own rather than the Swift concurrency pool, because SQLite's calls and fsyncs
/// block the thread they run on.
final class DatabaseQueue: @unchecked Sendable {  // `connection` is touched only on `queue`
    private let queue: DispatchQueue
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection, label: String) {
        self.connection = connection
        self.queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue and waits for it.
    func sync<T, E: Error>(_ body: (SQLiteConnection) throws(E) -> T) throws(E) -> T {
        try queue.sync { Result { () throws(E) in try body(connection) } }.get()
    }

    /// Queues `body` and returns at once.
    func async(_ body: @escaping @Sendable (SQLiteConnection) -> Void) {
        queue.async { body(self.connection) }
    }
}
