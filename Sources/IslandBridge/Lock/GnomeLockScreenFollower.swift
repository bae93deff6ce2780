package import SDBus

/// GNOME's lock-screen privacy (`GnomeLockScreen`) on one bus connection, followed through
/// dconf's writes (`DconfFollowing`): read (`read`, `dconf dump` in the bridge, whose output
/// comes to `answered`) at start and again after each write under `GnomeLockScreen.directory`.
package final class GnomeLockScreenFollower {
    private let following: DconfFollowing
    private let reading: (GnomeLockScreen?) -> Void

    /// `reading` is told the levels each read holds (nil: dconf missing or failing).
    package init(bus: any SourceBus, read: @escaping () -> Void, reading: @escaping (GnomeLockScreen?) -> Void) {
        following = DconfFollowing(bus: bus, touches: GnomeLockScreen.touchesDirectory, read: read)
        self.reading = reading
    }

    package func start() throws(BusError) {
        try following.start()
    }

    package func stop() {
        following.stop()
    }

    /// What the read started last found: `dconf dump`'s output, or nil.
    package func answered(dump: String?) {
        following.answered { reading(dump.map(GnomeLockScreen.parse(dump:))) }
    }
}
