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

    /// The desktop's own settings (GNOME's per-app notification privacy, as island-bridge
    /// tells the daemon): never read from islandd.conf, and kept across its reloads.
    package var desktop: DesktopLockScreen = DesktopLockScreen()

    package init(
        visibility: LockScreenVisibility = .public, perApp: [String: LockScreenVisibility] = [:],
        desktop: DesktopLockScreen = DesktopLockScreen()
    ) {
        self.visibility = visibility
        self.perApp = perApp
        self.desktop = desktop
    }

    /// The user's level for an activity of `app`: the stricter of islandd.conf's and the
    /// desktop's. Each names the level set for the app it is shown as (`sourceApp`, which the
    /// daemon verified, for a bridge's activity), else for its producer, else for every app.
    package func visibility(app: String, sourceApp: String?) -> LockScreenVisibility {
        let configured = sourceApp.flatMap { perApp[$0] } ?? perApp[app] ?? visibility
        return configured.stricter(desktop.visibility(app: app, sourceApp: sourceApp))
    }
}

/// The desktop's lock-screen privacy: every app hidden, or some apps private or secret. It
/// can only hide: an app it does not name is left to islandd.conf and the layout.
package struct DesktopLockScreen: Sendable, Hashable {
    package var everyAppSecret: Bool
    package var perApp: [String: LockScreenVisibility]

    package init(everyAppSecret: Bool = false, perApp: [String: LockScreenVisibility] = [:]) {
        self.everyAppSecret = everyAppSecret
        self.perApp = perApp
    }

    /// The desktop's level for an activity of `app` (shown as `sourceApp`), `public` when it says none.
    package func visibility(app: String, sourceApp: String?) -> LockScreenVisibility {
        if everyAppSecret { return .secret }
        return sourceApp.flatMap { perApp[$0] } ?? perApp[app] ?? .public
    }
}
