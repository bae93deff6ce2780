package import SDBus

/// One `org.freedesktop.Notifications.Notify` call, as the bridge needs it: read from a
/// message any peer may send, so every text is cut and only the hints it uses are kept.
package struct NotifyCall: Sendable, Hashable {
    package var appName: String
    package var replacesID: UInt32
    package var appIcon: String
    package var summary: String
    package var body: String
    /// The `value` hint, clamped to 0…100.
    package var value: Int?
    package var category: String?
    /// The `desktop-entry` hint: the app's claim to a desktop entry.
    package var desktopEntry: String?
    /// The stack tag that makes a later notification replace this one
    /// (`x-canonical-private-synchronous`, `x-dunst-stack-tag` or `synchronous`).
    package var stackTag: String?
    /// What the sender says of how private it is, in GNOME Shell's hint `x-gnome-privacy-scope`:
    /// the only one a desktop defines (the freedesktop specification and KDE have none).
    package var privacyScope: PrivacyScope?

    /// `x-gnome-privacy-scope`'s values.
    package enum PrivacyScope: String, Sendable, Hashable {
        /// About the user (GNOME's default): a locked screen hides its details.
        case user
        /// About the machine (a battery's charge, a disk's space): anyone at it may read it.
        case system
    }

    package static let signature = "susssasa{sv}i"
    package static let maximumSummaryBytes = 128
    package static let maximumBodyBytes = 256
    static let maximumTagBytes = 128

    package init(
        appName: String, replacesID: UInt32 = 0, appIcon: String = "", summary: String, body: String = "",
        value: Int? = nil, category: String? = nil, desktopEntry: String? = nil, stackTag: String? = nil,
        privacyScope: PrivacyScope? = nil
    ) {
        self.appName = appName
        self.replacesID = replacesID
        self.appIcon = appIcon
        self.summary = summary
        self.body = body
        self.value = value
        self.category = category
        self.desktopEntry = desktopEntry
        self.stackTag = stackTag
        self.privacyScope = privacyScope
    }

    /// The call's arguments (`susssasa{sv}i`; the timeout may be missing when the reader's
    /// budget ran out in a huge hints dictionary); nil when they have another shape.
    package init?(arguments: [BusValue]) {
        guard arguments.count >= 7, case .string(let appName) = arguments[0], case .uint32(let replacesID) = arguments[1],
            case .string(let appIcon) = arguments[2], case .string(let summary) = arguments[3],
            case .string(let body) = arguments[4], let hints = arguments[6].dictionary
        else { return nil }
        self.appName = BoundedText.line(appName, maximumBytes: SourceApp.maximumNameBytes)
        self.replacesID = replacesID
        self.appIcon = appIcon.utf8.count <= 256 ? appIcon : ""
        self.summary = BoundedText.line(summary, maximumBytes: Self.maximumSummaryBytes)
        self.body = BoundedText.notificationBody(body, maximumBytes: Self.maximumBodyBytes)
        // Senders send it as i, u, y or even d.
        if let number = hints["value"]?.number, number.isFinite {
            value = Int(min(100, max(0, number.rounded())))
        }
        category = hints["category"]?.string.map { BoundedText.line($0, maximumBytes: 64) }
        desktopEntry = hints["desktop-entry"]?.string
        stackTag = (hints["x-canonical-private-synchronous"] ?? hints["x-dunst-stack-tag"] ?? hints["synchronous"])?.string
            .map { BoundedText.line($0, maximumBytes: Self.maximumTagBytes) }
        privacyScope = hints["x-gnome-privacy-scope"]?.string.flatMap(PrivacyScope.init(rawValue:))
    }

    /// Whether it shows progress: a `value` hint, or a `transfer` category.
    package var isProgress: Bool {
        value != nil || category == "transfer" || category?.hasPrefix("transfer.") == true
    }
}
