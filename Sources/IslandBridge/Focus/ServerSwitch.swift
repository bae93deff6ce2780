package import SDBus

/// A notification server's own Do Not Disturb, a boolean property of the connection that owns
/// `org.freedesktop.Notifications`, on one bus connection: read when that owner arrives and
/// followed by its `PropertiesChanged`. `reading` gets true (Do Not Disturb), false, or nil
/// when the server there has no such property.
///
/// Only the owner's signals count, and only a boolean: another peer cannot silence the island,
/// and a server without the property (GNOME Shell's, another kind's) answers the read with an
/// error, which is nil.
package final class ServerSwitch {
    package struct Property: Sendable {
        package var interface: String
        package var name: String
    }

    /// dunst's pause (`dunstctl set-paused true`).
    package static let dunstPause = Property(interface: "org.dunstproject.cmd0", name: "paused")
    /// KDE Plasma's notification inhibition (its Do Not Disturb, and what apps' `Inhibit` asks).
    package static let kdeInhibition = Property(interface: "org.freedesktop.Notifications", name: "Inhibited")

    static let server = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let properties = "org.freedesktop.DBus.Properties"
    /// A `PropertiesChanged` is a peer's dictionary of any size; the switch is near its top.
    static let limits = DecodingLimits(maximumValues: 64, maximumStringBytes: 256, maximumDepth: 4)

    private let bus: any SourceBus
    private let property: Property
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    /// The server's unique name, once known.
    private var owner: String?

    package init(bus: any SourceBus, property: Property, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.property = property
        self.reading = reading
    }

    package func start() throws(BusError) {
        subscriptions.append(try bus.addMatch(
            "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(Self.path)',arg0='\(property.interface)'"
        ) { [weak self] message in
            guard let self, let owner, message.sender == owner,
                  case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                  arguments[0].string == property.interface, let value = arguments[1].dictionary?[property.name]?.bool
            else { return }
            reading(value)
        })
        subscriptions.append(try bus.followOwner(of: Self.server) { [weak self] owner in self?.ownerChanged(owner) })
    }

    package func stop() {
        subscriptions = []
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        reading(nil)
        guard let new else { return }
        do {
            try bus.call(destination: new, path: Self.path, interface: Self.properties, member: "Get",
                         arguments: [.string(property.interface), .string(property.name)], timeout: .seconds(5)) { [weak self] result in
                guard let self, self.owner == new else { return }
                guard case .success(let reply) = result, let value = (try? reply.arguments(limits: Self.limits))?.first?.bool else {
                    return
                }
                reading(value)
            }
        } catch {
            // No read: the owner's next PropertiesChanged says it.
        }
    }
}
