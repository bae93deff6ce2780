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
/// session's hiding.
///
/// Every table is bounded and paths are at most `maximumPathBytes`, so a peer flooding `Start`
/// calls costs a fixed amount of memory — and what is pending is kept per caller (its unique
/// name): a caller's new `Start` pushes out only its own oldest pending one
/// (`maximumPendingPerCaller`), never another's, so that calls the portal refuses, sent as fast
/// as a peer can, cannot push a real client's `Start` out before the portal answers it. Only
/// when `maximumCallers` callers each have something pending does a new caller take the place
/// of the one silent longest. A full table of sessions takes no new session, which can only
/// keep the screen counted shared.
package struct ScreenCastSessions: Sendable {
    /// Which service casts: what islandd's `SetSharing` calls the source.
    package enum Service: String, Sendable, Hashable {
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
        let kind: Service
        /// The call's serial, for a `Start` call.
        let serial: UInt64
        /// The request's path and the service that answered, for a request.
        let request: String?
        let service: String?
    }

    /// What one caller has pending, oldest first.
    private struct Caller: Sendable {
        var pending: [Pending] = []
        /// When it last started something, in the order of observation: the caller silent
        /// longest gives way when every caller's place is taken.
        var lastStart: UInt64 = 0
    }

    package static let maximumSessions = 32
    package static let maximumPendingPerCaller = 4
    package static let maximumCallers = 64
    package static let maximumPathBytes = 255

    /// Started sessions, by object path.
    private(set) var sessions: [String: Session] = [:]
    /// What is pending, by caller.
    private var callers: [String: Caller] = [:]
    /// The caller of each request waiting for its `Response`, by the request's path: a
    /// `Response`, which any peer may send, costs one look-up.
    private var requestCallers: [String: String] = [:]
    private var starts: UInt64 = 0

    package init() {}

    /// Whether the screen is shared, and by which service first (the portal before Mutter:
    /// on GNOME a portal cast runs through Mutter too); nil while nothing is cast.
    package var sharedBy: Service? {
        if sessions.values.contains(where: { $0.kind == .portal }) { return .portal }
        return sessions.isEmpty ? nil : .gnome
    }

    /// The connections whose departure ends a session or a request waiting for the user:
    /// clients and services. A `Start` call in flight is answered in a moment, so its caller is
    /// not followed: following a name costs the bus a round trip, which a flood of calls would
    /// otherwise cost for every call.
    package var peers: Set<String> {
        var names = Set(sessions.values.flatMap { [$0.client, $0.service] })
        for (client, caller) in callers {
            for pending in caller.pending where pending.request != nil {
                names.insert(client)
                if let service = pending.service { names.insert(service) }
            }
        }
        return names
    }

    /// Takes what the monitor saw. Returns whether what the screen's sharing or `peers` may
    /// have changed: most messages (a call starting or refused) change neither, and cost the
    /// caller nothing more.
    @discardableResult
    package mutating func observe(_ event: ScreenCastEvent) -> Bool {
        switch event {
        case .start(let kind, let session, let client, let serial):
            guard Self.fits(session) else { return false }
            // A request pushed out changes the peers to follow.
            return add(Pending(session: session, kind: kind, serial: serial, request: nil, service: nil), for: client)
        case .answered(let service, let client, let replySerial, let request):
            guard let index = callers[client]?.pending.firstIndex(where: { $0.request == nil && $0.serial == replySerial }) else {
                return false
            }
            let call = callers[client]!.pending[index]
            guard call.kind == .portal else {
                _ = take(client, where: { $0 == call })
                return began(call.session, Session(client: client, service: service, kind: .gnome))
            }
            guard let request, Self.fits(request) else {
                _ = take(client, where: { $0 == call })
                return false
            }
            // The request takes the call's place: nobody's place changes hands.
            callers[client]!.pending[index] = Pending(session: call.session, kind: .portal, serial: 0, request: request, service: service)
            requestCallers[request] = client
            return true
        case .failed(let client, let replySerial):
            _ = take(client, where: { $0.request == nil && $0.serial == replySerial })
            return false
        case .response(let service, let request, let code):
            guard let client = requestCallers[request],
                let pending = take(client, where: { $0.request == request && $0.service == service })
            else { return false }
            // 0: the user chose what to share; 1 cancelled, 2 failed.
            if code == 0 { _ = began(pending.session, Session(client: client, service: service, kind: .portal)) }
            return true
        case .close(let kind, let session, let client):
            guard let started = sessions[session], started.kind == kind, started.client == client else { return false }
            sessions[session] = nil
            return true
        case .closed(let kind, let session, let service):
            guard let started = sessions[session], started.kind == kind, started.service == service else { return false }
            sessions[session] = nil
            return true
        }
    }

    /// Connection `name` left the bus: its sessions and its pending starts end.
    package mutating func left(_ name: String) {
        sessions = sessions.filter { $0.value.client != name && $0.value.service != name }
        if let caller = callers.removeValue(forKey: name) { forgetRequests(of: caller.pending) }
        for client in Set(requestCallers.values) {
            while take(client, where: { $0.service == name }) != nil {}
        }
    }

    /// Forgets everything: the bus went away, and with it every session seen on it.
    package mutating func reset() { self = ScreenCastSessions() }

    private mutating func began(_ path: String, _ session: Session) -> Bool {
        guard sessions[path] != nil || sessions.count < Self.maximumSessions else { return false }
        sessions[path] = session
        return true
    }

    private static func fits(_ path: String) -> Bool { !path.isEmpty && path.utf8.count <= maximumPathBytes }

    /// Adds `pending` to what `client` has pending: its own oldest goes when it has its fill;
    /// a new caller takes the place of the one silent longest only when every place is taken.
    /// Returns whether a request waiting for its `Response` went.
    private mutating func add(_ pending: Pending, for client: String) -> Bool {
        var pushedOut: [Pending] = []
        if callers[client] == nil, callers.count >= Self.maximumCallers,
            let silent = callers.min(by: { $0.value.lastStart < $1.value.lastStart })?.key
        {
            pushedOut = callers.removeValue(forKey: silent)?.pending ?? []
        }
        starts += 1
        var caller = callers[client] ?? Caller()
        if caller.pending.count >= Self.maximumPendingPerCaller { pushedOut.append(caller.pending.removeFirst()) }
        caller.pending.append(pending)
        caller.lastStart = starts
        callers[client] = caller
        forgetRequests(of: pushedOut)
        return pushedOut.contains { $0.request != nil }
    }

    /// Takes `client`'s first pending entry that `matches` out of the table.
    private mutating func take(_ client: String, where matches: (Pending) -> Bool) -> Pending? {
        guard var caller = callers[client], let index = caller.pending.firstIndex(where: matches) else { return nil }
        let pending = caller.pending.remove(at: index)
        callers[client] = caller.pending.isEmpty ? nil : caller
        forgetRequests(of: [pending])
        return pending
    }

    private mutating func forgetRequests(of pending: [Pending]) {
        for request in pending.compactMap(\.request) { requestCallers[request] = nil }
    }
}

