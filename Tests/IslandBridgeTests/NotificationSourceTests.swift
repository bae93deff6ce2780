import IslandBridge
import OrderedCollections
import OrderedJSON
import SDBus
import Testing

@Suite("Notification source: what the monitor sees of progress notifications becomes Progress activities")
struct NotificationSourceTests {
    static let server = ":1.5"
    static let client = ":1.9"

    static func harness() -> (SourceHarness, NotificationSource) {
        let harness = SourceHarness()
        harness.bus.answer = { call in
            call.member == "GetNameOwner" && call.arguments.first?.string == "org.freedesktop.Notifications"
                ? .success(.reply([.string(server)])) : nil
        }
        let source = NotificationSource(bus: harness.bus, senders: harness.senders, context: harness.context)
        source.start()
        harness.bus.run()
        harness.subject = source
        return (harness, source)
    }

    static func notify(
        from caller: String = client, serial: UInt64, replaces: UInt32 = 0, summary: String = "Downloading",
        hints: [(String, BusValue)]
    ) -> FakeMessage {
        FakeMessage(
            kind: .methodCall, sender: caller, destination: "org.freedesktop.Notifications",
            path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: "Notify",
            serial: serial,
            body: [
                .string("Files"), .uint32(replaces), .string(""), .string(summary), .string(""), .strings([]),
                .vardict(hints), .int32(-1),
            ])
    }

    static func reply(to caller: String = client, serial: UInt64, id: UInt32, from sender: String = server) -> FakeMessage {
        FakeMessage(
            kind: .methodReturn, sender: sender, destination: caller, serial: serial + 1000, replySerial: serial,
            body: [.uint32(id)])
    }

    static func closed(_ id: UInt32, reason: UInt32, from sender: String = server) -> FakeMessage {
        FakeMessage(
            kind: .signal, sender: sender, path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
            member: "NotificationClosed", body: [.uint32(id), .uint32(reason)])
    }

    @Test("a notification with a value hint starts an activity, its replacement updates it, its closing ends it")
    func lifecycle() throws {
        let (harness, source) = Self.harness()
        #expect(source.readsUnderWay == 0 && source.notifications.server == Self.server)
        harness.bus.identities[Self.client] = SenderIdentity(confinement: .flatpak(appID: "org.example.Files"))
        harness.bus.monitored(Self.notify(serial: 1, hints: [("value", .int32(20)), ("desktop-entry", .string("org.example.Files"))]))
        harness.bus.monitored(Self.reply(serial: 1, id: 7))
        #expect(harness.take().isEmpty, "the reply waits until its caller is identified")
        harness.bus.run()
        let started = try #require(harness.shown().last)
        let key = SourceKey.notification(busID: SourceHarness.busID, owner: Self.client, id: 7).description
        #expect(started.source == key)
        #expect(started.type == "Progress")
        expectJSON(started.content.state["percent"], 20)
        #expect(started.app == "Example Files", "shown as the app its sender is verified as")

        harness.bus.monitored(Self.notify(serial: 2, replaces: 7, hints: [("value", .int32(60))]))
        harness.bus.monitored(Self.reply(serial: 2, id: 7))
        let updated = try #require(harness.shown().last)
        #expect(updated.source == key)
        expectJSON(updated.content.state["percent"], 60)
        #expect(harness.bus.identified == [Self.client], "a sender is looked up once")

        harness.bus.monitored(Self.closed(7, reason: 1))
        guard case .finish(key, _, keep: true) = try #require(harness.take().last) else {
            Issue.record("the activity ends, kept a while as ended")
            return
        }
    }

    @Test("a claim its sender is not verified as shows the bridge's Notification")
    func unverifiedClaim() throws {
        let (harness, _) = Self.harness()
        harness.bus.monitored(Self.notify(serial: 1, hints: [("value", .int32(20)), ("desktop-entry", .string("org.example.Files"))]))
        harness.bus.monitored(Self.reply(serial: 1, id: 3))
        harness.bus.run()
        let activity = try #require(harness.shown().last)
        #expect(activity.app == "Notification")
    }

    @Test("replies and closings count only from the server's connection; notifications without progress are not followed")
    func sendersChecked() {
        let (harness, source) = Self.harness()
        harness.bus.monitored(Self.notify(serial: 1, hints: [("value", .int32(20))]))
        harness.bus.run()
        harness.bus.monitored(Self.reply(serial: 1, id: 3, from: ":1.66"))
        #expect(harness.take().isEmpty, "a forged reply")
        harness.bus.monitored(Self.reply(serial: 1, id: 3))
        #expect(harness.take().count == 1)
        harness.bus.monitored(Self.closed(3, reason: 1, from: ":1.66"))
        #expect(harness.take().isEmpty, "a forged closing")
        harness.bus.monitored(Self.notify(serial: 2, summary: "Hello", hints: [("urgency", .byte(1))]))
        harness.bus.monitored(Self.reply(serial: 2, id: 4))
        #expect(harness.take().isEmpty)
        #expect(source.notifications.followedIDs == [3])
    }

    @Test("a notification displaced by another connection's ends once its own connection leaves the bus")
    func ownerLeft() throws {
        let (harness, _) = Self.harness()
        harness.bus.monitored(Self.notify(serial: 1, hints: [("value", .int32(20))]))
        harness.bus.monitored(Self.reply(serial: 1, id: 3))
        harness.bus.run()
        let first = try #require(harness.shown().last)
        #expect(harness.bus.trackedNames == [Self.client])
        harness.bus.monitored(Self.notify(from: ":1.10", serial: 1, replaces: 3, hints: [("value", .int32(50))]))
        harness.bus.monitored(Self.reply(to: ":1.10", serial: 1, id: 3))
        harness.bus.run()
        #expect(harness.shown().count == 1, "another connection's notification of that id is another activity")
        harness.bus.disconnect(Self.client)
        #expect(harness.take() == [.finish(source: first.source, content: nil, keep: false)])
        harness.bus.run()
        #expect(harness.bus.trackedNames == [":1.10"], "the tracker of the connection that left is let go after its callback")
    }

    @Test("the notification server leaving ends what it showed; end() ends the rest")
    func serverLeft() throws {
        let (harness, source) = Self.harness()
        harness.bus.monitored(Self.notify(serial: 1, hints: [("value", .int32(20))]))
        harness.bus.monitored(Self.reply(serial: 1, id: 3))
        harness.bus.run()
        let activity = try #require(harness.shown().last)
        harness.bus.send(
            .signal(
                from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged",
                [.string("org.freedesktop.Notifications"), .string(Self.server), .string("")]))
        #expect(harness.take() == [.finish(source: activity.source, content: nil, keep: false)])
        #expect(source.end().isEmpty)
    }
}
