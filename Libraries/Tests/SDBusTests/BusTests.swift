import Foundation
import SDBus
import Synchronization
import Testing

/// SDBus against a real dbus-daemon: every message here crosses a real bus.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt-get install dbus-daemon)"), .serialized)
struct BusTests {
    static let echo = ExportedInterface(
        name: "org.island.Test.Echo",
        methods: [
            .init("Echo", parameters: "a{sv}(is)", results: "a{sv}(is)"),
            .init("Fail", parameters: "s"),
            .init("Count", parameters: "", results: "u"),
            .init("Fire", parameters: "", noReply: true),
        ],
        signals: [.init("Ping", signature: "s")])

    @Test("a bus connection on the loop is named by the bus, and its calls are answered")
    func connectAndCall() async throws {
        try await withPrivateBus { privateBus in
            let loop = try BusLoop()
            defer { loop.shutdown() }
            let peer = LoopActor(loop: loop)
            let unique = try await peer.connect("a", address: privateBus.address)
            #expect(unique.hasPrefix(":"))
            let names = try await peer.call(
                "a", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "ListNames")
            #expect(names.first?.stringList?.contains(unique) == true)
            await #expect(throws: BusError.self) {
                _ = try await peer.call(
                    "a", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetNameOwner",
                    arguments: [.string("org.island.Nobody")])
            }
            do {
                _ = try await peer.call(
                    "a", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetNameOwner",
                    arguments: [.string("org.island.Nobody")])
            } catch let error as BusError {
                #expect(error.name == BusError.nameHasNoOwner)
            }
            await peer.closeAll()
        }
    }

    @Test("a served object answers with the values it was sent, refuses wrong signatures, and introspects")
    func servedObject() async throws {
        try await withServerAndClient { peer, server in
            let calls = Mutex(0)
            try await peer.export(Self.echo, at: "/org/island/Test", on: "server") { message in
                calls.withLock { $0 += 1 }
                switch message.member {
                case "Echo": return .reply((try? message.arguments()) ?? [])
                case "Fail": return .failure(BusError(name: "org.island.Test.Error.Refused", message: "no"))
                default: return .reply([.uint32(UInt32(calls.withLock { $0 }))])
                }
            }
            let sent: [BusValue] = [
                .vardict([("title", .string("Über → ✓")), ("n", .int32(-4)), ("list", .strings(["a", "b"]))]),
                .structure([.int32(7), .string("seven")]),
            ]
            let echoed = try await peer.call(
                "client", destination: server, path: "/org/island/Test",
                interface: "org.island.Test.Echo", member: "Echo", arguments: sent)
            #expect(echoed == sent.map(Self.variantsUnwrappedNowhere))
            #expect(echoed.first?.dictionary?["title"]?.string == "Über → ✓")

            do {
                _ = try await peer.call(
                    "client", destination: server, path: "/org/island/Test",
                    interface: "org.island.Test.Echo", member: "Fail", arguments: [.string("x")])
                Issue.record("Fail answered")
            } catch let error as BusError {
                #expect(error.name == "org.island.Test.Error.Refused")
                #expect(error.message == "no")
            }
            let before = calls.withLock { $0 }
            do {
                _ = try await peer.call(
                    "client", destination: server, path: "/org/island/Test",
                    interface: "org.island.Test.Echo", member: "Fail", arguments: [.uint32(1)])
                Issue.record("a call with the wrong signature was answered")
            } catch let error as BusError {
                #expect(error.name == BusError.invalidArgs)
            }
            #expect(calls.withLock { $0 } == before, "sd-bus refuses a wrong signature before the handler")

            let xml = try await peer.call(
                "client", destination: server, path: "/org/island/Test",
                interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            let text = xml.first?.string ?? ""
            #expect(text.contains("<interface name=\"org.island.Test.Echo\">"))
            #expect(text.contains("<method name=\"Echo\">"))
            #expect(text.contains("<signal name=\"Ping\">"))
            await peer.closeAll()
        }
    }

    /// Values come back as they were sent (no variant is unwrapped by reading).
    static func variantsUnwrappedNowhere(_ value: BusValue) -> BusValue { value }

    @Test("a call sent expecting no reply reaches its method")
    func callWithoutReply() async throws {
        try await withServerAndClient { peer, server in
            let (fired, fire) = AsyncStream.makeStream(of: String?.self)
            try await peer.export(Self.echo, at: "/org/island/Test", on: "server") { message in
                fire.yield(message.member)
                return .reply([.uint32(1)])
            }
            try await peer.send(
                on: "client", destination: server, path: "/org/island/Test",
                interface: "org.island.Test.Echo", member: "Fire")
            #expect(await first(fired) == "Fire")
            await peer.closeAll()
        }
    }

    @Test("a match hears a signal another connection emits; dropping the slot stops it")
    func signals() async throws {
        try await withPrivateBus { privateBus in
            let loop = try BusLoop()
            defer { loop.shutdown() }
            let peer = LoopActor(loop: loop)
            let emitter = try await peer.connect("emitter", address: privateBus.address)
            _ = try await peer.connect("listener", address: privateBus.address)
            let (heard, hear) = AsyncStream.makeStream(of: String.self)
            try await peer.match("type='signal',interface='org.island.Test.Echo',member='Ping'", on: "listener") { message in
                if message.sender == emitter, let text = try? message.arguments().first?.string { hear.yield(text) }
            }
            // The match is installed asynchronously: a round trip on the same connection orders it.
            _ = try await peer.call(
                "listener", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer", member: "Ping")
            try await peer.emit(
                on: "emitter", path: "/org/island/Test", interface: "org.island.Test.Echo", member: "Ping",
                arguments: [.string("hello")])
            var iterator = heard.makeAsyncIterator()
            #expect(await iterator.next() == "hello")
            await peer.dropSlots()
            try await peer.emit(
                on: "emitter", path: "/org/island/Test", interface: "org.island.Test.Echo", member: "Ping",
                arguments: [.string("unheard")])
            try await peer.emit(
                on: "emitter", path: "/org/island/Test", interface: "org.island.Test.Echo", member: "Ping",
                arguments: [.string("unheard either")])
            // The listener's next round trip comes after both signals would have.
            _ = try await peer.call(
                "listener", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer", member: "Ping")
            hear.finish()
            #expect(await iterator.next() == nil, "nothing was heard once the slot was dropped")
            await peer.closeAll()
        }
    }

    @Test("names: owner, queued, taken; a tracker fires when its name leaves the bus")
    func namesAndTracking() async throws {
        try await withPrivateBus { privateBus in
            let loop = try BusLoop()
            defer { loop.shutdown() }
            let peer = LoopActor(loop: loop)
            let first = try await peer.connect("first", address: privateBus.address)
            _ = try await peer.connect("second", address: privateBus.address)
            _ = try await peer.connect("third", address: privateBus.address)
            #expect(try await peer.requestName("org.island.Test.Name", on: "first", queue: false) == .owner)
            #expect(try await peer.requestName("org.island.Test.Name", on: "second", queue: true) == .queued)
            #expect(try await peer.requestName("org.island.Test.Name", on: "third", queue: false) == .taken)

            let (gone, tell) = AsyncStream.makeStream(of: Void.self)
            try await peer.track([first], on: "third") { tell.yield() }
            await peer.close("first")
            #expect(await SDBusTests.first(gone) != nil, "the tracker heard the first connection leave")
            let owner = try await peer.call(
                "third", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "GetNameOwner",
                arguments: [.string("org.island.Test.Name")])
            let second = await peer.uniqueName(of: "second")
            #expect(owner.first?.string == second, "the queued connection owns the name now")

            // A name already gone: the tracker fires at once.
            let (alreadyGone, tellGone) = AsyncStream.makeStream(of: Void.self)
            try await peer.track([":1.9999"], on: "third") { tellGone.yield() }
            #expect(await SDBusTests.first(alreadyGone) != nil)
            await peer.closeAll()
        }
    }

    @Test("a monitor sees calls and replies between other peers, and never answers them")
    func monitor() async throws {
        try await withPrivateBus { privateBus in
            let loop = try BusLoop()
            defer { loop.shutdown() }
            let peer = LoopActor(loop: loop)
            let server = try await peer.connect("server", address: privateBus.address)
            let client = try await peer.connect("client", address: privateBus.address)
            try await peer.export(Self.echo, at: "/org/island/Test", on: "server") { message in
                .reply([.uint32(42)])
            }
            let (seen, see) = AsyncStream.makeStream(of: (BusMessage.Kind, String?, UInt64, UInt64?, [BusValue]).self)
            try await peer.monitor(
                address: privateBus.address,
                rules: [
                    "type='method_call',interface='org.island.Test.Echo',member='Count'",
                    "type='method_return',sender='\(server)'",
                ]
            ) { message in
                see.yield((message.kind, message.sender, message.serial, message.replySerial, (try? message.arguments()) ?? []))
            }
            let answer = try await peer.call(
                "client", destination: server, path: "/org/island/Test",
                interface: "org.island.Test.Echo", member: "Count")
            #expect(answer == [.uint32(42)], "the monitor did not answer in the server's place")
            var iterator = seen.makeAsyncIterator()
            let call = await iterator.next()
            let reply = await iterator.next()
            #expect(call?.0 == .methodCall)
            #expect(call?.1 == client)
            #expect(reply?.0 == .methodReturn)
            #expect(reply?.1 == server)
            #expect(reply?.3 == call?.2, "the reply answers the call it saw")
            #expect(reply?.4 == [.uint32(42)])
            await peer.closeAll()
        }
    }

    @Test("untrusted messages are read within limits: long strings cut on a character, long arrays and deep nesting skipped")
    func decodingLimits() async throws {
        try await withServerAndClient { peer, server in
            let limits = DecodingLimits(maximumValues: 100, maximumStringBytes: 10, maximumDepth: 3)
            let (received, receive) = AsyncStream.makeStream(of: [BusValue].self)
            try await peer.export(
                ExportedInterface(name: "org.island.Test.Sink", methods: [.init("Take", parameters: "sasv")]),
                at: "/sink", on: "server"
            ) { message in
                receive.yield((try? message.arguments(limits: limits)) ?? [])
                return .reply([])
            }
            var deep = BusValue.string("bottom")
            for _ in 0..<10 { deep = .variant(deep) }
            _ = try await peer.call(
                "client", destination: server, path: "/sink", interface: "org.island.Test.Sink",
                member: "Take",
                arguments: [.string("ééééééééé"), .strings((0..<10_000).map(String.init)), deep])
            let values = await first(received) ?? []
            #expect(values.first == .string("ééééé"), "ten bytes keep five two-byte characters")
            let kept = values.dropFirst().first?.elements ?? []
            #expect(kept.count < 100, "the array stops at the value budget")
            #expect(kept.first == .string("0"))
            #expect(values.count == 2, "the budget ran out before the nested variant, which is skipped")
            await peer.closeAll()
        }
    }

    @Test("losing the bus is told once; a new connection works once the bus is back")
    func disconnect() async throws {
        try await withPrivateBus { privateBus in
            let loop = try BusLoop()
            defer { loop.shutdown() }
            let peer = LoopActor(loop: loop)
            let (lost, tell) = AsyncStream.makeStream(of: Void.self)
            _ = try await peer.connect("a", address: privateBus.address) { tell.yield() }
            _ = try await peer.connect("same", address: privateBus.address)
            let before = await peer.busID(of: "a")
            #expect(before.count == 32)
            #expect(await peer.busID(of: "same") == before, "one bus, one id")
            try await privateBus.restart()
            #expect(await first(lost) != nil)
            #expect(await peer.isOpen("a") == false)
            _ = try await peer.connect("b", address: privateBus.address)
            #expect(await peer.busID(of: "b") != before, "a new bus on the same address has a new id")
            let names = try await peer.call(
                "b", destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "ListNames")
            #expect(names.first?.stringList?.isEmpty == false)
            await peer.closeAll()
        }
    }

    @Test("the loop runs an actor's jobs on its thread; a timer fires after its delay, and not once disarmed")
    func loopAndTimer() async throws {
        let loop = try BusLoop()
        defer { loop.shutdown() }
        let peer = LoopActor(loop: loop)
        #expect(await peer.onLoopThread())
        #expect(!loop.isCurrent)
        // A timer never fires before its deadline, which the loop counts from when it woke to
        // arm it, after this instant: a lower bound that load can only lengthen (less 1 ms:
        // sd-event counts whole microseconds).
        let (fired, fire) = AsyncStream.makeStream(of: Void.self)
        let armed = ContinuousClock.now
        try await peer.timer(after: .milliseconds(20)) { fire.yield() }
        #expect(await first(fired) != nil)
        #expect(ContinuousClock.now - armed >= .milliseconds(19))

        // Disarmed, it does not fire: a timer armed after it for longer fires, and the loop,
        // which runs what is due in the order of the deadlines, has not run the disarmed one
        // before it nor by the time it answers a job queued after.
        let early = FiredCount()
        let (late, fireLate) = AsyncStream.makeStream(of: Void.self)
        try await peer.disarmedTimer(after: .milliseconds(20)) { early.fire() }
        try await peer.timer(after: .milliseconds(40)) { fireLate.yield() }
        #expect(await first(late) != nil)
        #expect(await peer.onLoopThread())
        #expect(early.count == 0)
    }
}

/// How many times a timer fired.
final class FiredCount: Sendable {
    private let fired = Mutex(0)
    func fire() { fired.withLock { $0 += 1 } }
    var count: Int { fired.withLock { $0 } }
}

extension LoopActor {
    func export(
        _ interface: ExportedInterface, at path: String, on name: String,
        handler: @escaping (BusMessage) -> MethodResult
    ) throws {
        keep(try bus(name).export(interface, at: path, handler: handler))
    }

    func match(_ rule: String, on name: String, _ handler: @escaping (BusMessage) -> Void) throws {
        keep(try bus(name).addMatch(rule, handler))
    }

    func emit(on name: String, path: String, interface: String, member: String, arguments: [BusValue]) throws {
        try bus(name).emitSignal(path: path, interface: interface, member: member, arguments: arguments)
    }

    func requestName(_ wellKnown: String, on name: String, queue: Bool) async throws -> Bus.NameOwnership {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try bus(name).requestName(wellKnown, allowReplacement: false, queue: queue) { continuation.resume(with: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    func track(_ names: [String], on name: String, whenGone: @escaping () -> Void) throws {
        keep(try bus(name).track(names, whenGone: whenGone))
    }

    func monitor(address: String, rules: [String], handler: @escaping (BusMessage) -> Void) throws {
        let bus = try Bus.monitor(
            address: address, rules: rules, loop: loop, description: "monitor", handler: handler,
            onDisconnect: {})
        buses["monitor"] = bus
    }

    func isOpen(_ name: String) -> Bool { buses[name]?.isOpen ?? false }

    func uniqueName(of name: String) -> String? { buses[name]?.uniqueName }

    func busID(of name: String) -> String { buses[name]?.busID ?? "" }

    func send(on name: String, destination: String, path: String, interface: String, member: String) throws {
        try bus(name).send(destination: destination, path: path, interface: interface, member: member)
    }

    func onLoopThread() -> Bool { loop.isCurrent }

    func dropSlots() { slots = [] }

    func disarmedTimer(after delay: Duration, fire: @escaping () -> Void) throws {
        let timer = try LoopTimer(loop: loop, fire: fire)
        timer.arm(after: delay)
        timer.disarm()
        keep(timer)
    }

    func timer(after delay: Duration, fire: @escaping () -> Void) throws {
        let timer = try LoopTimer(loop: loop, fire: fire)
        timer.arm(after: delay)
        keep(timer)
    }
}
