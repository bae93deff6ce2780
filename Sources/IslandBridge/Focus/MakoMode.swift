package import SDBus

/// mako's Do Not Disturb, by its own convention the mode `do-not-disturb` (`makoctl mode -a
/// do-not-disturb`, with a `[mode=do-not-disturb]` section hiding notifications), on one bus
/// connection: the `Modes` property of `fr.emersion.Mako` at `/fr/emersion/Mako` on the
/// connection that owns `org.freedesktop.Notifications`. mako announces a change by
/// invalidating the property, without its value, so each announcement is a read: one at a
/// time, and at most one more waiting however many come. `reading` gets whether the mode is
/// on, or nil when the server there is not a mako with modes.
///
/// Only the owner's signals count, and a list of modes is read within bounds.
package final class MakoMode {
    static let server = "org.freedesktop.Notifications"
    static let path = "/fr/emersion/Mako"
    static let interface = "fr.emersion.Mako"
    static let properties = "org.freedesktop.DBus.Properties"
    package static let mode = "do-not-disturb"
    static let limits = DecodingLimits(maximumValues: 128, maximumStringBytes: 256, maximumDepth: 4)

    private let bus: any SourceBus
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    private var owner: String?
    private var readState: ReadState = .idle

    private enum ReadState { case idle, reading, readingAndAgain }

    package init(bus: any SourceBus, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.reading = reading
    }

    package func start() throws(BusError) {
        subscriptions.append(try bus.addMatch(
            "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(Self.path)',arg0='\(Self.interface)'"
        ) { [weak self] message in
            guard let self, let owner, message.sender == owner,
                  case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 3,
                  (arguments[1].dictionary?["Modes"] != nil || arguments[2].stringList?.contains("Modes") == true)
            else { return }
            readModes()
        })
        subscriptions.append(try bus.followOwner(of: Self.server) { [weak self] owner in self?.ownerChanged(owner) })
    }

    package func stop() {
        subscriptions = []
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        readState = .idle
        reading(nil)
        if new != nil { readModes() }
    }

    private func readModes() {
        guard let owner else { return }
        guard readState == .idle else {
            readState = .readingAndAgain
            return
        }
        readState = .reading
        do {
            try bus.call(destination: owner, path: Self.path, interface: Self.properties, member: "Get",
                         arguments: [.string(Self.interface), .string("Modes")], timeout: .seconds(5)) { [weak self] result in
                guard let self, self.owner == owner else { return }
                let again = readState == .readingAndAgain
                readState = .idle
                if case .success(let reply) = result, let modes = (try? reply.arguments(limits: Self.limits))?.first?.elements {
                    reading(modes.contains { $0.string == Self.mode })
                }
                if again { readModes() }
            }
        } catch {
            readState = .idle
        }
    }
}
