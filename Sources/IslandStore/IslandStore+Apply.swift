import OrderedJSON

extension IslandStore {
    /// Applies `mutations` (already reduced to one per row) inside the caller's transaction.
    /// `now` stamps `updated_at`, once per transaction.
    static func apply(_ mutations: [StoreMutation], in db: SQLiteConnection, now: Double) throws(SQLiteError) {
        for mutation in mutations {
            switch mutation {
            case .putActivity(let id, let app, let state, let body):
                // The row there is updated, and one inserted only if there is none: an upsert
                // (`INSERT … ON CONFLICT DO UPDATE`) first makes the row to insert — a new rowid,
                // the whole record with its body — before it finds the conflict and updates,
                // which is what almost every write of an activity does. The rowid stays, and
                // with it the first-stored order.
                let text = SQLiteText(utf8: body.text)
                try db.cachedStatement("UPDATE activities SET app = ?, state = ?, body = ?, updated_at = ? WHERE id = ?")
                    .execute(app, state, text, now, id)
                if db.changes == 0 {
                    try db.cachedStatement("INSERT INTO activities (id, app, state, body, updated_at) VALUES (?, ?, ?, ?, ?)")
                        .execute(id, app, state, text, now)
                }
            case .deleteActivity(let id):
                try db.cachedStatement("DELETE FROM activities WHERE id = ?").execute(id)
            case .putSetting(let key, let value):
                // As an activity's: updated, inserted only when missing.
                let text = SQLiteText(utf8: value.serialized())
                try db.cachedStatement("UPDATE settings SET value = ? WHERE key = ?").execute(text, key)
                if db.changes == 0 {
                    try db.cachedStatement("INSERT INTO settings (key, value) VALUES (?, ?)").execute(key, text)
                }
            case .deleteSetting(let key):
                try db.cachedStatement("DELETE FROM settings WHERE key = ?").execute(key)
            case .putLayout(let app, let uid, let type, let body):
                try db.cachedStatement(
                    """
                    INSERT INTO layouts (app, uid, type, body) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app, uid, type) DO UPDATE SET body = excluded.body
                    """
                ).execute(app, uid.map(Int64.init) ?? Schema.noUID, type, body)
            case .deleteLayout(let app, let uid, let type):
                try db.cachedStatement("DELETE FROM layouts WHERE app = ? AND uid = ? AND type = ?")
                    .execute(app, uid.map(Int64.init) ?? Schema.noUID, type)
            case .putPushToken(let row):
                try db.cachedStatement(
                    """
                    INSERT INTO push_tokens (token, app, uid, activity_id, type, last_timestamp) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (token) DO UPDATE SET last_timestamp = excluded.last_timestamp
                    """
                ).execute(row.token, row.app, row.uid.map(Int64.init) ?? Schema.noUID, row.activityID, row.type, row.lastTimestamp)
            case .deletePushToken(let token):
                try db.cachedStatement("DELETE FROM push_tokens WHERE token = ?").execute(token)
            }
        }
    }
}
