package import SDBus

/// A notification server's own Do Not Disturb, on one bus connection: the connection that owns
/// the server's well-known name is followed, its switch read when it arrives and then followed
/// by its own signals. A signal that carries the switch's value is taken as it is; one that
/// only says the switch changed (mako invalidates its property) makes it read again, one read
/// at a time and at most one more waiting however many come. `reading` gets true (Do Not
/// Disturb), false, or nil when the name has no owner or the owner has no such switch.
///
/// What differs between servers is their `Reader`: dunst's and Plasma's are a boolean property
/// (`property`), swaync's a method and its subscription signals (`swaync`), mako's a mode in a
/// list (`mako`). Only the owner's signals count, read within the reader's bounds: another
/// peer cannot silence the island.
package final class ServerFocus {
    /// How one kind of server tells its switch.
    package struct Reader: Sendable {
        /// What a signal of the owner's says.
        package enum Says: Sendable, Equatable {
            /// The switch is now this.
            case value(Bool)
            /// The switch changed: read it.
            case changed
        }

        /// The well-known name whose owner is the server.
        var name: String
        /// The signals of the owner's that may speak of the switch.
        var rules: [String]
        var limits: DecodingLimits
        /// What a signal's arguments say of the switch; nil: nothing.
        var signal: @Sendable ([BusValue]) -> Says?
        /// The call that reads the switch from the owner.
        var path: String
        var interface: String
        var member: String
        var arguments: [BusValue]
        /// What the read's reply says; nil: nothing (then only a signal will).
        var reply: @Sendable ([BusValue]) -> Bool?
    }

    private let bus: any SourceBus
    private let reader: Reader
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    /// The server's unique name, once known.
    private var owner: String?
    private var readState: ReadState = .idle

    private enum ReadState { case idle, reading, readingAndAgain }

    package init(bus: any SourceBus, reader: Reader, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.reader = reader
        self.reading = reading
    }

    package func start() throws(BusError) {
        for rule in reader.rules {
            subscriptions.append(
                try bus.addMatch(rule) { [weak self] message in
                    guard let self, let owner, message.sender == owner,
                        let says = reader.signal((try? message.arguments(limits: reader.limits)) ?? [])
                    else { return }
                    switch says {
                    case .value(let value): reading(value)
                    case .changed: read()
                    }
                })
        }
        subscriptions.append(try bus.followOwner(of: reader.name) { [weak self] owner in self?.ownerChanged(owner) })
    }

    package func stop() {
        subscriptions = []
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        readState = .idle
        reading(nil)
        if new != nil { read() }
    }

    private func read() {
        guard let owner else { return }
        guard readState == .idle else {
            readState = .readingAndAgain
            return
        }
        readState = .reading
        do {
            try bus.call(
                destination: owner, path: reader.path, interface: reader.interface, member: reader.member,
                arguments: reader.arguments, timeout: .seconds(5)
            ) { [weak self] result in
                guard let self, self.owner == owner else { return }
                let again = readState == .readingAndAgain
                readState = .idle
                if case .success(let reply) = result, let value = reader.reply((try? reply.arguments(limits: reader.limits)) ?? []) {
                    reading(value)
                }
                if again { read() }
            }
        } catch {
            // No read: the owner's next signal says it.
            readState = .idle
        }
    }
}

extension ServerFocus.Reader {
    static let notifications = "org.freedesktop.Notifications"
    static let properties = "org.freedesktop.DBus.Properties"

    /// The match rule of a `PropertiesChanged` of `interface` at `path`.
    static func propertiesChanged(path: String, interface: String) -> String {
        "type='signal',interface='\(properties)',member='PropertiesChanged',path='\(path)',arg0='\(interface)'"
    }

    /// A boolean property of the connection that owns `org.freedesktop.Notifications`, at
    /// `/org/freedesktop/Notifications`, followed by its `PropertiesChanged`. A server without
    /// it (GNOME Shell's, another kind's) answers the read with an error: nothing.
    package static func property(interface: String, name: String) -> Self {
        let path = "/org/freedesktop/Notifications"
        return Self(
            name: notifications,
            rules: [propertiesChanged(path: path, interface: interface)],
            // A `PropertiesChanged` is a peer's dictionary of any size; the switch is near its top.
            limits: DecodingLimits(maximumValues: 64, maximumStringBytes: 256, maximumDepth: 4),
            signal: { arguments in
                guard arguments.count >= 2, arguments[0].string == interface, let value = arguments[1].dictionary?[name]?.bool else {
                    return nil
                }
                return .value(value)
            },
            path: path, interface: properties, member: "Get", arguments: [.string(interface), .string(name)],
            reply: { $0.first?.bool })
    }

    /// dunst's pause (`dunstctl set-paused true`).
    package static let dunstPause = property(interface: "org.dunstproject.cmd0", name: "paused")
    /// KDE Plasma's notification inhibition (its Do Not Disturb, and what apps' `Inhibit` asks).
    package static let kdeInhibition = property(interface: "org.freedesktop.Notifications", name: "Inhibited")

    /// SwayNotificationCenter's Do Not Disturb (`swaync-client --dnd-on`): `GetDnd` of the
    /// connection that owns `org.erikreider.swaync.cc`, then its `SubscribeV2` (count, dnd,
    /// cc_open, inhibited) or, from an older swaync, `Subscribe` (count, dnd[, cc_open]), which
    /// it sends on every change. swaync has no property for it. Only a boolean in the second
    /// place counts.
    package static let swaync: Self = {
        let name = "org.erikreider.swaync.cc"
        let path = "/org/erikreider/swaync/cc"
        return Self(
            name: name,
            rules: ["SubscribeV2", "Subscribe"].map { "type='signal',interface='\(name)',member='\($0)',path='\(path)'" },
            limits: DecodingLimits(maximumValues: 8, maximumStringBytes: 64, maximumDepth: 1),
            signal: { arguments in arguments.count >= 2 ? arguments[1].bool.map(Says.value) : nil },
            path: path, interface: name, member: "GetDnd", arguments: [],
            reply: { $0.first?.bool })
    }()

    /// mako's own convention for it, the mode `do-not-disturb` (`makoctl mode -a
    /// do-not-disturb`, with a `[mode=do-not-disturb]` section hiding notifications): the
    /// `Modes` property of `fr.emersion.Mako` at `/fr/emersion/Mako` on the connection that owns
    /// `org.freedesktop.Notifications`. mako announces a change by invalidating the property,
    /// without its value, so each announcement is a read. A list of modes is read within bounds.
    package static let mako: Self = {
        let interface = "fr.emersion.Mako"
        let path = "/fr/emersion/Mako"
        return Self(
            name: notifications,
            rules: [propertiesChanged(path: path, interface: interface)],
            limits: DecodingLimits(maximumValues: 128, maximumStringBytes: 256, maximumDepth: 4),
            signal: { arguments in
                guard arguments.count >= 3,
                    arguments[1].dictionary?["Modes"] != nil || arguments[2].stringList?.contains("Modes") == true
                else { return nil }
                return .changed
            },
            path: path, interface: properties, member: "Get", arguments: [.string(interface), .string("Modes")],
            reply: { arguments in arguments.first?.elements.map { modes in modes.contains { $0.string == makoMode } } })
    }()

    /// mako's mode that is Do Not Disturb.
    package static let makoMode = "do-not-disturb"
}
