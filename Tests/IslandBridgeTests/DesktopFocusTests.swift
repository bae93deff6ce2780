import IslandBridge
import SDBus
import Testing

/// Expects the call the follower makes next to ask for focus `expected` (nil: no call). One typed
/// `#expect` for the suite's many: each `#expect(focus.nextCall() == false)` costs the test build
/// 10-60 ms more of type-checking than a call of this; a failure still shows both values.
private func expectCall(_ call: Bool?, _ expected: Bool?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(call == expected, comment, sourceLocation: sourceLocation)
}

@Suite("Do Not Disturb: the desktop's switch becomes islandd's focus")
struct DesktopFocusTests {
    @Test("the switch's first reading and each change are sent, one call at a time, the latest wish waiting")
    func follows() {
        var focus = DesktopFocus()
        expectCall(focus.nextCall(), nil, "nothing read, nothing sent")
        #expect(focus.read(.dunst, focus: false) == "following dunst's pause: Do Not Disturb off")
        expectCall(focus.nextCall(), false, "the first reading is sent: the desktop's switch wins at start")
        #expect(focus.read(.dunst, focus: true) != nil)
        #expect(focus.read(.dunst, focus: false) != nil)
        #expect(focus.read(.dunst, focus: true) != nil)
        expectCall(focus.nextCall(), nil, "one call in flight")
        focus.completed(false, succeeded: true)
        expectCall(focus.nextCall(), true, "then only the latest")
        focus.completed(true, succeeded: true)
        expectCall(focus.nextCall(), nil)
        #expect(focus.read(.dunst, focus: true) == nil, "the same reading again sends nothing")
        expectCall(focus.nextCall(), nil)
    }

    @Test("a switch going away leaves focus as it is; coming back with the same value sends nothing")
    func goneSwitch() {
        var focus = DesktopFocus()
        _ = focus.read(.dunst, focus: true)
        focus.completed(focus.nextCall()!, succeeded: true)
        #expect(focus.read(.dunst, focus: nil) == nil)
        expectCall(focus.nextCall(), nil)
        #expect(focus.read(.dunst, focus: true) == nil, "dunst restarted, still paused")
        #expect(focus.read(.dunst, focus: false) != nil)
        expectCall(focus.nextCall(), false)
    }

    @Test("dunst's pause is followed before GNOME's setting; GNOME's when dunst is not there")
    func precedence() {
        var focus = DesktopFocus()
        #expect(focus.read(.gnome, focus: true) == "following GNOME's show-banners: Do Not Disturb on")
        #expect(focus.read(.dunst, focus: false) == "following dunst's pause: Do Not Disturb off")
        expectCall(focus.nextCall(), false)
        focus.completed(false, succeeded: true)
        #expect(focus.read(.gnome, focus: false) == nil, "GNOME's setting changes nothing while dunst's is read")
        #expect(focus.read(.gnome, focus: true) == nil)
        expectCall(focus.nextCall(), nil)
        #expect(focus.read(.dunst, focus: nil) == "following GNOME's show-banners: Do Not Disturb on")
        expectCall(focus.nextCall(), true)
    }

    @Test("KDE's inhibition, the server's own, is followed before GNOME's setting")
    func kdePrecedence() {
        var focus = DesktopFocus()
        _ = focus.read(.gnome, focus: false)
        #expect(focus.read(.kde, focus: true) == "following KDE's notification inhibition: Do Not Disturb on")
        expectCall(focus.nextCall(), true)
    }

    @Test("a failed call is sent again at the next retry, unless a newer reading took its place")
    func retries() {
        var focus = DesktopFocus()
        _ = focus.read(.dunst, focus: true)
        focus.completed(focus.nextCall()!, succeeded: false)
        expectCall(focus.nextCall(), nil, "no loop: nothing until the retry")
        focus.retry()
        expectCall(focus.nextCall(), true)
        focus.completed(true, succeeded: false)
        _ = focus.read(.dunst, focus: false)
        focus.retry()
        expectCall(focus.nextCall(), false, "the newer wish, not the failed one")
        focus.completed(false, succeeded: true)
        focus.retry()
        expectCall(focus.nextCall(), nil)
    }

