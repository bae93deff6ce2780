import IslandBridge
import SDBus
import Testing

/// The screen-cast sessions the bridge follows into islandd's sharing (docs/design.md §13): a
/// portal session counts once the user chose what to share, a Mutter session once its start is
/// answered; each ends by close, closed, stop or its peers leaving; only the session's own
/// peers can end it; and nothing a flood of calls sends grows the tables.
/// Expects the screen to be shared by `expected` (nil: by nobody). One typed `#expect` for the
/// suite's many: each `#expect(sessions.sharedBy == .portal)` costs the test build 10-60 ms more of
/// type-checking than a call of this; a failure still shows both values at the caller's line.
private func expectSharedBy(
    _ sharedBy: ScreenCastSessions.Service?, _ expected: ScreenCastSessions.Service?, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(sharedBy == expected, comment, sourceLocation: sourceLocation)
}

@Suite struct ScreenCastSessionsTests {
    static let client = ":1.40"
    static let portal = ":1.7"
    static let mutter = ":1.3"
    static let session = "/org/freedesktop/portal/desktop/session/1_40/t1"
    static let request = "/org/freedesktop/portal/desktop/request/1_40/r1"
    static let mutterSession = "/org/gnome/Mutter/ScreenCast/Session/u1"

    /// The messages of a portal cast up to the user's choice, as a monitor sees them.
    static func portalStart(
        session: String = session, request: String = request, client: String = client, serial: UInt64 = 9,
        code: UInt32 = 0
    ) -> [FakeMessage] {
        [
            FakeMessage(
                kind: .methodCall, sender: client, destination: ScreenCastEvent.portalName, path: "/org/freedesktop/portal/desktop",
                interface: ScreenCastEvent.portalScreenCast, member: "Start", serial: serial,
                body: [.objectPath(session), .string(""), .array(elementSignature: "{sv}", [])]),
            FakeMessage(kind: .methodReturn, sender: portal, destination: client, replySerial: serial, body: [.objectPath(request)]),
            FakeMessage(
                kind: .signal, sender: portal, destination: client, path: request, interface: ScreenCastEvent.portalRequest,
                member: "Response", body: [.uint32(code), .array(elementSignature: "{sv}", [])]),
        ]
    }

    static func mutterStart(session: String = mutterSession, client: String = client, serial: UInt64 = 5) -> [FakeMessage] {
        [
            FakeMessage(
                kind: .methodCall, sender: client, destination: ScreenCastEvent.mutterName, path: session,
                interface: ScreenCastEvent.mutterSession, member: "Start", serial: serial),
            FakeMessage(kind: .methodReturn, sender: mutter, destination: client, replySerial: serial),
        ]
    }

    static func feed(_ messages: [FakeMessage], to sessions: inout ScreenCastSessions) {
        for message in messages {
            if let event = ScreenCastEvent(message) { sessions.observe(event) }
        }
    }

