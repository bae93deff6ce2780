public import SDBus

/// Follows GNOME's lock-screen privacy (`GnomeLockScreen`) on one bus connection, as
/// `GnomeFocus` follows Do Not Disturb: dconf's database file is not on the bus, but
/// dconf-service's `ca.desrt.dconf.Writer` `Notify` after every write is, so the settings are
/// read (`read`: `dconf dump` in the bridge, whose output comes to `answered`) at start and
/// again after each `Notify` that touches `GnomeLockScreen.directory`.
///
/// Anyone may send a `Notify`: it only makes the bridge read the real settings again, one read
/// at a time and at most one more waiting, however many arrive.
public final class GnomeLockScreenFollower {
    static let limits = DecodingLimits(maximumValues: 256, maximumStringBytes: 512, maximumDepth: 2)

    private let bus: any SourceBus
    private let read: () -> Void
    private let reading: (GnomeLockScreen?) -> Void
    private var subscription: BusSubscription?
    private var readState: ReadState = .idle

    private enum ReadState { case idle, reading, readingAndAgain }

    /// `read` starts a `dconf dump` of `GnomeLockScreen.directory`, whose output (nil: dconf
    /// missing or failing) comes to `answered`; `reading` is told the levels it holds.
    public init(bus: any SourceBus, read: @escaping () -> Void, reading: @escaping (GnomeLockScreen?) -> Void) {
        self.bus = bus
        self.read = read
        self.reading = reading
    }

    public func start() throws(BusError) {
        subscription = try bus.addMatch("type='signal',interface='ca.desrt.dconf.Writer',member='Notify'") { [weak self] message in
            guard let self, case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                  let prefix = arguments[0].string, let changes = arguments[1].stringList,
                  GnomeLockScreen.touchesDirectory(prefix: prefix, changes: changes)
            else { return }
            readAgain()
        }
        readAgain()
    }

    public func stop() {
        subscription = nil
    }

    /// What the read started last found: `dconf dump`'s output, or nil.
    public func answered(dump: String?) {
        guard subscription != nil, readState != .idle else { return }
        let again = readState == .readingAndAgain
        readState = .idle
        reading(dump.map(GnomeLockScreen.parse(dump:)))
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
