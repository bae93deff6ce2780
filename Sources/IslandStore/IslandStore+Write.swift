import Foundation
import GRDB

extension IslandStore {
    /// Applies `batches`, in order, in one transaction of its own. Returns whether a transaction
    /// ran: batches that reduce to nothing (all empty) touch no file.
    func write(_ batches: some Sequence<[StoreMutation]>) throws(StoreError) -> Bool {
        do {
            return try database.writeWithoutTransaction { db in
                try Result { () throws(StoreError) in try write(batches, in: db) }.get()
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error)")
        }
    }

    /// The same, on `db`, a connection the caller holds (on the database's queue).
    func write(_ batches: some Sequence<[StoreMutation]>, in db: Database) throws(StoreError) -> Bool {
        let mutations = StoreMutation.reduced(batches)
        guard !mutations.isEmpty else { return false }
        guard db.sqliteConnection != nil else { throw closedError }
        do {
            // One transaction per group commit is the writer's hot path: GRDB's own
            // `inTransaction` parses BEGIN and COMMIT anew each time, cached they are not.
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            do {
                try Self.apply(mutations, in: db, now: Date().timeIntervalSince1970)
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                // SQLite may have rolled back already; `rollback` copes with either.
                try? db.rollback()
                throw error
            }
            return true
        } catch let error as DatabaseError {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error.message ?? "\(error.resultCode)")")
        } catch {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error)")
        }
    }
}
