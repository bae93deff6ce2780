package import OrderedJSON
import IslandProtocol
import OrderedCollections

/// What the island shows (`org.island.Presenter.Island`).
package struct IslandState: Sendable, Hashable {
    package enum Mode: String, Sendable, Hashable, CaseIterable {
        case none, compact, minimal, expanded
    }

    package var mode: Mode
    package var attached: String?
    package var detached: String?
    package var expanded: String?
    /// Every non-dismissed activity, in lock-screen order.
    package var lockScreen: [String]

    package static let empty = IslandState(mode: .none)

    package init(mode: Mode, attached: String? = nil, detached: String? = nil, expanded: String? = nil, lockScreen: [String] = []) {
        self.mode = mode
        self.attached = attached
        self.detached = detached
        self.expanded = expanded
        self.lockScreen = lockScreen
    }

    package init(json: JSON?) {
        typealias Names = PresenterNames.Island
        let object = json?.objectValue ?? [:]
        self.init(
            mode: object[Names.mode]?.stringValue.flatMap(Mode.init(rawValue:)) ?? .none,
            attached: object[Names.attached]?.stringValue,
            detached: object[Names.detached]?.stringValue,
            expanded: object[Names.expanded]?.stringValue,
            lockScreen: object[Names.lockScreen]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}

/// The alert that came with the latest delta (`org.island.Presenter.Alert`).
package struct PresenterAlert: Sendable, Hashable {
    package var id: String
    package var title: String
    package var body: String

    package init(id: String, title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }
}

/// The presenter's copy of the arbitrated state: a pure fold of the subscription's updates.
///
/// Rules: a `snapshot` (first, or `resync`) replaces everything and sets the sequence; a
/// `delta` applies only above the current sequence (and only after a snapshot): its island, if
/// any, replaces the island, its items replace those with the same id (keeping the layout when
/// the item comes without one), `removed` ids go.
package struct PresenterModel: Sendable, Hashable {
    /// The sequence of the last update applied; nil before the first snapshot.
    package private(set) var sequence: Int?
    package private(set) var island: IslandState = .empty
    package private(set) var items: [String: PresenterItem] = [:]
    /// Set by a delta carrying an alert; it lasts while that activity stays expanded.
    package private(set) var alert: PresenterAlert?
    /// When the user turned Do Not Disturb on; nil while it is off. The daemon already
    /// withholds alerts meanwhile: this is for an indicator.
    package private(set) var focusSince: Double?
    /// Whether the screen is shared with activity content hidden. The daemon already sends no
    /// content meanwhile: this is for an indicator.
    package private(set) var contentHidden = false
    /// The daemon says the session is locked: every item is as its lock-screen level allows.
    package private(set) var sessionLocked = false

    package init() {}

    package var hasSnapshot: Bool { sequence != nil }

    /// Applies one `Update`. Returns whether the model changed.
    @discardableResult
    package mutating func apply(_ update: JSONObject) -> Bool {
        typealias Names = PresenterNames.Update
        let sequence = update[Names.sequence]?.intValue ?? 0
        // A delta leaves out what did not change: an item's layout, the island.
        let items =
            update[Names.items]?.arrayValue?.compactMap { json -> PresenterItem? in
                guard var item = PresenterItem(json: json) else { return nil }
                if json[PresenterNames.Item.layout] == nil, let known = self.items[item.id] {
                    item.layout = known.layout
                    item.defaultLayout = known.defaultLayout
                }
                return item
            } ?? []
        switch update[Names.kind]?.stringValue {
        case Names.Kind.snapshot?:
            let before = self
            self.sequence = sequence
            self.island = IslandState(json: update[Names.island])
            self.items = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            self.alert = nil
            self.focusSince = Self.focusSince(update[Names.focus])
            self.contentHidden = update[Names.sharing]?[PresenterNames.Sharing.contentHidden]?.boolValue == true
            self.sessionLocked = update[Names.lock]?[PresenterNames.Lock.on]?.boolValue == true
            return self != before
        case Names.Kind.delta?:
            guard let current = self.sequence, sequence > current else { return false }
            self.sequence = sequence
            if let island = update[Names.island] { self.island = IslandState(json: island) }
            if let focus = update[Names.focus] { self.focusSince = Self.focusSince(focus) }
            for item in items { self.items[item.id] = item }
            for id in update[Names.removed]?.arrayValue?.compactMap(\.stringValue) ?? [] { self.items[id] = nil }
            for (id, item) in self.items where item.activityState == PresenterNames.Item.State.dismissed { self.items[id] = nil }
            if let alert = update[Names.alert]?.objectValue, let id = alert[PresenterNames.Alert.id]?.stringValue {
                self.alert = PresenterAlert(
                    id: id, title: alert[PresenterNames.Alert.title]?.stringValue ?? "", body: alert[PresenterNames.Alert.body]?.stringValue ?? "")
            } else if let alert = self.alert, !(self.island.mode == .expanded && self.island.expanded == alert.id) {
                self.alert = nil
            }
            return true
        default:
            return false
        }
    }

    /// `Focus`'s `since` while it is `on`.
    private static func focusSince(_ json: JSON?) -> Double? {
        json?[PresenterNames.Focus.on]?.boolValue == true ? json?[PresenterNames.Focus.since]?.doubleValue : nil
    }

    /// Forgets everything, as when the connection to the daemon is lost.
    package mutating func reset() { self = PresenterModel() }

    package func item(_ id: String?) -> PresenterItem? { id.flatMap { items[$0] } }

    /// The activity of the compact island (the attached one), in compact and minimal mode.
    package var compact: PresenterItem? {
        island.mode == .compact || island.mode == .minimal ? item(island.attached) : nil
    }

    /// The minimal island: attached and detached activities.
    package var minimal: (attached: PresenterItem, detached: PresenterItem)? {
        guard island.mode == .minimal, let attached = item(island.attached), let detached = item(island.detached) else { return nil }
        return (attached, detached)
    }

    /// The expanded activity, in expanded mode.
    package var expanded: PresenterItem? { island.mode == .expanded ? item(island.expanded) : nil }

    /// The lock-screen list, in the daemon's order, of the activities the model knows.
    package var lockScreen: [PresenterItem] { island.lockScreen.compactMap { items[$0] } }
}
