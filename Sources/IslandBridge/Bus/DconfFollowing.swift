package import SDBus

/// Settings kept by dconf, followed on one bus connection. dconf's database file is not on the
/// bus; what the bus does carry is dconf-service's `ca.desrt.dconf.Writer` `Notify` after every
/// write. So the settings are read (`read`, a child process in the bridge, whose answer comes
/// back through `answered`) at start and again after each `Notify` that `touches` them.
///
/// Anyone may send a `Notify`: it only makes the bridge read the real settings again, one read
/// at a time and at most one more waiting, however many arrive.
package final class DconfFollowing {
    static let limits = DecodingLimits(maximumValues: 256, maximumStringBytes: 512, maximumDepth: 2)

    private let bus: any SourceBus
    /// Whether a write of `changes` under `prefix` may have changed the settings followed.
    private let touches: (_ prefix: String, _ changes: [String]) -> Bool
    private let read: () -> Void
    private var subscription: BusSubscription?
    private var readState: ReadState = .idle

    private enum ReadState { case idle, reading, readingAndAgain }

    package init(bus: any SourceBus, touches: @escaping (_ prefix: String, _ changes: [String]) -> Bool, read: @escaping () -> Void) {
        self.bus = bus
        self.touches = touches
        self.read = read
    }

    package func start() throws(BusError) {
        subscription = try bus.addMatch("type='signal',interface='ca.desrt.dconf.Writer',member='Notify'") { [weak self] message in
            guard let self, case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                let prefix = arguments[0].string, let changes = arguments[1].stringList, touches(prefix, changes)
            else { return }
            readAgain()
        }
        readAgain()
    }

    package func stop() {
        subscription = nil
    }

    /// The read started last came back: `deliver` hands on what it found, unless nobody asked
    /// for it (not following, or no read out); then the read that waited, if any, starts.
    package func answered(_ deliver: () -> Void) {
        guard subscription != nil, readState != .idle else { return }
        let again = readState == .readingAndAgain
        readState = .idle
        deliver()
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
