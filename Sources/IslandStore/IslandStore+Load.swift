import OrderedJSON

extension IslandStore {
    /// Reads everything stored. A row that cannot be read (bad JSON, wrong column types) is
    /// skipped and listed in `damaged`: one bad row must not keep the daemon from starting
    /// with everything else.
    ///
    /// - Throws: `StoreError` (`.readFailed`) only when the tables themselves cannot be read.
    package func load() throws(StoreError) -> StoredState {
        do {
            return try database.sync { db in
                guard db.isOpen else { throw closedError }
                var state = StoredState()
                // One read transaction: the tables as of one moment.
                try db.inTransaction("BEGIN DEFERRED TRANSACTION") { () throws(SQLiteError) in
                    try loadActivities(db, into: &state)
                    try loadSettings(db, into: &state)
                    try loadLayouts(db, into: &state)
                    try loadPushTokens(db, into: &state)
                }
                return state
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.readFailed, path: path, message: "cannot read the stored state: \(error)")
        }
    }

    private func loadActivities(_ db: SQLiteConnection, into state: inout StoredState) throws(SQLiteError) {
        let row = try db.prepare("SELECT id, app, state, body, updated_at FROM activities ORDER BY rowid")
        while try row.step() {
            let id = Self.text(row[0]) ?? "rowid?"
            guard let app = Self.text(row[1]), let activityState = Self.text(row[2]),
                let body = Self.jsonObject(row[3])
            else {
                state.damaged.append(id)
                continue
            }
            let updatedAt: Double? =
                switch row[4] {
                case .real(let d): d
                case .integer(let i): Double(i)
                default: nil
                }
            state.activities.append(StoredActivity(id: id, app: app, state: activityState, body: body, updatedAt: updatedAt))
        }
    }

    private func loadSettings(_ db: SQLiteConnection, into state: inout StoredState) throws(SQLiteError) {
        let row = try db.prepare("SELECT key, value FROM settings ORDER BY key")
        while try row.step() {
            guard let key = Self.text(row[0]) else {
                state.damaged.append("setting:?")
                continue
            }
            guard let text = Self.text(row[1]), let value = try? JSONParser.parse(text) else {
                state.damaged.append("setting:\(key)")
                continue
            }
            state.settings[key] = value
        }
    }

    private func loadLayouts(_ db: SQLiteConnection, into state: inout StoredState) throws(SQLiteError) {
        let row = try db.prepare("SELECT app, uid, type, body FROM layouts ORDER BY app, uid, type")
        while try row.step() {
            guard let app = Self.text(row[0]), case .integer(let uidValue) = row[1],
                uidValue == Schema.noUID || UInt32(exactly: uidValue) != nil,
                let type = Self.text(row[2]), let body = Self.text(row[3])
            else {
                state.damaged.append("layout:\(Self.text(row[0]) ?? "?")/\(Self.text(row[2]) ?? "?")")
                continue
            }
            state.layouts.append(StoredLayout(app: app, uid: UInt32(exactly: uidValue), type: type, body: body))
        }
    }

    private func loadPushTokens(_ db: SQLiteConnection, into state: inout StoredState) throws(SQLiteError) {
        let row = try db.prepare("SELECT token, app, uid, activity_id, type, last_timestamp FROM push_tokens")
        while try row.step() {
            guard let token = Self.text(row[0]), let app = Self.text(row[1]),
                case .integer(let uidValue) = row[2],
                uidValue == Schema.noUID || UInt32(exactly: uidValue) != nil
            else {
                state.damaged.append("push-token")
                continue
            }
            let lastTimestamp: Double? =
                switch row[5] {
                case .real(let d): d
                case .integer(let i): Double(i)
                default: nil
                }
            state.pushTokens.append(
                StoredPushToken(
                    token: token, app: app, uid: UInt32(exactly: uidValue), activityID: Self.text(row[3]),
                    type: Self.text(row[4]), lastTimestamp: lastTimestamp))
        }
    }

    /// Text from a column, refusing what is not text (a number, NULL, bytes that are not UTF-8).
    private static func text(_ value: SQLiteValue) -> String? {
        switch value {
        case .text(let s): s
        case .blob(let data): String(validating: data, as: UTF8.self)
        default: nil
        }
    }

    private static func jsonObject(_ value: SQLiteValue) -> JSONObject? {
        guard let text = text(value) else { return nil }
        return (try? JSONParser.parse(text))?.objectValue
    }
}
