import Foundation
import GRDB

extension IslandStore {
    /// Applies `batches`, in order, in one transaction. Returns whether a transaction ran:
    /// batches that reduce to nothing (all empty) touch no file.
    func write(_ batches: some Sequence<[StoreMutation]>) throws(StoreError) -> Bool {
        let mutations = StoreMutation.reduced(batches)
        guard !mutations.isEmpty else { return false }
        do {
            try database.write { db in
                try Self.apply(mutations, in: db, now: Date().timeIntervalSince1970)
            }
            return true
        } catch let error as DatabaseError {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error.message ?? "\(error.resultCode)")")
        } catch {
            throw StoreError(.writeFailed, path: path, message: "commit failed: \(error)")
        }
    }
}
