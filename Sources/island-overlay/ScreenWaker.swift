import CGtk

/// Wakes the screen of a locked session for an alert: `SimulateUserActivity` of
/// `org.freedesktop.ScreenSaver` on the session bus, which the lockers that have it (KDE's
/// kscreenlocker, xfce4-screensaver) take as the user's touch: the screen lights, the session
/// stays locked. GNOME's screen saver has no such method (GNOME lights its lock screen for its
/// own notifications only), and with no owner there is nobody to ask: the call fails, once
/// said in the log. The call carries nothing: the owner learns only that something alerted.
///
/// GIO's, on the GTK thread: the connection is made at the first wake and kept; the reply is
/// not waited for.
@MainActor final class ScreenWaker {
    static let shared = ScreenWaker()
    private var connection: OpaquePointer?
    private var saidFailure = false

    func wake() {
        if connection == nil {
            var error: UnsafeMutablePointer<GError>?
            connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error)
            if let error {
                if !saidFailure { log("cannot wake the screen: no session bus (\(String(cString: error.pointee.message)))") }
                saidFailure = true
                g_error_free(error)
                return
            }
        }
        g_dbus_connection_call(
            connection, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver",
            "SimulateUserActivity", nil, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START, 5000, nil,
            { source, result, _ in
                var error: UnsafeMutablePointer<GError>?
                let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
                if let reply { g_variant_unref(reply) }
                guard let error else { return }
                let message = String(cString: error.pointee.message)
                g_error_free(error)
                MainActor.assumeIsolated { ScreenWaker.shared.failed(message) }
            }, nil)
    }

    private func failed(_ message: String) {
        if !saidFailure { log("cannot wake the screen (org.freedesktop.ScreenSaver SimulateUserActivity): \(message)") }
        saidFailure = true
    }
}
