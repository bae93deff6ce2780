package import OrderedJSON
import OrderedCollections

/// One change to the stored state. Every mutation replaces or removes a whole row, so within a
/// batch only the last mutation of each row matters.
package enum StoreMutation: Sendable, Hashable {
    /// Inserts or replaces an activity. `body` is the whole activity as the daemon models it;
    /// the store keeps it as compact JSON and does not look inside.
    case putActivity(id: String, app: String, state: String, body: StoredDocument)
    case deleteActivity(id: String)
    /// Inserts or replaces a user setting or a per-app budget document.
    case putSetting(key: String, value: JSON)
    case deleteSetting(key: String)
    /// Inserts or replaces a registered layout; `body` is stored as given. `uid` is the
    /// registering extension's in the system scope, nil in the user scope.
    case putLayout(app: String, uid: UInt32? = nil, type: String, body: String)
    case deleteLayout(app: String, uid: UInt32? = nil, type: String)
    /// Inserts or replaces a push token.
    case putPushToken(StoredPushToken)
    case deletePushToken(token: String)
}

extension StoreMutation {
    /// The row a mutation writes, so a batch can be reduced to its last write per row.
    enum RowKey: Hashable {
        case activity(String)
        case setting(String)
        case layout(app: String, uid: UInt32?, type: String)
        case pushToken(String)
    }

    var rowKey: RowKey {
        switch self {
        case .putActivity(let id, _, _, _), .deleteActivity(let id): .activity(id)
        case .putSetting(let key, _), .deleteSetting(let key): .setting(key)
        case .putLayout(let app, let uid, let type, _), .deleteLayout(let app, let uid, let type): .layout(app: app, uid: uid, type: type)
        case .putPushToken(let row): .pushToken(row.token)
        case .deletePushToken(let token): .pushToken(token)
        }
    }

    /// The mutations that decide the outcome of applying `batches` in order: the last one per
    /// row. Rows are independent, so dropping superseded writes cannot change the result, and a
    /// producer pushing many updates to one activity costs one row write per transaction.
    /// A collection, not any sequence: the lone batch's case looks at it before going over it.
    static func reduced(_ batches: some Collection<[StoreMutation]>) -> [StoreMutation] {
        // A lone commit, the usual case between bursts: one batch of a few rows, each written
        // once, is already its own reduction — kept as it is, with no key made or compared
        // through a copy (~4,500 instructions of a lone commit's ~60,000 on the writer).
        var iterator = batches.makeIterator()
        if let first = iterator.next() {
            if iterator.next() == nil, first.count <= linearReductionLimit, rowsAreDistinct(first) { return first }
        } else {
            return []
        }
        return reducedInGeneral(batches)
    }

    /// Whether no two of `batch`'s mutations write the same row.
    private static func rowsAreDistinct(_ batch: [StoreMutation]) -> Bool {
        for later in batch.indices.dropFirst() {
            for earlier in batch.indices[..<later] where batch[earlier].writesSameRow(as: batch[later]) { return false }
        }
        return true
    }

    /// Which table a mutation writes.
    private enum Table { case activities, settings, layouts, pushTokens }

    private var table: Table {
        switch self {
        case .putActivity, .deleteActivity: .activities
        case .putSetting, .deleteSetting: .settings
        case .putLayout, .deleteLayout: .layouts
        case .putPushToken, .deletePushToken: .pushTokens
        }
    }

    /// Whether the two write the same row (`rowKey`s equal), compared in place. Two of
    /// different tables are told apart first, before the pair is matched, which copies both
    /// (a retain and a release of each of their strings and documents; a channel message's
    /// activity and budget rows: 961 instructions a commit, 625 so).
    func writesSameRow(as other: StoreMutation) -> Bool {
        guard table == other.table else { return false }
        return switch (self, other) {
        case (.putActivity(let a, _, _, _), .putActivity(let b, _, _, _)), (.putActivity(let a, _, _, _), .deleteActivity(let b)),
            (.deleteActivity(let a), .putActivity(let b, _, _, _)), (.deleteActivity(let a), .deleteActivity(let b)):
            a == b
        case (.putSetting(let a, _), .putSetting(let b, _)), (.putSetting(let a, _), .deleteSetting(let b)),
            (.deleteSetting(let a), .putSetting(let b, _)), (.deleteSetting(let a), .deleteSetting(let b)):
            a == b
        case (.putPushToken(let a), .putPushToken(let b)): a.token == b.token
        case (.putPushToken(let a), .deletePushToken(let b)): a.token == b
        case (.deletePushToken(let a), .putPushToken(let b)): a == b.token
        case (.deletePushToken(let a), .deletePushToken(let b)): a == b
        case (.putLayout, _), (.deleteLayout, _): rowKey == other.rowKey
        default: false
        }
    }

    private static func reducedInGeneral(_ batches: some Collection<[StoreMutation]>) -> [StoreMutation] {
        // Where each row's last write is (its batch, its place there), in the order of the
        // rows' first writes: a mutation is copied into the result only if it is kept.
        // Copying it into its row's place as it was read (retaining its three strings and its
        // document, releasing the one it superseded) cost ~280 instructions per update on the
        // writer.
        var read: [[StoreMutation]] = []
        var kept: [(batch: Int, index: Int)] = []
        // A group holds a few rows, often one activity written many times: comparing their
        // keys costs less than hashing them, until there are many.
        var keys: [RowKey] = []
        var index: [RowKey: Int]?
        for batch in batches {
            let batchIndex = read.count
            read.append(batch)
            for mutationIndex in batch.indices {
                let key = batch[mutationIndex].rowKey
                let position = if let index { index[key] } else { keys.firstIndex(of: key) }
                if let position {
                    kept[position] = (batchIndex, mutationIndex)
                    continue
                }
                kept.append((batchIndex, mutationIndex))
                if index != nil {
                    index![key] = kept.count - 1
                } else {
                    keys.append(key)
                    if keys.count > linearReductionLimit {
                        index = Dictionary(uniqueKeysWithValues: zip(keys, keys.indices))
                    }
                }
            }
        }
        return kept.map { read[$0.batch][$0.index] }
    }

    /// Rows a reduction compares one by one before it hashes them.
    static let linearReductionLimit = 16
}

/// What writes a stored document's compact JSON text: a value that knows how (an activity),
/// kept as it is until the document is written.
package protocol StoredText: Sendable {
    var jsonText: [UInt8] { get }
}

/// A JSON object the store writes, built when it is written: on the writer thread rather than
/// the caller's, and only if no later write of the same row in the transaction supersedes it —
/// a producer streaming updates to one activity has its document built once per commit.
package struct StoredDocument: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// A value rather than a closure that captures it: an activity (one reference) is held
    /// inline, with nothing allocated for it on every update.
    private let source: any StoredText

    private struct Tree: StoredText {
        let object: JSONObject
        var jsonText: [UInt8] { JSON.object(object).serialized() }
    }

    package init(_ object: JSONObject) {
        source = Tree(object: object)
    }

    /// `source.jsonText` runs on the writer thread, at most once per write, and spares a
    /// document written as text from being built as a tree.
    package init(text source: some StoredText) {
        self.source = source
    }

    package init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(JSONObject(uniqueKeysWithValues: elements))
    }

    /// The document as compact JSON text.
    package var text: [UInt8] { source.jsonText }

    /// Documents are equal when their texts are: the writers are deterministic.
    package static func == (lhs: StoredDocument, rhs: StoredDocument) -> Bool { lhs.text == rhs.text }
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
