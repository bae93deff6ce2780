import Foundation

extension IslandStore {
    /// Applies `batches`, in order, in one transaction of its own. Returns whether a transaction
    /// ran: batches that reduce to nothing (all empty) touch no file.
    func write(_ batches: some Collection<[StoreMutation]>) throws(StoreError) -> Bool {
        try database.sync { db throws(StoreError) in try write(batches, in: db) }
    }

    /// The same, on `db`, a connection the caller holds (on the database's queue). `syncing`:
    /// the commit waits for the disk (`SQLiteConnection.setSyncsCommits`); otherwise it survives
    /// the process's death but not a power cut until a later commit that syncs.
    func write(_ batches: some Collection<[StoreMutation]>, in db: SQLiteConnection, syncing: Bool = true) throws(StoreError) -> Bool {
        let mutations = StoreMutation.reduced(batches)
        guard !mutations.isEmpty else { return false }
        guard db.isOpen else { throw closedError }
        do {
            try db.setSyncsCommits(syncing)
            // One transaction per group commit, on statements prepared once (BEGIN and COMMIT
            // among them): the writer's hot path.
            try db.inTransaction { () throws(SQLiteError) in try Self.apply(mutations, in: db, now: Date().timeIntervalSince1970) }
            return true
        } catch {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error.message)")
        }
    }
}