/// What a screen-cast message says, read off the monitor (`init?(_:)`).
package enum ScreenCastEvent: Sendable, Hashable {
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

    package static let portalScreenCast = "org.freedesktop.portal.ScreenCast"
    package static let portalRemoteDesktop = "org.freedesktop.portal.RemoteDesktop"
    package static let portalSession = "org.freedesktop.portal.Session"
    package static let portalRequest = "org.freedesktop.portal.Request"
    package static let mutterSession = "org.gnome.Mutter.ScreenCast.Session"
    package static let mutterRemoteDesktopSession = "org.gnome.Mutter.RemoteDesktop.Session"
    package static let portalName = "org.freedesktop.portal.Desktop"
    package static let mutterName = "org.gnome.Mutter.ScreenCast"

    /// What the monitor is to see: the calls and signals above, and the answers of the two
    /// services (by their well-known names, which the bus resolves as messages pass).
    package static let monitorRules = [
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
    package init?(_ message: any IncomingMessage) {
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
            case (Self.mutterSession, "Start"), (Self.mutterRemoteDesktopSession, "Start"):
                self = .start(.gnome, session: path, client: client, serial: message.serial)
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
    private static let limits = DecodingLimits(
        maximumValues: 64, maximumStringBytes: ScreenCastSessions.maximumPathBytes + 1,
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
    package var sessionCount: Int { sessions.count }
}
