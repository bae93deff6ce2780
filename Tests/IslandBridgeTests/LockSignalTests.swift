import IslandBridge
import SDBus
import Testing

@Suite("The desktop's lock reports: read from the owner of each name, followed by its signals only")
struct LockSignalTests {
    static let shell = ":1.5"
    static let hostile = ":1.9"
    static let logind = ":1.2"
    static let sessionPath = "/org/freedesktop/login1/session/_31"

    static func screensaver(_ kind: LockSignal.Kind, active: Bool) -> (FakeBus, LockSignal, Readings) {
        let bus = FakeBus()
        bus.answer = { call in
            if call.member == "GetNameOwner", call.arguments.first?.string == kind.service { return .success(.reply([.string(shell)])) }
            if call.member == "GetActive", call.destination == shell, call.interface == kind.service {
                return .success(.reply([.boolean(active)], from: shell))
            }
            return .failure(BusError(name: BusError.unknownMethod, message: "not here"))
        }
        let readings = Readings()
        let signal = LockSignal(kind, bus: bus) { readings.values.append($0) }
        try! signal.start()
        bus.run()
        return (bus, signal, readings)
    }

    static func activeChanged(_ kind: LockSignal.Kind, from sender: String, _ value: BusValue) -> FakeMessage {
        .signal(
            from: sender, path: kind == .gnome ? "/org/gnome/ScreenSaver" : "/ScreenSaver", interface: kind.service,
            member: "ActiveChanged", [value])
    }

    static func ownerChanged(_ name: String, from old: String, to new: String) -> FakeMessage {
        .signal(
            from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", [.string(name), .string(old), .string(new)])
    }

    @Test(
        "GNOME Shell's and the freedesktop screensaver's state is read, then followed by the owner's ActiveChanged",
        arguments: [LockSignal.Kind.gnome, .freedesktop])
    func follows(kind: LockSignal.Kind) {
        let (bus, signal, readings) = Self.screensaver(kind, active: false)
        readings.expectValues([nil, false])
        bus.send(Self.activeChanged(kind, from: Self.shell, .boolean(true)))
        bus.send(Self.activeChanged(kind, from: Self.shell, .boolean(false)))
        readings.expectValues([nil, false, true, false])
        withExtendedLifetime(signal) {}
    }

    @Test("an impostor's ActiveChanged, or one that is not a boolean, says nothing", arguments: [LockSignal.Kind.gnome, .freedesktop])
    func hostile(kind: LockSignal.Kind) {
        let (bus, signal, readings) = Self.screensaver(kind, active: true)
        bus.send(Self.activeChanged(kind, from: Self.hostile, .boolean(false)))
        bus.send(Self.activeChanged(kind, from: Self.shell, .string("false")))
        bus.send(Self.activeChanged(kind == .gnome ? .freedesktop : .gnome, from: Self.shell, .boolean(false)))
        readings.expectValues([nil, true], "the session stays locked")
        withExtendedLifetime(signal) {}
    }

    @Test("the owner leaving reads nil, and its old name's signals count no more")
    func ownerLeaves() {
        let (bus, signal, readings) = Self.screensaver(.gnome, active: true)
        bus.send(Self.ownerChanged("org.gnome.ScreenSaver", from: Self.shell, to: ""))
        readings.expectValues([nil, true, nil])
        bus.send(Self.activeChanged(.gnome, from: Self.shell, .boolean(true)))
        readings.expectValues([nil, true, nil])
        withExtendedLifetime(signal) {}
    }

    static func logindBus(locked: Bool) -> (FakeBus, LockSignal, Readings) {
        let bus = FakeBus()
        bus.answer = { call in
            if call.member == "GetNameOwner", call.arguments.first?.string == "org.freedesktop.login1" {
                return .success(.reply([.string(logind)]))
            }
            if call.member == "GetSession", call.destination == logind, call.arguments.first?.string == "7" {
                return .success(.reply([.objectPath(sessionPath)], from: logind))
            }
            if call.member == "Get", call.destination == logind, call.path == sessionPath,
                call.arguments.map(\.string) == ["org.freedesktop.login1.Session", "LockedHint"]
            {
                return .success(.reply([.variant(.boolean(locked))], from: logind))
            }
            return .failure(BusError(name: BusError.unknownMethod, message: "not here"))
        }
        let readings = Readings()
        let signal = LockSignal(.logind, bus: bus, sessionID: "7") { readings.values.append($0) }
        try! signal.start()
        bus.run()
        return (bus, signal, readings)
    }

    static func lockedHint(
        from sender: String, path: String = sessionPath, _ locked: Bool,
        interface: String = "org.freedesktop.login1.Session"
    ) -> FakeMessage {
        .signal(
            from: sender, path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(interface), .vardict([("LockedHint", .boolean(locked))]), .strings([])])
    }

