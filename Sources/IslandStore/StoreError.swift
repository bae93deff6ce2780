/// Why the store could not open, read or write its database. The message names the database
/// file, so an operator reading the daemon's log knows which file to look at.
package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// The file exists but is not an SQLite database (or is encrypted or damaged beyond use).
        case notADatabase
        /// The database was migrated by a newer islandd; this version would misread it.
        case newerSchema
        /// The state directory or the database file could not be created or opened.
        case cannotOpen
        /// A transaction failed; none of its mutations were applied.
        case writeFailed
        /// Reading the stored state failed as a whole (single damaged rows are skipped instead).
        case readFailed
        /// The writer or the database was closed; nothing more is accepted.
        case closed
    }

    package var kind: Kind
    /// The database file (or the state directory when it could not be created).
    package var path: String
    package var message: String

    package init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    package var description: String { "\(path): \(message)" }
}
