/// The database schema, one named migration per version. Never edit a shipped migration:
/// add the next one, so every older file migrates forward.
enum Schema {
    /// The migrations, in order: each runs once, in a transaction of its own, which also records
    /// its identifier.
    static let migrations: [(identifier: String, sql: String)] = [
        (
            "v1",
            // Ordinary rowid tables (not WITHOUT ROWID): activity bodies reach several KiB, and
            // the rowid keeps first-stored order across upserts for a faithful restore.
            """
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
            """
        ),
        // A layout belongs to its app and, in the system scope, the uid of the extension that
        // registered it: one user's extension must not change how another user's activities of
        // the same app are drawn (or what their tap opens). -1 stands for no uid (the user
        // scope, and every layout stored before), as a primary key's NULLs would never collide.
        (
            "v2",
            """
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
            """
        ),
        // Push tokens (docs/design.md §12): an activity's, revoked with it, and an owner's
        // push-to-start token per activity type, with the timestamp of the last start it made,
        // which orders the pushes that start activities as an activity's orders its updates.
        (
            "v3",
            """
                CREATE TABLE push_tokens (
                    token TEXT PRIMARY KEY NOT NULL,
                    app TEXT NOT NULL,
                    uid INTEGER NOT NULL DEFAULT -1,
                    activity_id TEXT,
                    type TEXT,
                    last_timestamp REAL,
                    CHECK ((activity_id IS NULL) <> (type IS NULL))
                );
            """
        ),
    ]

    /// The table that records the migrations applied. Its name is GRDB's, which earlier
    /// versions of the daemon used: their databases keep their history there.
    static let migrationsTable = "grdb_migrations"

    /// The migrations the database records that this version does not know: it was written by
    /// a newer daemon.
    static func unknownMigrations(_ connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        let known = Set(migrations.map(\.identifier))
        return try appliedMigrations(connection).filter { !known.contains($0) }.sorted()
    }

    /// Applies, in order, each migration the database does not record yet.
    static func migrate(_ connection: SQLiteConnection) throws(SQLiteError) {
        let applied = Set(try appliedMigrations(connection))
        for migration in migrations where !applied.contains(migration.identifier) {
            try connection.inTransaction { () throws(SQLiteError) in
                try connection.execute(migration.sql)
                try connection.prepare("INSERT INTO \(migrationsTable) (identifier) VALUES (?)").execute(migration.identifier)
            }
        }
    }

    private static func appliedMigrations(_ connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        try connection.execute("CREATE TABLE IF NOT EXISTS \(migrationsTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        let rows = try connection.prepare("SELECT identifier FROM \(migrationsTable)")
        var identifiers: [String] = []
        while try rows.step() {
            identifiers.append(rows.text(0) ?? "")
        }
        return identifiers
    }

    /// The `uid` column's value for a layout without one.
    static let noUID: Int64 = -1
}
