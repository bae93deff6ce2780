package import SDBus

/// One of the desktop's reports that the session is locked, followed on one bus connection:
/// read from the connection that owns the service's name when it arrives, then followed by
/// that connection's own signals. `reading` gets true (locked), false, or nil (no owner, or
/// nothing readable).
///
/// - `gnome`: GNOME Shell's `org.gnome.ScreenSaver` (`GetActive`, `ActiveChanged(b)`), on the
///   session bus.
/// - `freedesktop`: `org.freedesktop.ScreenSaver` (`GetActive`, `ActiveChanged(b)`): KDE's
///   screen locker, xfce4-screensaver, and others; on the session bus.
/// - `logind`: the session's `LockedHint` (`org.freedesktop.login1.Session`, read with
///   `Properties.Get` and followed by `PropertiesChanged`), on the system bus: the session is
///   found with `GetSession` of `XDG_SESSION_ID`, or `auto` (the user's display session).
///
/// Only the owner's signals count, and only a boolean: any peer may send an `ActiveChanged`
/// or a `PropertiesChanged` with the same names, and the bus names its real sender. The owner
/// of a free name on the session bus could be anyone, so the bridge counts the session locked
/// when any report says so (`DesktopLock`): a peer that claims a name can only hide more.
package final class LockSignal {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case gnome, freedesktop, logind

        /// The service's well-known name.
        package var service: String {
            switch self {
            case .gnome: "org.gnome.ScreenSaver"
            case .freedesktop: "org.freedesktop.ScreenSaver"
            case .logind: "org.freedesktop.login1"
            }
        }

        /// Whether it is on the system bus (logind) rather than the session bus.
        package var isOnSystemBus: Bool { self == .logind }
    }

    static let properties = "org.freedesktop.DBus.Properties"
    static let logindManager = "org.freedesktop.login1.Manager"
    static let logindSession = "org.freedesktop.login1.Session"
    /// A signal's body is a peer's: a boolean, or a dictionary with one near its top.
    static let limits = DecodingLimits(maximumValues: 64, maximumStringBytes: 256, maximumDepth: 4)
    package static let maximumPathBytes = 255

    package let kind: Kind
    private let bus: any SourceBus
    private let sessionID: String
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    /// The session's object, for logind: its `PropertiesChanged` is matched once it is known.
    private var sessionMatch: BusSubscription?
    /// The service's unique name, once known.
    private var owner: String?

    /// - Parameter sessionID: logind's session (`XDG_SESSION_ID`), or `auto`; unused otherwise.
    package init(_ kind: Kind, bus: any SourceBus, sessionID: String = "auto", reading: @escaping (Bool?) -> Void) {
        self.kind = kind
        self.bus = bus
        self.sessionID = sessionID
        self.reading = reading
    }

    package func start() throws(BusError) {
        if kind != .logind {
            subscriptions.append(
                try bus.addMatch("type='signal',interface='\(kind.service)',member='ActiveChanged'") { [weak self] message in
                    guard let self, let owner, message.sender == owner,
                        let active = (try? message.arguments(limits: Self.limits))?.first?.bool
                    else { return }
                    reading(active)
                })
        }
        subscriptions.append(try bus.followOwner(of: kind.service) { [weak self] owner in self?.ownerChanged(owner) })
    }

    package func stop() {
        subscriptions = []
        sessionMatch = nil
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        sessionMatch = nil
        reading(nil)
        guard let new else { return }
        switch kind {
        case .gnome, .freedesktop:
            let path = kind == .gnome ? "/org/gnome/ScreenSaver" : "/org/freedesktop/ScreenSaver"
            call(new, path: path, interface: kind.service, member: "GetActive", []) { [weak self] values in
                guard let active = values.first?.bool else { return }
                self?.reading(active)
            }
        case .logind:
            call(new, path: "/org/freedesktop/login1", interface: Self.logindManager, member: "GetSession", [.string(sessionID)]) {
                [weak self] values in
                guard let path = values.first?.string, LockSignalPaths.isObjectPath(path) else { return }
                self?.followSession(at: path, of: new)
            }
        }
    }

    /// logind's session object: its `LockedHint` read, and followed by its `PropertiesChanged`.
    private func followSession(at path: String, of owner: String) {
        do {
            sessionMatch = try bus.addMatch(
                "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(path)',arg0='\(Self.logindSession)'"
            ) { [weak self] message in
                guard let self, self.owner == owner, message.sender == owner, message.path == path,
                    case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                    arguments[0].string == Self.logindSession, let locked = arguments[1].dictionary?["LockedHint"]?.bool
                else { return }
                reading(locked)
            }
        } catch {
            return
        }
        call(owner, path: path, interface: Self.properties, member: "Get", [.string(Self.logindSession), .string("LockedHint")]) {
            [weak self] values in
            guard let locked = values.first?.bool else { return }
            self?.reading(locked)
        }
    }

    /// Calls the owner `owner`; `body` gets the reply's values while it is still the owner.
    private func call(
        _ owner: String, path: String, interface: String, member: String, _ arguments: [BusValue],
        _ body: @escaping ([BusValue]) -> Void
    ) {
        do {
            try bus.call(
                destination: owner, path: path, interface: interface, member: member, arguments: arguments,
                timeout: .seconds(5)
            ) { [weak self] result in
                guard let self, self.owner == owner, case .success(let reply) = result,
                    let values = try? reply.arguments(limits: Self.limits)
                else { return }
                body(values)
            }
        } catch {
            // No read: the owner's next signal says it.
        }
    }
}

/// Object paths a peer names, checked before they go into a match rule.
package enum LockSignalPaths {
    /// An object path as D-Bus writes one: `/` and elements of `[A-Za-z0-9_]`, within 255 bytes.
    package static func isObjectPath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.utf8.count <= LockSignal.maximumPathBytes else { return false }
        return path.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}
