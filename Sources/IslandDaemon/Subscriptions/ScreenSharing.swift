import FreeDesktop
import IslandCore
import OrderedCollections
import OrderedJSON
import IslandProtocol

/// The user's screen sharing as islandd holds it: since when the screen is shared, and who
/// said so. Never stored: a "shared" left behind by a crash would hide every activity's
/// content for good, while a daemon that starts unshared is told again by the bridge, which
/// announces the desktop's state each time it connects.
struct ScreenSharing: Sendable, Equatable {
    var since: Double
    var source: SharingSource
}

extension Wire {
    /// `org.island.Admin.Sharing`: `{"on": true, "since": …, "source": …, "contentHidden": …}`
    /// while shared, `{"on": false, "contentHidden": false}` while not.
    static func sharing(_ sharing: ScreenSharing?, contentHidden: Bool) -> JSON {
        typealias Sharing = AdminNames.Sharing
        guard let sharing else { return [Sharing.on: false, Sharing.contentHidden: false] }
        return [
            Sharing.on: true, Sharing.since: .double(sharing.since), Sharing.source: .string(sharing.source.rawValue),
            Sharing.contentHidden: .bool(contentHidden),
        ]
    }

    /// `org.island.Presenter.Sharing`: the same without who said so, which is no presenter's business.
    static func presenterSharing(_ sharing: ScreenSharing?, contentHidden: Bool) -> JSON {
        typealias Sharing = PresenterNames.Sharing
        guard let sharing else { return [Sharing.on: false, Sharing.contentHidden: false] }
        return [Sharing.on: true, Sharing.since: .double(sharing.since), Sharing.contentHidden: .bool(contentHidden)]
    }

    /// An activity as presenters are shown it while the screen is shared and its content hidden
    /// (an `Item`): which app, its state and times, and nothing the producer wrote — attributes
    /// and content state empty, and `hiddenLayout`'s in place of the app's layout, since a
    /// layout's own text, links and buttons are the producer's too. The island's arbitration
    /// is untouched, so it keeps its shape. `type` stays: it is fixed by the app's code when
    /// the activity starts, like its app id, and never carries what the activity shows.
    static func writeHiddenItem(_ activity: Activity, app: AppLabel, to text: inout JSONText) {
        writeRedactedItem(activity, app: app, layout: hiddenLayout(icon: app.icon), to: &text)
    }

    /// An activity with nothing its producer wrote (an `Item`): its app, type, state and times,
    /// attributes and content state empty, and `layout` — the daemon's, or a layout's public
    /// one — in place of its own. Shared by the redactions of sharing and of the lock screen.
    static func writeRedactedItem(_ activity: Activity, app: AppLabel, layout: JSON, to text: inout JSONText) {
        text.openObject()
        text.member("id", string: activity.id)
        text.member("app", string: activity.app)
        if let sourceApp = activity.sourceApp { text.member("sourceApp", string: sourceApp) }
        text.member("type", string: activity.type)
        text.member("attributes", .object([:]))
        text.members(app.members)
        text.member("content", [PresenterNames.Content.state: .object([:])])
        text.member("state", string: activity.state.rawValue)
        if let reason = activity.endReason { text.member("endReason", string: reason.rawValue) }
        activity.writeCreatedAt(to: &text)
        if let endedAt = activity.endedAt { text.member("endedAt", double: endedAt) }
        if let dismissAt = activity.dismissAt { text.member("dismissAt", double: dismissAt) }
        text.member("layout", layout)
        text.member("defaultLayout", bool: false)
        text.closeObject()
    }

    /// What an alert says while content is hidden: nothing, though it still expands the island.
    static let hiddenAlert = Alert(title: "", body: "")

    /// The text hidden activities show where their content would be.
    static let hiddenText = "Hidden while sharing"

    /// The layout of an activity whose content is hidden: the app's icon (when its desktop
    /// entry names a theme icon; else a generic program's), a concealed eye for what is not
    /// shown and `hiddenText`, in every region, so that no presenter falls back to a
    /// rendering of its own. No buttons, links or progress.
    static func hiddenLayout(icon: String?) -> JSON {
        let appIcon = icon.flatMap { IconName.isValid($0) ? $0 : nil } ?? "application-x-executable-symbolic"
        let app: JSON = ["type": "symbol", "name": .string(appIcon)]
        let concealed: JSON = ["type": "symbol", "name": "view-conceal-symbolic"]
        let words: JSON = ["type": "text", "template": .string(hiddenText)]
        return [
            "compactLeading": app,
            "compactTrailing": concealed,
            "minimal": app,
            "lockScreen": ["type": "hstack", "children": [app, words], "spacing": 6],
            // The expanded island's regions say which gives way first when room is short.
            "expanded": [
                "leading": ["type": "symbol", "name": .string(appIcon), "priority": 0],
                "center": ["type": "text", "template": .string(hiddenText), "priority": 1],
            ],
        ]
    }
}
