public import SDBus

/// dunst's pause on one bus connection: `paused` of `org.dunstproject.cmd0` on the
/// connection that owns `org.freedesktop.Notifications`, read when that owner arrives and
/// followed by its `PropertiesChanged`. `reading` gets true (paused), false, or nil when no
/// notification server there is dunst.
///
/// Only the owner's signals count, and only a boolean: another peer cannot pause the island,
/// and a server that is not dunst (GNOME Shell's, Plasma's) answers the read with an error,
/// which is nil.
public final class DunstPause {
    static let server = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let interface = "org.dunstproject.cmd0"
    static let properties = "org.freedesktop.DBus.Properties"
    /// A `PropertiesChanged` is a peer's dictionary of any size; `paused` is near its top.
    static let limits = DecodingLimits(maximumValues: 64, maximumStringBytes: 256, maximumDepth: 4)

    private let bus: any SourceBus
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    /// The server's unique name, once known.
    private var owner: String?

    public init(bus: any SourceBus, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.reading = reading
    }

    public func start() throws(BusError) {
        subscriptions.append(try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.server)'"
        ) { [weak self] message in
            guard let self, case let arguments = (try? message.arguments()) ?? [], arguments.count == 3,
                  let new = arguments[2].string
            else { return }
            ownerChanged(new.isEmpty ? nil : new)
        })
        subscriptions.append(try bus.addMatch(
            "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(Self.path)',arg0='\(Self.interface)'"
        ) { [weak self] message in
            guard let self, let owner, message.sender == owner,
                  case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                  arguments[0].string == Self.interface, let paused = arguments[1].dictionary?["paused"]?.bool
            else { return }
            reading(paused)
        })
        bus.owner(of: Self.server) { [weak self] owner in
            // A NameOwnerChanged may have come first: it is the newer news.
            guard let self, self.owner == nil, let owner else { return }
            ownerChanged(owner)
        }
    }

    public func stop() {
        subscriptions = []
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        reading(nil)
        guard let new else { return }
        do {
            try bus.call(destination: new, path: Self.path, interface: Self.properties, member: "Get",
                         arguments: [.string(Self.interface), .string("paused")], timeout: .seconds(5)) { [weak self] result in
                guard let self, self.owner == new else { return }
                guard case .success(let reply) = result, let paused = (try? reply.arguments(limits: Self.limits))?.first?.bool else {
                    return
                }
                reading(paused)
            }
        } catch {
            // No read: the owner's next PropertiesChanged says it.
        }
    }
}
