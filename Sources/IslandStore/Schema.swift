import GRDB

/// The database schema, one named migration per version. Never edit a shipped migration:
/// add the next one, so every older file migrates forward.
enum Schema {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Ordinary rowid tables (not WITHOUT ROWID): activity bodies reach several KiB, and
            // the rowid keeps first-stored order across upserts for a faithful restore.
            try db.execute(
                sql: """
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
        // A layout belongs to its app and, in the system scope, the uid of the extension that
        // registered it: one user's extension must not change how another user's activities of
        // the same app are drawn (or what their tap opens). -1 stands for no uid (the user
        // scope, and every layout stored before), as a primary key's NULLs would never collide.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE layouts_v2 (
                        app TEXT NOT NULL,
                        uid INTEGER NOT NULL DEFAULT -1,
                        type TEXT NOT NULL,
                        body TEXT,
                        PRIMARY KEY (app, uid, type)
                    );
                    INSERT INTO layouts_v2 (app, uid, type, body) SELECT app, -1, type, body FROM layouts;
                    DROP TABLE layouts;
                    ALTER TABLE layouts_v2 RENAME TO layouts;
                    """)
        }
        // Push tokens (docs/design.md §12): an activity's, revoked with it, and an owner's
        // push-to-start token per activity type, with the timestamp of the last start it made,
        // which orders the pushes that start activities as an activity's orders its updates.
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE push_tokens (
                        token TEXT PRIMARY KEY NOT NULL,
                        app TEXT NOT NULL,
                        uid INTEGER NOT NULL DEFAULT -1,
                        activity_id TEXT,
                        type TEXT,
                        last_timestamp REAL,
                        CHECK ((activity_id IS NULL) <> (type IS NULL))
                    );
                    """)
        }
        return migrator
    }()

    /// The `uid` column's value for a layout without one.
    static let noUID: Int64 = -1
}