    @Test("logind's LockedHint of the session is read, then followed by logind's own PropertiesChanged")
    func logindFollows() {
        let (bus, signal, readings) = Self.logindBus(locked: false)
        readings.expectValues([nil, false])
        bus.send(Self.lockedHint(from: Self.logind, true))
        readings.expectValues([nil, false, true])
        // Another peer, another session, another interface: nothing.
        bus.send(Self.lockedHint(from: Self.hostile, false))
        bus.send(Self.lockedHint(from: Self.logind, path: "/org/freedesktop/login1/session/_32", false))
        bus.send(Self.lockedHint(from: Self.logind, false, interface: "org.example.Other"))
        readings.expectValues([nil, false, true])
        bus.send(Self.lockedHint(from: Self.logind, false))
        readings.expectValues([nil, false, true, false])
        withExtendedLifetime(signal) {}
    }

    @Test("a session path that is no object path is not put in a match rule")
    func objectPaths() {
        #expect(LockSignalPaths.isObjectPath("/org/freedesktop/login1/session/_31"))
        #expect(!LockSignalPaths.isObjectPath("/x',sender='evil"))
        #expect(!LockSignalPaths.isObjectPath("relative"))
        #expect(!LockSignalPaths.isObjectPath("/" + String(repeating: "a", count: 300)))
    }
}

@Suite("The session's lock from every report, and islandd told one call at a time")
struct DesktopLockTests {
    @Test("locked while any report says so, by the one that knows most")
    func combines() {
        var lock = DesktopLock()
        #expect(lock.read(.logind, locked: false) == nil)
        #expect(lock.read(.logind, locked: true) == "the session is locked (logind)")
        #expect(lock.read(.gnome, locked: true) == "the session is locked (gnome)")
        #expect(lock.read(.freedesktop, locked: false) == nil)
        #expect(lock.read(.gnome, locked: nil) == "the session is locked (logind)")
        #expect(lock.read(.logind, locked: false) == "the session is unlocked")
        #expect(lock.lockedBy == nil)
    }

    @Test("one call at a time; only the latest wish waits; a failed call is due again at retry")
    func announces() {
        var lock = DesktopLock()
        _ = lock.read(.gnome, locked: true)
        let first = lock.nextCall()
        #expect(first?.source == .gnome)
        _ = lock.read(.gnome, locked: false)
        _ = lock.read(.gnome, locked: true)
        _ = lock.read(.gnome, locked: false)
        #expect(lock.nextCall() == nil, "one call is out")
        lock.completed(first!, succeeded: true)
        let second = lock.nextCall()
        #expect(second != nil && second?.on == false)
        lock.completed(second!, succeeded: false)
        #expect(lock.nextCall() == nil)
        lock.retry()
        #expect(lock.nextCall().map { !$0.on } == true)
    }

    @Test("stopping following forgets the reports and says nothing, even of a failed call")
    func stops() {
        var lock = DesktopLock()
        _ = lock.read(.gnome, locked: true)
        let call = lock.nextCall()
        lock.stopFollowing()
        lock.completed(call!, succeeded: false)
        lock.retry()
        #expect(lock.nextCall() == nil)
        #expect(lock.lockedBy == nil)
    }

    @Test("said again on request, even when islandd was told so already")
    func again() {
        var lock = DesktopLock()
        #expect(lock.nextCall() == nil, "a daemon starts unlocked")
        lock.announceAgain()
        #expect(lock.nextCall().map { !$0.on } == true)
    }
}
