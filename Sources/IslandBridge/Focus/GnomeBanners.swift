package import SDBus

/// GNOME's Do Not Disturb, `org.gnome.desktop.notifications show-banners` (false is Do Not
/// Disturb), on one bus connection. GSettings keeps it in dconf's database file, which the
/// bus does not carry; what the bus does carry is dconf-service's `ca.desrt.dconf.Writer`
/// `Notify` after every write. So the key is read (`read`, `gsettings get` in the bridge,
/// which hands the value to `answered`) at start and again after each `Notify` that touches it.
///
/// Anyone may send a `Notify`: it only makes the bridge read the real value again, one read
/// at a time and at most one more waiting, however many arrive.
package final class GnomeBanners {
    static let key = "/org/gnome/desktop/notifications/show-banners"
    static let limits = DecodingLimits(maximumValues: 256, maximumStringBytes: 512, maximumDepth: 2)

    private let bus: any SourceBus
    /// Starts a read of `show-banners`, whose value (nil: unreadable) comes to `answered`.
    private let read: () -> Void
    private let reading: (Bool?) -> Void
    private var subscription: BusSubscription?
    private var readState: ReadState = .idle

    private enum ReadState { case idle, reading, readingAndAgain }

    package init(bus: any SourceBus, read: @escaping () -> Void, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.read = read
        self.reading = reading
    }

    package func start() throws(BusError) {
        subscription = try bus.addMatch("type='signal',interface='ca.desrt.dconf.Writer',member='Notify'") { [weak self] message in
            guard let self, case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                  let prefix = arguments[0].string, let changes = arguments[1].stringList,
                  Self.touchesKey(prefix: prefix, changes: changes)
            else { return }
            readAgain()
        }
        readAgain()
    }

    package func stop() {
        subscription = nil
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
    package func answered(_ banners: Bool?) {
        guard subscription != nil, readState != .idle else { return }
        let again = readState == .readingAndAgain
        readState = .idle
        reading(banners.map { !$0 })
        if again { readAgain() }
    }

    private func readAgain() {
        switch readState {
        case .idle:
            readState = .reading
            read()
        case .reading, .readingAndAgain:
            readState = .readingAndAgain
        }
    }
}