    @Test("[DoNotDisturb] Follow= turns following off; it is on by default")
    func configuration() throws {
        #expect(BridgeConfiguration().followFocus)
        let off = try BridgeConfiguration.parse("[DoNotDisturb]\nFollow=no\n", path: "bridge.conf")
        #expect(!off.followFocus)
        #expect(throws: (any Error).self) { try BridgeConfiguration.parse("[DoNotDisturb]\nFollow=maybe\n", path: "bridge.conf") }
    }
}

@Suite("dunst's pause: read from the notification server, followed by its signals only")
struct DunstPauseTests {
    static let dunst = ":1.5"
    static let hostile = ":1.9"

    static func start(paused: Bool) -> (FakeBus, ServerFocus, Readings) {
        let bus = FakeBus()
        bus.answer = { call in
            if call.member == "GetNameOwner" { return .success(.reply([.string(dunst)])) }
            if call.member == "Get", call.destination == dunst, call.arguments.map(\.string) == ["org.dunstproject.cmd0", "paused"] {
                return .success(.reply([.variant(.boolean(paused))], from: dunst))
            }
            return .failure(BusError(name: BusError.unknownMethod, message: "not dunst"))
        }
        let readings = Readings()
        let pause = ServerFocus(bus: bus, reader: .dunstPause) { readings.values.append($0) }
        try! pause.start()
        bus.run()
        return (bus, pause, readings)
    }

