/// The user's lock-screen privacy: `[LockScreen]` for every app, `[LockScreen:<app-id>]` for
/// one. A layout's own `lockScreenVisibility` still holds: the stricter of the layout's and the
/// user's wins, so the user can hide more than an app does, never show what it keeps secret.
///
/// ```ini
/// [LockScreen]
/// Visibility=private
///
/// [LockScreen:org.example.Music]
/// Visibility=public
/// ```
package struct LockScreenPolicy: Sendable, Hashable {
    /// `[LockScreen] Visibility=`: every app's, unless its own section says.
    package var visibility: LockScreenVisibility = .public
    /// `[LockScreen:<app-id>] Visibility=`, by app id.
    package var perApp: [String: LockScreenVisibility] = [:]

    package init(visibility: LockScreenVisibility = .public, perApp: [String: LockScreenVisibility] = [:]) {
        self.visibility = visibility
        self.perApp = perApp
    }

    /// The user's level for an activity of `app`: the level set for the app it is shown as
    /// (`sourceApp`, which the daemon verified, for a bridge's activity), else for its producer,
    /// else for every app.
    package func visibility(app: String, sourceApp: String?) -> LockScreenVisibility {
        if let sourceApp, let level = perApp[sourceApp] { return level }
        return perApp[app] ?? visibility
    }
}
