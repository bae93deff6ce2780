import SDBus

/// The screen-cast sessions live on the session bus, as a monitor sees their messages: a pure
/// state machine the bridge feeds what it observes (`ScreenCastEvent`) and the departures of
/// the connections involved, and asks whether the screen is shared now.
///
/// Two services cast the screen, each watched the same way — a `Start` call, its answer, and
/// the session's end:
/// - **xdg-desktop-portal** (`org.freedesktop.portal.ScreenCast`, and `RemoteDesktop`, whose
///   sessions may cast the screen too; every desktop with portals: wlroots through
///   xdg-desktop-portal-wlr, GNOME, KDE): a client's `Start(session, …)` is
///   answered with a request object, whose `Request.Response` with code 0 means the user chose
///   what to share and the cast began. The session ends by the client's `Session.Close` or
///   the portal's `Session.Closed`.
/// - **Mutter** (`org.gnome.Mutter.ScreenCast`, which GNOME's portal backend, its screen
///   recorder and gnome-remote-desktop use, and `org.gnome.Mutter.RemoteDesktop`, whose
///   session's start starts the screen casts tied to it): a session's `Start()` answered
///   without error begins the cast; its `Stop()` or `Closed` ends it.
///
/// A session also ends when its client or its service leaves the bus. Only the peers in a
/// session count: a `Close` or `Stop` from anyone but its client, and a `Closed` or `Response`
/// from anyone but the service that answered, are ignored, so that no third peer can end a
/// session's hiding. Every table is bounded (`maximumSessions`, `maximumPending`) and paths
/// are at most `maximumPathBytes`: a peer flooding `Start` calls costs a fixed amount of
/// memory. A full table takes no new session, which can only keep the screen counted shared.
public struct ScreenCastSessions: Sendable {
    /// Which service casts: what islandd's `SetSharing` calls the source.
    public enum Service: String, Sendable, Hashable {
        case portal
        case gnome
    }

    struct Session: Sendable, Hashable {
        let client: String
        let service: String
        let kind: Service
    }

    /// A `Start` call waiting for its answer (portal and Mutter), or a portal request waiting
    /// for its `Response`.
    private struct Pending: Sendable, Hashable {
        let session: String
        let client: String
        let kind: Service
        /// The call's serial, for a `Start` call; the request's path, for a request.
        let serial: UInt64
        let request: String?
        /// The service that answered, for a request.
        let service: String?
    }

    public static let maximumSessions = 32
    public static let maximumPending = 32
    public static let maximumPathBytes = 255

    /// Started sessions, by object path.
    private(set) var sessions: [String: Session] = [:]
    /// Oldest first: when full, the oldest goes.
    private var calls: [Pending] = []
    private var requests: [Pending] = []

    public init() {}

    /// Whether the screen is shared, and by which service first (the portal before Mutter:
    /// on GNOME a portal cast runs through Mutter too); nil while nothing is cast.
    public var sharedBy: Service? {
        if sessions.values.contains(where: { $0.kind == .portal }) { return .portal }
        return sessions.isEmpty ? nil : .gnome
    }

    /// The connections whose departure ends a session or a pending start: clients and services.
    public var peers: Set<String> {
        var names = Set(sessions.values.flatMap { [$0.client, $0.service] })
        for pending in calls + requests {
            names.insert(pending.client)
            if let service = pending.service { names.insert(service) }
        }
        return names
    }

    /// Takes what the monitor saw.
    public mutating func observe(_ event: ScreenCastEvent) {
        switch event {
        case .start(let kind, let session, let client, let serial):
            guard Self.fits(session) else { return }
            Self.append(Pending(session: session, client: client, kind: kind, serial: serial, request: nil, service: nil), to: &calls)
        case .answered(let service, let client, let replySerial, let request):
            guard let index = calls.firstIndex(where: { $0.client == client && $0.serial == replySerial }) else { return }
            let call = calls.remove(at: index)
            switch call.kind {
            case .gnome:
                began(call.session, Session(client: client, service: service, kind: .gnome))
            case .portal:
                guard let request, Self.fits(request) else { return }
                Self.append(Pending(session: call.session, client: client, kind: .portal, serial: 0, request: request, service: service),
                            to: &requests)
            }
        case .failed(let client, let replySerial):
            calls.removeAll { $0.client == client && $0.serial == replySerial }
        case .response(let service, let request, let code):
            guard let index = requests.firstIndex(where: { $0.request == request && $0.service == service }) else { return }
            let pending = requests.remove(at: index)
            // 0: the user chose what to share; 1 cancelled, 2 failed.
            if code == 0 { began(pending.session, Session(client: pending.client, service: service, kind: .portal)) }
        case .close(let kind, let session, let client):
            if let started = sessions[session], started.kind == kind, started.client == client { sessions[session] = nil }
        case .closed(let kind, let session, let service):
            if let started = sessions[session], started.kind == kind, started.service == service { sessions[session] = nil }
        }
    }

    /// Connection `name` left the bus: its sessions and its pending starts end.
    public mutating func left(_ name: String) {
        sessions = sessions.filter { $0.value.client != name && $0.value.service != name }
        calls.removeAll { $0.client == name }
        requests.removeAll { $0.client == name || $0.service == name }
    }

    /// Forgets everything: the bus went away, and with it every session seen on it.
    public mutating func reset() { self = ScreenCastSessions() }

    private mutating func began(_ path: String, _ session: Session) {
        guard sessions[path] != nil || sessions.count < Self.maximumSessions else { return }
        sessions[path] = session
    }

    private static func fits(_ path: String) -> Bool { !path.isEmpty && path.utf8.count <= maximumPathBytes }

