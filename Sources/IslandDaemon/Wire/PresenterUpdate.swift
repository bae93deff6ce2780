import IslandCore
import OrderedJSON
import VarlinkCore

extension Wire {
    /// One `org.island.Presenter.Update` — a delta or a snapshot — written member by member,
    /// as text: a delta goes out on every update, encoded once for every presenter it goes to.
    ///
    /// `{"update": {"kind", "sequence", "resync", "island"?, "focus"?, "sharing"?, "items": [Item…], "removed": […], "alert"?}}`:
    /// `init` writes up to the opening of `items`, `add` one item, `finish` the rest.
    struct PresenterUpdate: ~Copyable {
        enum Kind: String {
            /// The whole state: the first message of a subscription, and the resync of one that
            /// fell behind.
            case snapshot
            /// What changed since the update before it.
            case delta
        }

        private var text: JSONText

        /// - Parameter island: nil when the island did not change (a delta leaves it out).
        /// - Parameter focus: `Wire.focus(since:)`; nil when it did not change.
        /// - Parameter sharing: `Wire.presenterSharing`, in snapshots only.
        /// - Parameter lock: `Wire.presenterLock`, in snapshots only.
        init(
            _ kind: Kind, sequence: UInt64, resync: Bool, island: IslandPresentation?, focus: JSON? = nil, sharing: JSON? = nil,
            lock: JSON? = nil, capacity: Int
        ) {
            text = JSONText(capacity: capacity)
            text.openObject()
            text.key("update")
            text.openObject()
            text.member("kind", string: kind.rawValue)
            text.member("sequence", int: Int(sequence))
            text.member("resync", bool: resync)
            if let island { text.member("island", .object(island.json)) }
            if let focus { text.member("focus", focus) }
            if let sharing { text.member("sharing", sharing) }
            if let lock { text.member("lock", lock) }
            text.key("items")
            text.openArray()
        }

        /// Adds an item: the activity as presenters draw it, with its layout, or without when
        /// `layout` is nil (the presenter keeps the one it has).
        mutating func add(_ activity: Activity, layout: (json: JSON, isDefault: Bool)?, app: AppLabel) {
            Wire.writeItem(activity, layout: layout, app: app, to: &text)
        }

        /// Adds an item without its content, while the screen is shared (`Wire.writeHiddenItem`).
        mutating func addHidden(_ activity: Activity, app: AppLabel) {
            Wire.writeHiddenItem(activity, app: app, to: &text)
        }

        /// Adds a `private` item of a locked screen (`Wire.writePrivateItem`).
        mutating func addPrivate(_ activity: Activity, app: AppLabel, publicLayout: JSON?) {
            Wire.writePrivateItem(activity, app: app, publicLayout: publicLayout, to: &text)
        }

        /// Adds the item as `redaction` lets presenters see it (nothing for `absent`).
        mutating func add(_ activity: Activity, layout: (json: JSON, isDefault: Bool)?, app: AppLabel, redaction: ItemRedaction) {
            switch redaction {
            case .none: add(activity, layout: layout, app: app)
            case .hiddenWhileSharing: addHidden(activity, app: app)
            case .privateOnLockScreen(let publicLayout): addPrivate(activity, app: app, publicLayout: publicLayout)
            case .absent: break
            }
        }

        consuming func finish(removed: [String], alert: (id: String, alert: Alert)?) -> VarlinkEncodedParameters {
            text.closeArray()
            text.key("removed")
            text.openArray()
            for id in removed { text.value(.string(id)) }
            text.closeArray()
            if let (id, alert) = alert {
                text.key("alert")
                text.openObject()
                text.member("id", string: id)
                text.member("title", string: alert.title)
                text.member("body", string: alert.body)
                text.closeObject()
            }
            text.closeObject()
            text.closeObject()
            return VarlinkEncodedParameters(text)
        }
    }
}
