/// How much of an activity a locked screen shows, as Android's notification visibility:
/// `public` everything, `private` the app and the layout's `publicLayout` only (by default the
/// app's icon and name), `secret` nothing at all. The daemon sends presenters only what the
/// level allows, so no presenter, however written, can show more.
///
/// Levels are ordered by how much they hide: when several say (the layout, the user's choice
/// for all apps and for one app), the strictest wins.
package enum LockScreenVisibility: String, Sendable, Hashable, CaseIterable, Comparable {
    case `public`, `private`, secret

    private var strictness: Int {
        switch self {
        case .public: 0
        case .private: 1
        case .secret: 2
        }
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.strictness < rhs.strictness }

    /// The stricter of the two: what both allow.
    package func stricter(_ other: Self?) -> Self {
        guard let other else { return self }
        return Swift.max(self, other)
    }

    /// Every name, for messages: `public, private or secret`.
    package static let allNames = "public, private or secret"
}