    private static func append(_ pending: Pending, to list: inout [Pending]) {
        if list.count >= maximumPending { list.removeFirst() }
        list.append(pending)
    }
}

/// What a screen-cast message says, read off the monitor (`init?(_:)`).
public enum ScreenCastEvent: Sendable, Hashable {
    /// `client` called `Start` on `session` (the portal's argument, Mutter's object path).
    case start(ScreenCastSessions.Service, session: String, client: String, serial: UInt64)
    /// `service` answered `client`'s call `replySerial`; for the portal, with its request object.
    case answered(service: String, client: String, replySerial: UInt64, request: String?)
    /// An error answered `client`'s call `replySerial`.
    case failed(client: String, replySerial: UInt64)
    /// The portal's `Request.Response` on `request`.
    case response(service: String, request: String, code: UInt32)
    /// The client's `Session.Close` (portal) or `Stop` (Mutter).
    case close(ScreenCastSessions.Service, session: String, client: String)
    /// The service's `Session.Closed`.
    case closed(ScreenCastSessions.Service, session: String, service: String)

    public static let portalScreenCast = "org.freedesktop.portal.ScreenCast"
    public static let portalRemoteDesktop = "org.freedesktop.portal.RemoteDesktop"
    public static let portalSession = "org.freedesktop.portal.Session"
    public static let portalRequest = "org.freedesktop.portal.Request"
    public static let mutterSession = "org.gnome.Mutter.ScreenCast.Session"
    public static let mutterRemoteDesktopSession = "org.gnome.Mutter.RemoteDesktop.Session"
    public static let portalName = "org.freedesktop.portal.Desktop"
    public static let mutterName = "org.gnome.Mutter.ScreenCast"

    /// What the monitor is to see: the calls and signals above, and the answers of the two
    /// services (by their well-known names, which the bus resolves as messages pass).
    public static let monitorRules = [
        "type='method_call',interface='\(portalScreenCast)',member='Start'",
        "type='method_call',interface='\(portalRemoteDesktop)',member='Start'",
        "type='method_call',interface='\(portalSession)',member='Close'",
        "type='signal',interface='\(portalSession)',member='Closed'",
        "type='signal',interface='\(portalRequest)',member='Response'",
        "type='method_call',interface='\(mutterSession)',member='Start'",
        "type='method_call',interface='\(mutterSession)',member='Stop'",
        "type='signal',interface='\(mutterSession)',member='Closed'",
        "type='method_call',interface='\(mutterRemoteDesktopSession)',member='Start'",
        "type='method_call',interface='\(mutterRemoteDesktopSession)',member='Stop'",
        "type='signal',interface='\(mutterRemoteDesktopSession)',member='Closed'",
        "type='method_return',sender='org.gnome.Mutter.RemoteDesktop'",
        "type='error',sender='org.gnome.Mutter.RemoteDesktop'",
        "type='method_return',sender='\(portalName)'",
        "type='error',sender='\(portalName)'",
        "type='method_return',sender='\(mutterName)'",
        "type='error',sender='\(mutterName)'",
    ]

    /// Reads a monitored message; nil for anything else, or anything malformed. Only the
    /// first argument is read, within small limits: a peer's message may be any size.
    public init?(_ message: any IncomingMessage) {
        switch message.kind {
        case .methodReturn:
            guard let service = message.sender, let client = message.destination, let serial = message.replySerial else { return nil }
            // The portal answers `Start` with its request object; Mutter with nothing.
            self = .answered(service: service, client: client, replySerial: serial, request: Self.firstPath(message))
        case .error:
            guard let client = message.destination, let serial = message.replySerial else { return nil }
            self = .failed(client: client, replySerial: serial)
        case .methodCall:
            guard let client = message.sender, let path = message.path else { return nil }
            switch (message.interface, message.member) {
            // A remote desktop session controls the input, and may cast the screen: counted as cast.
            case (Self.portalScreenCast, "Start"), (Self.portalRemoteDesktop, "Start"):
                guard let session = Self.firstPath(message) else { return nil }
                self = .start(.portal, session: session, client: client, serial: message.serial)
            case (Self.mutterSession, "Start"), (Self.mutterRemoteDesktopSession, "Start"): self = .start(.gnome, session: path, client: client, serial: message.serial)
            case (Self.portalSession, "Close"): self = .close(.portal, session: path, client: client)
            case (Self.mutterSession, "Stop"), (Self.mutterRemoteDesktopSession, "Stop"): self = .close(.gnome, session: path, client: client)
            default: return nil
            }
        case .signal:
            guard let service = message.sender, let path = message.path else { return nil }
            switch (message.interface, message.member) {
            case (Self.portalRequest, "Response"):
                guard case .uint32(let code)? = Self.firstArgument(message) else { return nil }
                self = .response(service: service, request: path, code: code)
            case (Self.portalSession, "Closed"): self = .closed(.portal, session: path, service: service)
            case (Self.mutterSession, "Closed"), (Self.mutterRemoteDesktopSession, "Closed"): self = .closed(.gnome, session: path, service: service)
            default: return nil
            }
        }
    }

    /// Enough to read a path or a code, and no more.
    private static let limits = DecodingLimits(maximumValues: 64, maximumStringBytes: ScreenCastSessions.maximumPathBytes + 1,
                                               maximumDepth: 4)

    private static func firstArgument(_ message: any IncomingMessage) -> BusValue? {
        (try? message.arguments(limits: limits))?.first
    }

    private static func firstPath(_ message: any IncomingMessage) -> String? {
        firstArgument(message)?.string
    }
}

extension ScreenCastSessions {
    /// How many sessions are casting, for the log.
    public var sessionCount: Int { sessions.count }
}
