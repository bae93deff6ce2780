package import SDBus

/// GNOME's Do Not Disturb, `org.gnome.desktop.notifications show-banners` (false is Do Not
/// Disturb), on one bus connection, followed through dconf's writes (`DconfFollowing`): read
/// (`read`, `gsettings get` in the bridge, which hands the value to `answered`) at start and
/// again after each write that touches it.
package final class GnomeFocus {
    static let key = "/org/gnome/desktop/notifications/show-banners"

    private let following: DconfFollowing
    private let reading: (Bool?) -> Void

    package init(bus: any SourceBus, read: @escaping () -> Void, reading: @escaping (Bool?) -> Void) {
        following = DconfFollowing(bus: bus, touches: Self.touchesKey, read: read)
        self.reading = reading
    }

    package func start() throws(BusError) {
        try following.start()
    }

    package func stop() {
        following.stop()
    }

    /// Whether a write of `changes` under `prefix` may have changed the key: the key itself,
    /// or a directory above it (a reset or a load of a whole tree).
    package static func touchesKey(prefix: String, changes: [String]) -> Bool {
        changes.contains { change in
            let path = prefix + change
            return path == key || (path.hasSuffix("/") && key.hasPrefix(path))
        }
    }

    /// What the read started last found: `show-banners`, or nil.
    package func answered(showBanners: Bool?) {
        following.answered { reading(showBanners.map { !$0 }) }
    }
}
