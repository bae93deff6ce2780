import FreeDesktop
import IslandCore
import OrderedCollections
import OrderedJSON
import IslandProtocol

/// The user's session lock as islandd holds it: since when the session is locked, and who said
/// so. Never stored: a "locked" left behind by a crash would hide activities for good, while a
/// daemon that starts unlocked is told again by the bridge, which announces the desktop's state
/// each time it connects.
struct SessionLock: Sendable, Equatable {
    var since: Double
    var source: LockSource
}

/// What presenters are sent of one activity while the session is locked, or the screen shared.
enum ItemRedaction: Equatable {
    /// Everything: unlocked and unshared, or `public` on a locked screen.
    case none
    /// The app and the island's shape, while the screen is shared (`Wire.writeHiddenItem`).
    case hiddenWhileSharing
    /// `private` on a locked screen: the app, and the layout's public layout or the app's icon
    /// and name (`Wire.writePrivateItem`).
    case privateOnLockScreen(publicLayout: JSON?)
    /// `secret` on a locked screen: nothing at all, not even that it exists.
    case absent

    /// An alert as this redaction lets presenters see it: whole, emptied, or none at all.
    func alert(_ alert: (id: String, alert: Alert)?) -> (id: String, alert: Alert)? {
        guard let alert else { return nil }
        switch self {
        case .none: return alert
        case .hiddenWhileSharing, .privateOnLockScreen: return (alert.id, Wire.hiddenAlert)
        case .absent: return nil
        }
    }
}

extension Wire {
    /// `org.island.Admin.Lock`: `{"on": true, "since": …, "source": …}` while locked,
    /// `{"on": false}` while not.
    static func lock(_ lock: SessionLock?) -> JSON {
        typealias Lock = AdminNames.Lock
        guard let lock else { return [Lock.on: false] }
        return [Lock.on: true, Lock.since: .double(lock.since), Lock.source: .string(lock.source.rawValue)]
    }

    /// `org.island.Presenter.Lock`: the same without who said so, which is no presenter's business.
    static func presenterLock(_ lock: SessionLock?) -> JSON {
        typealias Lock = PresenterNames.Lock
        guard let lock else { return [Lock.on: false] }
        return [Lock.on: true, Lock.since: .double(lock.since)]
    }

    /// A `private` activity as presenters are shown it on a locked screen (an `Item`): which app,
    /// its state and times, and nothing the producer wrote — attributes and content state empty,
    /// and in place of its layout the layout's own `publicLayout` (text and symbols only, checked
    /// when the layout was registered) or `privateLayout`'s. `type` stays, as while sharing: it
    /// is fixed by the app's code, and carries nothing the activity shows.
    static func writePrivateItem(_ activity: Activity, app: AppLabel, publicLayout: JSON?, to text: inout JSONText) {
        writeRedactedItem(
            activity, app: app, layout: publicLayout ?? privateLayout(app: app, appID: activity.sourceApp ?? activity.app),
            to: &text)
    }

    /// The layout of a `private` activity without a public layout of its own: the app's icon
    /// (when its desktop entry names a theme icon; else a generic program's) and its name (else
    /// its id), in every region so that no presenter falls back to a rendering of its own. No
    /// buttons, links, pictures or progress.
    static func privateLayout(app: AppLabel, appID: String) -> JSON {
        let appIcon = app.icon.flatMap { IconName.isValid($0) ? $0 : nil } ?? "application-x-executable-symbolic"
        let icon: JSON = ["type": "symbol", "name": .string(appIcon)]
        // The name is shown as written: braces would make it a template.
        let name = String((app.name ?? appID).unicodeScalars.filter { $0 != "{" && $0 != "}" }.map(Character.init))
        let words: JSON = ["type": "text", "template": .string(name)]
        return [
            "compactLeading": icon,
            "compactTrailing": ["type": "symbol", "name": "system-lock-screen-symbolic"],
            "minimal": icon,
            "lockScreen": ["type": "hstack", "children": [icon, words], "spacing": 6],
            "expanded": [
                "leading": ["type": "symbol", "name": .string(appIcon), "priority": 0],
                "center": ["type": "text", "template": .string(name), "priority": 1],
            ],
        ]
    }
}