    static func changed(from sender: String, _ properties: [(String, BusValue)], interface: String = "org.dunstproject.cmd0") -> FakeMessage {
        .signal(
            from: sender, path: "/org/freedesktop/Notifications", interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", [.string(interface), .vardict(properties), .strings([])])
    }

    @Test("the owner's pause is read at start, then followed by its PropertiesChanged")
    func follows() {
        let (bus, pause, readings) = Self.start(paused: true)
        readings.expectValues([nil, true])
        bus.send(Self.changed(from: Self.dunst, [("paused", .boolean(false))]))
        bus.send(Self.changed(from: Self.dunst, [("displayedLength", .uint32(2))]))
        readings.expectValues([nil, true, false], "other properties say nothing")
        withExtendedLifetime(pause) {}
    }

    @Test("another peer's signal, or a paused that is not a boolean, pauses nothing")
    func hostile() {
        let (bus, pause, readings) = Self.start(paused: false)
        bus.send(Self.changed(from: Self.hostile, [("paused", .boolean(true))]))
        bus.send(Self.changed(from: Self.dunst, [("paused", .string("true"))]))
        bus.send(Self.changed(from: Self.dunst, [("paused", .boolean(true))], interface: "org.example.Other"))
        readings.expectValues([nil, false])
        withExtendedLifetime(pause) {}
    }

    @Test("a server that is not dunst reads as no switch; dunst leaving the bus too")
    func notDunst() {
        let (bus, pause, readings) = Self.start(paused: false)
        bus.send(
            .signal(
                from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", [.string("org.freedesktop.Notifications"), .string(Self.dunst), .string("")]))
        readings.expectValues([nil, false, nil])
        bus.send(
            .signal(
                from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", [.string("org.freedesktop.Notifications"), .string(""), .string(":1.7")]))
        bus.run()
        readings.expectValues([nil, false, nil, nil], "GNOME Shell's server answers the read with an error")
        bus.send(Self.changed(from: Self.dunst, [("paused", .boolean(true))]))
        #expect(readings.values.count == 4, "the old owner's signals count no more")
        withExtendedLifetime(pause) {}
    }
}

@Suite("KDE's notification inhibition: Inhibited of Plasma's org.freedesktop.Notifications")
struct KDEInhibitionTests {
    static let plasma = ":1.8"
    let plasma = Self.plasma

    @Test("read from the server and followed by its own PropertiesChanged; dunst's paused says nothing here")
    func follows() {
        let bus = FakeBus()
        bus.answer = { call in
            if call.member == "GetNameOwner" { return .success(.reply([.string(plasma)])) }
            if call.member == "Get", call.arguments.map(\.string) == ["org.freedesktop.Notifications", "Inhibited"] {
                return .success(.reply([.variant(.boolean(false))], from: plasma))
            }
            return .failure(BusError(name: BusError.unknownMethod, message: ""))
        }
        let readings = Readings()
        let inhibition = ServerFocus(bus: bus, reader: .kdeInhibition) { readings.values.append($0) }
        try! inhibition.start()
        bus.run()
        readings.expectValues([nil, false])
        bus.send(DunstPauseTests.changed(from: plasma, [("Inhibited", .boolean(true))], interface: "org.freedesktop.Notifications"))
        bus.send(DunstPauseTests.changed(from: plasma, [("paused", .boolean(false))]))
        bus.send(DunstPauseTests.changed(from: ":1.9", [("Inhibited", .boolean(false))], interface: "org.freedesktop.Notifications"))
        readings.expectValues([nil, false, true])
        withExtendedLifetime(inhibition) {}
    }
}

@Suite("GNOME's show-banners: read at start and after each dconf write that touches it, one read at a time")
struct GnomeFocusTests {
    final class Recorder {
        var reads = 0
        var values: [Bool?] = []
    }

    static func notify(_ prefix: String, _ changes: [String], from sender: String = ":1.3") -> FakeMessage {
        .signal(
            from: sender, path: "/ca/desrt/dconf/Writer/user", interface: "ca.desrt.dconf.Writer", member: "Notify",
            [.string(prefix), .strings(changes), .string(sender + ":user:0")])
    }

    @Test("false is Do Not Disturb; writes elsewhere read nothing; a flood of writes is one read more")
    func follows() {
        let bus = FakeBus()
        let recorder = Recorder()
        let gnome = GnomeFocus(bus: bus, read: { recorder.reads += 1 }, reading: { recorder.values.append($0) })
        try! gnome.start()
        #expect(recorder.reads == 1, "read at start")
        gnome.answered(showBanners: true)
        #expect(recorder.values == [false])

        bus.send(Self.notify("/org/gnome/desktop/interface/", ["color-scheme"]))
        bus.send(Self.notify("/org/gnome/desktop/notifications/application/", ["org-example-app/enable"]))
        #expect(recorder.reads == 1, "writes of other keys read nothing")

        bus.send(Self.notify("/org/gnome/desktop/notifications/show-banners", [""]))
        #expect(recorder.reads == 2)
        for _ in 0..<1000 { bus.send(Self.notify("/org/gnome/desktop/notifications/", ["show-banners"], from: ":1.66")) }
        #expect(recorder.reads == 2, "one read at a time")
        gnome.answered(showBanners: false)
        #expect(recorder.values == [false, true])
        #expect(recorder.reads == 3, "and one more for all that came meanwhile")
        gnome.answered(showBanners: false)
        gnome.answered(showBanners: true)
        #expect(recorder.values == [false, true, true], "an answer nobody asked for is ignored")

        bus.send(Self.notify("/", ["org/gnome/"]))
        #expect(recorder.reads == 4, "a reset of a tree above the key reads it again")
        gnome.answered(showBanners: nil)
        #expect(recorder.values.last == .some(nil), "unreadable is no switch")
    }

    @Test("which writes touch the key")
    func touches() {
        #expect(GnomeFocus.touchesKey(prefix: "/org/gnome/desktop/notifications/show-banners", changes: [""]))
        #expect(GnomeFocus.touchesKey(prefix: "/org/gnome/desktop/notifications/", changes: ["a", "show-banners"]))
        #expect(GnomeFocus.touchesKey(prefix: "/org/gnome/", changes: ["desktop/"]))
        #expect(!GnomeFocus.touchesKey(prefix: "/org/gnome/desktop/notifications/", changes: ["show-banners-x", "show-in-lock-screen"]))
        #expect(!GnomeFocus.touchesKey(prefix: "/org/gnome/desktop/notifications/show-banners/", changes: [""]))
    }
}

@Suite("swaync's Do Not Disturb: GetDnd, then its SubscribeV2 and Subscribe signals")
struct SwayncFocusTests {
    static let swaync = ":1.4"
    let swaync = Self.swaync

    static func subscribe(_ member: String, from sender: String, _ body: [BusValue]) -> FakeMessage {
        .signal(from: sender, path: "/org/erikreider/swaync/cc", interface: "org.erikreider.swaync.cc", member: member, body)
    }

    @Test("read at start, followed by the owner's signals only")
    func follows() {
        let bus = FakeBus()
        bus.answer = { call in
            if call.member == "GetNameOwner" { return .success(.reply([.string(swaync)])) }
            if call.member == "GetDnd", call.destination == swaync { return .success(.reply([.boolean(true)], from: swaync)) }
            return .failure(BusError(name: BusError.unknownMethod, message: ""))
        }
        let readings = Readings()
        let dnd = ServerFocus(bus: bus, reader: .swaync) { readings.values.append($0) }
        try! dnd.start()
        bus.run()
        readings.expectValues([nil, true])
        bus.send(Self.subscribe("SubscribeV2", from: swaync, [.uint32(3), .boolean(false), .boolean(false), .boolean(false)]))
        bus.send(Self.subscribe("Subscribe", from: swaync, [.uint32(3), .boolean(true)]))
        bus.send(Self.subscribe("SubscribeV2", from: ":1.9", [.uint32(0), .boolean(false), .boolean(false), .boolean(false)]))
        bus.send(Self.subscribe("SubscribeV2", from: swaync, [.uint32(0), .string("false")]))
        readings.expectValues([nil, true, false, true])
        withExtendedLifetime(dnd) {}
    }
}

@Suite("mako's do-not-disturb mode: Modes read at start and again when mako invalidates it")
struct MakoModeTests {
    static let mako = ":1.6"
    let mako = Self.mako

    final class Modes {
        var current: [String] = ["default"]
    }

    static func invalidated(from sender: String) -> FakeMessage {
        .signal(
            from: sender, path: "/fr/emersion/Mako", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string("fr.emersion.Mako"), .vardict([]), .strings(["Modes"])])
    }

    @Test("the mode's presence is Do Not Disturb; only the owner's invalidations read again, one read at a time")
    func follows() {
        let bus = FakeBus()
        let modes = Modes()
        var answering = true
        bus.answer = { call in
            if call.member == "GetNameOwner" { return .success(.reply([.string(mako)])) }
            if call.member == "Get", call.destination == mako, call.arguments.map(\.string) == ["fr.emersion.Mako", "Modes"] {
                return answering ? .success(.reply([.variant(.strings(modes.current))], from: mako)) : nil
            }
            return .failure(BusError(name: BusError.unknownMethod, message: ""))
        }
        let readings = Readings()
        let mode = ServerFocus(bus: bus, reader: .mako) { readings.values.append($0) }
        try! mode.start()
        bus.run()
        readings.expectValues([nil, false])

        modes.current = ["default", "do-not-disturb"]
        bus.send(Self.invalidated(from: ":1.9"))
        bus.run()
        readings.expectValues([nil, false], "another peer's signal reads nothing")

        answering = false
        for _ in 0..<100 { bus.send(Self.invalidated(from: mako)) }
        #expect(bus.waiting.count == 1, "one read at a time")
        answering = true
        bus.run()
        readings.expectValues([nil, false, true, true], "and one more for all that came meanwhile")
        withExtendedLifetime(mode) {}
    }
}
