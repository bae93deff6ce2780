import FreeDesktop
import OrderedCollections
package import OrderedJSON

/// The app an activity is about (Spotify, Dolphin), as presenters show it inside the bridge's
/// card: the bridge's layouts draw `attributes.app.name` and `attributes.app.icon`, in the
/// compact, minimal and expanded forms as on the lock screen.
///
/// Every source claims its app with a string any peer on the bus can send (an MPRIS
/// `DesktopEntry`, a notification's `desktop-entry` hint, a job's desktop entry). A claim is
/// believed only when the sending process is verified as that app (`SenderIdentity`, from the
/// bus's credentials of the very connection that sent it) and names an installed desktop
/// entry: the name and icon then come from that entry, never from the peer. Anything else is
/// shown as what it is, the bridge's own source ("Notification", "Media", "Transfer") with the
/// bridge's own icon, which marks it in every form as something that came through the bridge;
/// the peer's label is kept as `label`, which no layout draws. The card's heading is the
/// daemon's: the verified app's installed entry when the bridge asks for it (`sourceApp`) and
/// islandd lets the bridge speak for other apps, else the bridge's own; no peer's string ever
/// heads it.
package struct SourceApp: Sendable, Hashable {
    package var name: String
    /// A freedesktop icon name (never a path: presenters look names up in the icon theme).
    package var icon: String
    /// The installed desktop entry's id, when the sender was verified as that app.
    package var desktopEntry: String?
    /// What an unverified peer calls itself (its notification's app name, its player's
    /// `Identity`), cut short; for logs and the attributes, never drawn as the app.
    package var label: String?

    package init(name: String, icon: String, desktopEntry: String? = nil, label: String? = nil) {
        self.name = name
        self.icon = icon
        self.desktopEntry = desktopEntry
        self.label = label
    }

    package static let maximumNameBytes = 64

    /// The bridge's own icon (its desktop entry's `Icon=`): what an unverified source shows.
    package static let bridgeIcon = "emblem-synchronizing-symbolic"

    /// What a source is when its sender is not verified as an app.
    package enum Kind: String, Sendable, Hashable {
        case notification = "Notification"
        case media = "Media"
        case transfer = "Transfer"
    }

    /// Resolves a source's app: `claim` (a desktop entry id, with or without `.desktop`), or
    /// else the app `identity` implies (a Flatpak's id, an app unit's), is shown as that app
    /// when `identity` verifies the sender as it and `lookup` finds it installed; otherwise
    /// the source is the bridge's own `kind`, with `label` kept as the peer's word.
    package static func resolve(
        claim: String?, identity: SenderIdentity, kind: Kind, label: String?,
        lookup: (String) -> DesktopEntry?
    ) -> SourceApp {
        let candidate = claim.flatMap(DesktopEntry.validID) ?? identity.impliedApp.flatMap(DesktopEntry.validID)
        if let id = candidate, let installed = lookup(id), identity.verifies(id, executable: installed.executable) {
            return SourceApp(
                name: BoundedText.line(installed.name ?? id, maximumBytes: maximumNameBytes),
                icon: installed.icon.flatMap(iconNameOrNil) ?? bridgeIcon, desktopEntry: id)
        }
        let label = label.map { BoundedText.line($0, maximumBytes: maximumNameBytes) }.flatMap { $0.isEmpty ? nil : $0 }
        return SourceApp(name: kind.rawValue, icon: bridgeIcon, label: label)
    }

    /// `name` if it is an icon name presenters may look up (`IconName`): paths and URLs
    /// (`file:///…`) are not.
    package static func iconNameOrNil(_ name: String) -> String? {
        IconName.isValid(name) ? name : nil
    }

    /// The installed app an activity's attributes (`"app": json`) show it as, when its sender
    /// was verified as that app: what the bridge asks islandd to head the card with
    /// (`Request`'s `sourceApp`), and islandd shows only when it lets the bridge speak for it.
    package static func verifiedEntry(in attributes: JSONObject) -> String? {
        attributes["app"]?["desktopEntry"]?.stringValue
    }

    /// `{"name": …, "icon": …, "desktopEntry": …}`, or `{"name": …, "icon": …, "label": …}`.
    package var json: JSON {
        var object: JSONObject = ["name": .string(name), "icon": .string(icon)]
        if let desktopEntry { object["desktopEntry"] = .string(desktopEntry) }
        if let label { object["label"] = .string(label) }
        return .object(object)
    }
}

/// What the bridge reads of an installed desktop entry: its `Name=`, `Icon=`, and the
/// program of `TryExec=` or else of `Exec=` (to recognise the app's processes by).
package struct DesktopEntry: Sendable, Hashable {
    package var name: String?
    package var icon: String?
    package var executable: String?

    package init(name: String?, icon: String?, executable: String? = nil) {
        self.name = name
        self.icon = icon
        self.executable = executable
    }

    /// A desktop file id as a peer may claim it (`DesktopFile.validID`): never a path.
    package static func validID(_ claim: String) -> String? { DesktopFile.validID(claim) }

    /// The `[Desktop Entry]` group of a desktop file: nil when it has none, or says
    /// `Hidden=true` (a deleted entry).
    package init?(contents: String) {
        guard let file = DesktopFile(parsing: contents), !file.isHidden else { return nil }
        name = file.string("Name").map { BoundedText.line($0, maximumBytes: SourceApp.maximumNameBytes) }
        icon = file.string("Icon")
        executable = file.executable
    }
}