    @Test func aPortalCastCountsFromTheUsersChoiceUntilTheClientClosesIt() {
        var sessions = ScreenCastSessions()
        let messages = Self.portalStart()
        Self.feed(Array(messages.prefix(2)), to: &sessions)
        expectSharedBy(sessions.sharedBy, nil, "the dialog is still open")
        Self.feed([messages[2]], to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal)
        #expect(sessions.peers == [Self.client, Self.portal])

        // Someone else's Close, and a Closed from anyone but the portal, end nothing.
        Self.feed(
            [
                FakeMessage(kind: .methodCall, sender: ":1.99", path: Self.session, interface: ScreenCastEvent.portalSession, member: "Close"),
                FakeMessage(kind: .signal, sender: ":1.99", path: Self.session, interface: ScreenCastEvent.portalSession, member: "Closed"),
            ],
            to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal)

        Self.feed(
            [
                FakeMessage(
                    kind: .methodCall, sender: Self.client, destination: ScreenCastEvent.portalName, path: Self.session,
                    interface: ScreenCastEvent.portalSession, member: "Close", serial: 12)
            ], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
        #expect(sessions.peers.isEmpty)
    }

    @Test func aCancelledDialogOrAFailedStartSharesNothing() {
        var sessions = ScreenCastSessions()
        Self.feed(Self.portalStart(code: 1), to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
        let start = Self.portalStart(serial: 20)[0]
        Self.feed([start, FakeMessage(kind: .error, sender: Self.portal, destination: Self.client, replySerial: 20)], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
        #expect(sessions.peers.isEmpty, "the failed call is forgotten")
        // A Response on the request from another peer than the portal that answered.
        var forged = Self.portalStart(serial: 21)
        forged[2].sender = ":1.99"
        Self.feed(forged, to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
    }

    @Test func aRemoteDesktopSessionCountsAsACast() {
        var sessions = ScreenCastSessions()
        var messages = Self.portalStart()
        messages[0].interface = ScreenCastEvent.portalRemoteDesktop
        Self.feed(messages, to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal)
    }

    @Test func thePortalsClosedSignalEndsTheSession() {
        var sessions = ScreenCastSessions()
        Self.feed(Self.portalStart(), to: &sessions)
        Self.feed(
            [
                FakeMessage(
                    kind: .signal, sender: Self.portal, path: Self.session, interface: ScreenCastEvent.portalSession,
                    member: "Closed", body: [.array(elementSignature: "{sv}", [])])
            ], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
    }

    @Test func aMutterCastCountsOnceStartIsAnsweredAndEndsByStopOrClosed() {
        var sessions = ScreenCastSessions()
        Self.feed(Array(Self.mutterStart().prefix(1)), to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
        Self.feed(Array(Self.mutterStart().suffix(1)), to: &sessions)
        expectSharedBy(sessions.sharedBy, .gnome)
        Self.feed(
            [
                FakeMessage(
                    kind: .methodCall, sender: Self.client, path: Self.mutterSession, interface: ScreenCastEvent.mutterSession,
                    member: "Stop")
            ], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)

        Self.feed(Self.mutterStart(serial: 6), to: &sessions)
        expectSharedBy(sessions.sharedBy, .gnome)
        Self.feed(
            [
                FakeMessage(
                    kind: .signal, sender: Self.mutter, path: Self.mutterSession, interface: ScreenCastEvent.mutterSession,
                    member: "Closed")
            ], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
    }

    @Test func aMutterRemoteDesktopSessionCountsAsACast() {
        var sessions = ScreenCastSessions()
        var messages = Self.mutterStart(session: "/org/gnome/Mutter/RemoteDesktop/Session/u2")
        messages[0].interface = ScreenCastEvent.mutterRemoteDesktopSession
        Self.feed(messages, to: &sessions)
        expectSharedBy(sessions.sharedBy, .gnome)
        Self.feed(
            [
                FakeMessage(
                    kind: .methodCall, sender: Self.client, path: "/org/gnome/Mutter/RemoteDesktop/Session/u2",
                    interface: ScreenCastEvent.mutterRemoteDesktopSession, member: "Stop")
            ], to: &sessions)
        expectSharedBy(sessions.sharedBy, nil)
    }

    @Test func thePortalWinsWhenBothCastAndEachSessionEndsOnItsOwn() {
        var sessions = ScreenCastSessions()
        Self.feed(Self.mutterStart(client: ":1.8"), to: &sessions)
        Self.feed(Self.portalStart(), to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal)
        sessions.left(Self.client)
        expectSharedBy(sessions.sharedBy, .gnome, "the portal's client left; Mutter's session still casts")
        sessions.left(Self.mutter)
        expectSharedBy(sessions.sharedBy, nil, "the service left")
    }

    @Test func aFloodOfStartsCostsAFixedAmountAndStillCountsAsShared() {
        var sessions = ScreenCastSessions()
        for n in 0..<1000 {
            Self.feed(Self.portalStart(session: "/s/\(n)", request: "/r/\(n)", serial: UInt64(n + 1)), to: &sessions)
            // Starts never answered pile up too.
            Self.feed([Self.mutterStart(session: "/m/\(n)", serial: UInt64(100_000 + n))[0]], to: &sessions)
        }
        #expect(sessions.sessionCount == ScreenCastSessions.maximumSessions)
        #expect(sessions.peers == [Self.client, Self.portal])
        expectSharedBy(sessions.sharedBy, .portal)
        // A path longer than any real one is not taken.
        var other = ScreenCastSessions()
        Self.feed(Self.portalStart(session: "/" + String(repeating: "s", count: 400)), to: &other)
        expectSharedBy(other.sharedBy, nil)
    }

    /// A hostile peer's `Start`, for a session it does not own.
    static func hostileStart(_ sender: String, serial: UInt64) -> FakeMessage {
        FakeMessage(
            kind: .methodCall, sender: sender, destination: ScreenCastEvent.portalName, path: "/org/freedesktop/portal/desktop",
            interface: ScreenCastEvent.portalScreenCast, member: "Start", serial: serial,
            body: [.objectPath(session), .string(""), .array(elementSignature: "{sv}", [])])
    }

    @Test func anotherPeersFloodOfRefusedStartsNeverPushesOutAPendingStart() {
        var sessions = ScreenCastSessions()
        let real = Self.portalStart()
        Self.feed([real[0]], to: &sessions)
        // Far more than any table holds, faster than the portal refuses them: most are refused,
        // the rest never answered at all.
        let hostile = ":1.66"
        for serial in UInt64(1)...10_000 {
            Self.feed([Self.hostileStart(hostile, serial: serial)], to: &sessions)
            if serial % 3 != 0 {
                Self.feed([FakeMessage(kind: .error, sender: Self.portal, destination: hostile, replySerial: serial)], to: &sessions)
            }
        }
        Self.feed([real[1]], to: &sessions)
        // And while the user chooses, it goes on.
        for serial in UInt64(10_001)...20_000 { Self.feed([Self.hostileStart(hostile, serial: serial)], to: &sessions) }
        Self.feed([real[2]], to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal, "the real client's cast is counted")
        #expect(!sessions.peers.contains(hostile), "a call in flight is not followed")
    }

    @Test func aCallersOwnOldestStartGivesWayToItsNewest() {
        var sessions = ScreenCastSessions()
        let first = Self.portalStart(session: "/s/first", request: "/r/first", serial: 1)
        Self.feed([first[0]], to: &sessions)
        for serial in UInt64(2)...UInt64(1 + ScreenCastSessions.maximumPendingPerCaller) {
            Self.feed([Self.portalStart(serial: serial)[0]], to: &sessions)
        }
        Self.feed(Array(first.suffix(2)), to: &sessions)
        expectSharedBy(sessions.sharedBy, nil, "the caller's own oldest start went")
        let last = UInt64(1 + ScreenCastSessions.maximumPendingPerCaller)
        Self.feed(Array(Self.portalStart(serial: last).suffix(2)), to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal, "its newest is still pending")
    }

    @Test func manyCallersTakeTheirOwnPlacesTillEveryPlaceIsTaken() {
        var sessions = ScreenCastSessions()
        let real = Self.portalStart()
        Self.feed(Array(real.prefix(2)), to: &sessions)
        // Every other place taken, each by a caller whose start is never answered.
        for n in 1..<ScreenCastSessions.maximumCallers {
            Self.feed([Self.hostileStart(":2.\(n)", serial: 1)], to: &sessions)
        }
        Self.feed([real[2]], to: &sessions)
        expectSharedBy(sessions.sharedBy, .portal)

        // Beyond every place, a new caller takes the place of the one silent longest.
        var again = ScreenCastSessions()
        Self.feed(Array(real.prefix(2)), to: &again)
        for n in 1...ScreenCastSessions.maximumCallers {
            Self.feed([Self.hostileStart(":2.\(n)", serial: 1)], to: &again)
        }
        Self.feed([real[2]], to: &again)
        expectSharedBy(again.sharedBy, nil)
        #expect(again.peers.isEmpty, "nothing of the caller pushed out is followed")
    }

    @Test func whatIsNotAScreenCastIsNothing() {
        #expect(ScreenCastEvent(FakeMessage(kind: .methodCall, sender: Self.client, path: "/x", interface: "org.example.Other", member: "Start")) == nil)
        #expect(
            ScreenCastEvent(
                FakeMessage(
                    kind: .signal, sender: Self.portal, path: Self.request, interface: ScreenCastEvent.portalRequest,
                    member: "Response", body: [.string("0")])) == nil, "a code of the wrong type")
        #expect(
            ScreenCastEvent(
                FakeMessage(
                    kind: .methodCall, sender: Self.client, path: "/", interface: ScreenCastEvent.portalScreenCast,
                    member: "Start")) == nil, "no session argument")
    }

    @Test("[ScreenSharing] Follow= turns following off; it is on by default")
    func followSwitch() throws {
        #expect(BridgeConfiguration().followScreenSharing)
        let off = try BridgeConfiguration.parse("[ScreenSharing]\nFollow=no\n", path: "bridge.conf")
        #expect(!off.followScreenSharing && off.followFocus)
        #expect(throws: (any Error).self) { try BridgeConfiguration.parse("[ScreenSharing]\nFollow=maybe\n", path: "bridge.conf") }
    }

    @Test func theAnnouncerSendsOneCallAtATimeTheLatestWishWaitingAndRetriesFailures() {
        var announcer = SharingAnnouncer()
        announcer.shared(by: nil)
        #expect(announcer.nextCall() == nil, "nothing to say: nobody was told otherwise")
        announcer.shared(by: nil, again: true)
        let first = announcer.nextCall()
        #expect(first?.on == false)
        announcer.shared(by: .portal)
        announcer.shared(by: nil)
        announcer.shared(by: .gnome)
        #expect(announcer.nextCall() == nil, "one call at a time")
        announcer.completed(first!, succeeded: true)
        let latest = announcer.nextCall()
        #expect(latest?.source == .gnome)
        announcer.completed(latest!, succeeded: false)
        #expect(announcer.nextCall() == nil)
        announcer.retry()
        #expect(announcer.nextCall()?.source == .gnome)
    }
}
