import GRDB

/// The database schema, one named migration per version. Never edit a shipped migration:
/// add the next one, so every older file migrates forward.
enum Schema {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Ordinary rowid tables (not WITHOUT ROWID): activity bodies reach several KiB, and
            // the rowid keeps first-stored order across upserts for a faithful restore.
            try db.execute(sql: """
                CREATE TABLE activities (
                    id TEXT PRIMARY KEY NOT NULL,
                    app TEXT NOT NULL,
                    state TEXT NOT NULL,
                    body TEXT NOT NULL,
                    updated_at REAL
                );
                CREATE TABLE settings (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT
                );
                CREATE TABLE layouts (
                    app TEXT NOT NULL,
                    type TEXT NOT NULL,
                    body TEXT,
                    PRIMARY KEY (app, type)
                );
                """)
        }
        return migrator
    }()
}
