import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's SQLite database (`islandd.sqlite3` in the state directory).
///
/// The store knows rows, not activities: the daemon maps its model to `StoreMutation`s and
/// `StoredState` back. Read the state once with `load()` at start-up; write through a
/// `StoreWriter`.
package final class IslandStore: Sendable {
    /// The database file's name inside the state directory.
    package static let fileName = "islandd.sqlite3"

    /// The database file.
    package let path: String
    /// The file was there but empty (zero bytes): SQLite takes that as a new database, so the
    /// daemon starts with nothing, and says so, since something else emptied the file.
    package let foundEmptyFile: Bool
    let database: DatabaseQueue

    private init(path: String, database: DatabaseQueue, foundEmptyFile: Bool) {
        self.path = path
        self.database = database
        self.foundEmptyFile = foundEmptyFile
    }

    /// Opens (creating when needed) the database in `directory`, creating the directory with
    /// mode 0700 when it is missing, and migrates it to the current schema.
    ///
    /// - Parameter busyTimeout: how long a write waits for another connection's lock (another
    ///   process holding the file) before failing.
    /// - Throws: `StoreError` naming the file: `.notADatabase`, `.newerSchema`, `.cannotOpen`.
    package static func open(directory: String, busyTimeout: Double = 5) throws(StoreError) -> IslandStore {
        do {
            // Activity content can be private; only the daemon's user may read the directory.
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.cannotOpen, path: directory, message: "cannot create the state directory: \(error)")
        }
        let path = directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
        let foundEmptyFile = try createPrivately(path)

        do {
            let connection = try SQLiteConnection(path: path)
            try connection.setBusyTimeout(seconds: busyTimeout)
            // The daemon is the only user of its database while it runs, so it keeps it locked
            // rather than take and release the WAL's locks (six fcntl calls) in every commit; set
            // before WAL is, the index of the log is kept in memory, with no -shm file to map.
            // Another process opening the database meanwhile (a second daemon on the same state
            // directory) waits `busyTimeout` and fails, as it should.
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            // WAL makes a commit one sequential append to the log instead of rewriting pages
            // twice. The first statement that reads the file: one that is no database fails here.
            guard try connection.text("PRAGMA journal_mode = WAL") == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "SQLite would not keep a write-ahead log")
            }
            // A mutation is acknowledged only after its commit, and the acknowledgement is a
            // promise that it survives a crash. With WAL, NORMAL survives `kill -9` but can
            // lose the last commits on power loss; FULL syncs the log at every commit. Group
            // commit in StoreWriter pays that fsync once for many acknowledgements. A group
            // of commits nobody is told of may go without it (`StoreWriter.commit(_:syncing:)`,
            // docs/design.md §8).
            try connection.execute("PRAGMA synchronous = FULL")
            let unknown = try Schema.unknownMigrations(connection)
            guard unknown.isEmpty else {
                throw StoreError(
                    .newerSchema, path: path,
                    message: "the database was written by a newer islandd (schema \(unknown.joined(separator: ", "))); "
                        + "refusing to use it rather than misread it")
            }
            try Schema.migrate(connection)
            // The migration's transaction made the log; its first lap is written now rather
            // than grown commit by commit (`WriteAheadLogLap`).
            if let pageSize = try connection.text("PRAGMA page_size").flatMap({ Int($0) }),
                let pages = try connection.text("PRAGMA wal_autocheckpoint").flatMap({ Int($0) }), pages > 0
            {
                WriteAheadLogLap.reserve(path + "-wal", length: WriteAheadLogLap.bytes(pageSize: pageSize, pagesPerCheckpoint: pages))
            }
            // One writer, no concurrent readers (the daemon reads once at start): one
            // connection on one queue.
            return IslandStore(path: path, database: DatabaseQueue(connection, label: "islandd.store"), foundEmptyFile: foundEmptyFile)
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError where error.code == SQLITE_NOTADB {
            throw StoreError(.notADatabase, path: path, message: "not an SQLite database (\(error.message))")
        } catch {
            throw StoreError(.cannotOpen, path: path, message: "cannot open the database: \(error)")
        }
    }

    /// Creates the database file readable by its owner alone, whatever the directory's mode
    /// and the umask (SQLite would make it 0644, and its -wal and -shm files take the
    /// database's mode), and narrows a file an earlier version made wider. Returns whether
    /// the file was there and empty.
    private static func createPrivately(_ path: String) throws(StoreError) -> Bool {
        var info = stat()
        if lstat(path, &info) != 0 {
            let fd = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 || errno == EEXIST else {
                throw StoreError(.cannotOpen, path: path, message: "cannot create the database: \(String(cString: strerror(errno)))")
            }
            if fd >= 0 { Glibc.close(fd) }
            return false
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(.cannotOpen, path: path, message: "not a regular file (a symbolic link or another kind of file)")
        }
        for file in [path, path + "-wal", path + "-shm"] where lstat(file, &info) == 0 && info.st_mode & 0o077 != 0 {
            _ = chmod(file, info.st_mode & 0o700)
        }
        _ = lstat(path, &info)
        return info.st_size == 0
    }

    /// What a read or write after `close()` fails with. Every use checks first, on the
    /// database's queue, where `close()` also runs: SQLite must not be handed a closed
    /// connection.
    var closedError: StoreError {
        StoreError(.closed, path: path, message: "the database is closed")
    }

    /// Closes the database. Later reads and writes fail with a `StoreError` (`.closed`).
    package func close() throws(StoreError) {
        do {
            try database.sync { connection throws(SQLiteError) in try connection.close() }
        } catch {
            throw StoreError(.cannotOpen, path: path, message: "cannot close the database: \(error)")
        }
    }

    /// Runs raw SQL; tests use it to inject failures and damaged rows.
    func execute(sql: String) throws {
        try database.sync { connection throws(SQLiteError) in
            try connection.inTransaction { () throws(SQLiteError) in try connection.execute(sql) }
        }
    }

    /// The value of a pragma, for tests that check durability settings.
    func pragma(_ name: String) throws -> String? {
        try database.sync { connection throws(SQLiteError) in try connection.text("PRAGMA \(name)") }
    }
}
