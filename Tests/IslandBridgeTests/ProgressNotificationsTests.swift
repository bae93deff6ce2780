import OrderedCollections
import IslandBridge
import OrderedJSON
import SDBus
import Testing

@Suite("Progress notifications, as a monitor sees them")
struct ProgressNotificationsTests {
    static func arguments(
        app: String = "App", replaces: UInt32 = 0, summary: String = "Copying", body: String = "",
        hints: [(String, BusValue)]
    ) -> [BusValue] {
        [.string(app), .uint32(replaces), .string(""), .string(summary), .string(body), .strings([]), .vardict(hints), .int32(-1)]
    }

    static func tracker() -> ProgressNotifications {
        var tracker = ProgressNotifications(busID: "bus")
        _ = tracker.serverChanged(to: ":1.5")
        return tracker
    }

    static func noEntries(_ id: String) -> DesktopEntry? { nil }

    @Test("a Notify with a value hint becomes a Progress activity once the server answers with its id")
    func appears() throws {
        var tracker = Self.tracker()
        let call = try #require(NotifyCall(arguments: Self.arguments(hints: [("value", .int32(40))])))
        tracker.called(call, caller: ":1.9", serial: 7, destination: "org.freedesktop.Notifications")
        #expect(
            tracker.replied(from: ":1.6", to: ":1.9", replySerial: 7, id: 3, now: 0, lookup: Self.noEntries).isEmpty,
            "a reply from another connection than the server's counts for nothing")
        let changes = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 7, id: 3, now: 0, lookup: Self.noEntries)
        guard case .show(let activity) = try #require(changes.first) else { return }
        #expect(activity.type == "Progress")
        expectJSON(activity.content.state["percent"], 40)
        expectJSON(activity.content.state["title"], "Copying")
        #expect(
            activity.attributes["app"] == ["name": "Notification", "icon": .string(SourceApp.bridgeIcon), "label": "App"],
            "an unidentified sender is the bridge's own Notification, its app name only a label")
        #expect(tracker.followedIDs == [3])
    }

    @Test("x-gnome-privacy-scope user makes it a PrivateProgress (private on the lock screen), for as long as it lasts")
    func privacyScope() throws {
        func types(_ calls: [[(String, BusValue)]]) throws -> [String] {
            var tracker = Self.tracker()
            var types: [String] = []
            for (index, hints) in calls.enumerated() {
                let serial = UInt64(index + 1)
                let call = try #require(NotifyCall(arguments: Self.arguments(replaces: index == 0 ? 0 : 3, hints: hints)))
                tracker.called(call, caller: ":1.9", serial: serial, destination: ":1.5")
                for case .show(let activity) in tracker.replied(
                    from: ":1.5", to: ":1.9", replySerial: serial, id: 3, now: 0,
                    lookup: Self.noEntries)
                {
                    types.append(activity.type)
                }
            }
            return types
        }
        let user: (String, BusValue) = ("x-gnome-privacy-scope", .string("user"))
        #expect(try types([[("value", .int32(40)), user]]) == ["PrivateProgress"])
        #expect(try types([[("value", .int32(40)), ("x-gnome-privacy-scope", .string("system"))]]) == ["Progress"])
        #expect(try types([[("value", .int32(40))]]) == ["Progress"], "no hint: the layout's level")
        #expect(
            try types([[("value", .int32(40)), ("x-gnome-privacy-scope", .string("USER"))]]) == ["Progress"],
            "only the values GNOME defines")
        #expect(try types([[("value", .int32(40)), ("x-gnome-privacy-scope", .int32(1))]]) == ["Progress"])
        // An activity's type is fixed: a replacement's hint does not change it.
        #expect(try types([[("value", .int32(40)), user], [("value", .int32(60))]]) == ["PrivateProgress", "PrivateProgress"])
    }

    @Test("replaces_id updates it in place; 100 ends it, kept listed")
    func replacesAndEnds() throws {
        var tracker = Self.tracker()
        func notify(_ replaces: UInt32, _ value: Int32, serial: UInt64, id: UInt32) -> [SourceChange] {
            let call = NotifyCall(arguments: Self.arguments(replaces: replaces, hints: [("value", .int32(value))]))!
            tracker.called(call, caller: ":1.9", serial: serial, destination: ":1.5")
            return tracker.replied(from: ":1.5", to: ":1.9", replySerial: serial, id: id, now: Double(serial), lookup: Self.noEntries)
        }
        guard case .show(let first) = notify(0, 40, serial: 1, id: 3).first,
            case .show(let second) = notify(3, 80, serial: 2, id: 3).first
        else {
            Issue.record("expected shows")
            return
        }
        #expect(second.source == first.source)
        expectJSON(second.content.state["percent"], 80)
        let last = notify(3, 100, serial: 3, id: 3)
        #expect(
            last == [
                .finish(
                    source: first.source,
                    content: BridgedContent(
                        state: ["title": "Copying", "percent": 100, "done": true], relevance: Rank.Tier.progress.relevance), keep: true)
            ])
        #expect(tracker.followedIDs.isEmpty)
    }

    @Test("a stacking server closes the old one before answering the replacement: one activity throughout")
    func stackTags() throws {
        var tracker = Self.tracker()
        let tag: [(String, BusValue)] = [("x-dunst-stack-tag", .string("dl"))]
        tracker.called(
            NotifyCall(arguments: Self.arguments(hints: tag + [("value", .byte(10))]))!, caller: ":1.9", serial: 1,
            destination: "org.freedesktop.Notifications")
        guard case .show(let first) = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 1, id: 4, now: 0, lookup: Self.noEntries).first
        else { return }
        tracker.called(
            NotifyCall(arguments: Self.arguments(hints: tag + [("value", .uint32(60))]))!, caller: ":1.9", serial: 2,
            destination: "org.freedesktop.Notifications")
        #expect(tracker.closed(id: 4, reason: 3, from: ":1.5").isEmpty, "the replacement, not the end")
        guard case .show(let second) = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 2, id: 5, now: 1, lookup: Self.noEntries).first
        else { return }
        #expect(second.source == first.source)
        expectJSON(second.content.state["percent"], 60)
        #expect(
            tracker.closed(id: 5, reason: 2, from: ":1.5") == [.finish(source: first.source, content: nil, keep: false)],
            "dismissed by the user: gone at once")
    }

    @Test("transfer categories, failures, and a replacement that shows no progress")
    func categories() throws {
        var tracker = Self.tracker()
        tracker.called(
            NotifyCall(arguments: Self.arguments(hints: [("category", .string("transfer"))]))!, caller: ":1.9", serial: 1,
            destination: ":1.5")
        guard case .show(let activity) = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 1, id: 1, now: 0, lookup: Self.noEntries).first
        else { return }
        expectJSON(activity.content.state["percent"], nil)
        tracker.called(
            NotifyCall(arguments: Self.arguments(replaces: 1, hints: [("category", .string("transfer.error"))]))!,
            caller: ":1.9", serial: 2, destination: ":1.5")
        let failed = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 2, id: 1, now: 1, lookup: Self.noEntries)
        guard case .finish(_, let content, true) = try #require(failed.first) else { return }
        expectJSON(content?.state["failed"], true)

        tracker.called(NotifyCall(arguments: Self.arguments(hints: [("value", .int32(5))]))!, caller: ":1.9", serial: 3, destination: ":1.5")
        _ = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 3, id: 2, now: 2, lookup: Self.noEntries)
        tracker.called(
            NotifyCall(arguments: Self.arguments(replaces: 2, summary: "Done", hints: []))!, caller: ":1.9", serial: 4,
            destination: ":1.5")
        let replaced = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 4, id: 2, now: 3, lookup: Self.noEntries)
        guard case .finish(_, let last, true) = try #require(replaced.first) else { return }
        expectJSON(last?.state["title"], "Done")
        expectJSON(last?.state["percent"], 5, "the last value shown stays")
    }

    @Test("calls not to the server, or without progress, are not kept; pending calls and followed ones are bounded")
    func bounds() {
        var tracker = Self.tracker()
        let progress = NotifyCall(arguments: Self.arguments(hints: [("value", .int32(1))]))!
        tracker.called(progress, caller: ":1.9", serial: 1, destination: "org.example.Other")
        tracker.called(NotifyCall(arguments: Self.arguments(hints: []))!, caller: ":1.9", serial: 2, destination: ":1.5")
        #expect(tracker.pendingCount == 0)
        for serial in 0..<UInt64(ProgressNotifications.maximumPendingPerCaller * 3) {
            tracker.called(progress, caller: ":1.9", serial: serial, destination: ":1.5")
        }
        #expect(tracker.pendingCount == ProgressNotifications.maximumPendingPerCaller)
        for caller in 0..<ProgressNotifications.maximumCallers * 2 {
            tracker.called(progress, caller: ":2.\(caller)", serial: 1, destination: ":1.5")
        }
        #expect(tracker.pendingCount == ProgressNotifications.maximumCallers, "as many callers as have a place, one call each")
        var ended = 0
        for id in 0..<UInt32(ProgressNotifications.maximumFollowed + 5) {
            let serial = UInt64(1000 + id)
            tracker.called(progress, caller: ":1.9", serial: serial, destination: ":1.5")
            for change in tracker.replied(from: ":1.5", to: ":1.9", replySerial: serial, id: id, now: Double(id), lookup: Self.noEntries) {
                if case .finish(_, _, false) = change { ended += 1 }
            }
        }
        #expect(tracker.followedIDs.count == ProgressNotifications.maximumFollowed)
        #expect(ended == 5, "the least recently updated make room")
        #expect(!tracker.followedIDs.contains(0))
    }

    @Test("a peer flooding Notify calls faster than the server answers pushes out only its own, never another's pending call")
    func floodEvictsOnlyItsOwn() throws {
        var tracker = Self.tracker()
        let call = try #require(NotifyCall(arguments: Self.arguments(hints: [("value", .int32(40))])))
        tracker.called(call, caller: ":1.9", serial: 7, destination: ProgressNotifications.serverName)
        let flood = try #require(NotifyCall(arguments: Self.arguments(app: "Flood", hints: [("value", .int32(1))])))
        for serial in 1...UInt64(ProgressNotifications.maximumPendingPerCaller * 100) {
            tracker.called(flood, caller: ":1.66", serial: serial, destination: ProgressNotifications.serverName)
        }
        let changes = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 7, id: 3, now: 0, lookup: Self.noEntries)
        guard case .show(let activity) = try #require(changes.first) else {
            Issue.record("the real call's reply made nothing: \(changes)")
            return
        }
        expectJSON(activity.content.state["percent"], 40)
        #expect(tracker.pendingCount == ProgressNotifications.maximumPendingPerCaller, "only the flood's latest remain")
    }

    @Test("a new server ends what the old one showed")
    func serverChange() {
        var tracker = Self.tracker()
        tracker.called(NotifyCall(arguments: Self.arguments(hints: [("value", .int32(1))]))!, caller: ":1.9", serial: 1, destination: ":1.5")
        _ = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 1, id: 1, now: 0, lookup: Self.noEntries)
        #expect(tracker.serverChanged(to: ":1.8").count == 1)
        #expect(tracker.followedIDs.isEmpty)
    }

    static func firefox(_ id: String) -> DesktopEntry? { id == "firefox" ? DesktopEntry(name: "Firefox", icon: "firefox", executable: "firefox") : nil }

    @Test("a desktop-entry hint names the app only when its sender is verified as that app")
    func borrowedNames() throws {
        var tracker = Self.tracker()
        let claim = NotifyCall(arguments: Self.arguments(app: "Firefox", hints: [("value", .int32(10)), ("desktop-entry", .string("firefox"))]))!
        tracker.called(claim, caller: ":1.9", serial: 1, destination: ":1.5")
        let script = SenderIdentity(confinement: .none, executable: "/usr/bin/python3.11")
        guard
            case .show(let hostile) = try #require(
                tracker.replied(
                    from: ":1.5", to: ":1.9", replySerial: 1, id: 1, now: 0,
                    identity: script, lookup: Self.firefox
                ).first)
        else { return }
        #expect(hostile.attributes["app"] == ["name": "Notification", "icon": .string(SourceApp.bridgeIcon), "label": "Firefox"])

        tracker.called(claim, caller: ":1.10", serial: 1, destination: ":1.5")
        let browser = SenderIdentity(confinement: .none, executable: "/usr/lib/firefox-esr/firefox")
        guard
            case .show(let real) = try #require(
                tracker.replied(
                    from: ":1.5", to: ":1.10", replySerial: 1, id: 2, now: 0,
                    identity: browser, lookup: Self.firefox
                ).first)
        else { return }
        #expect(real.attributes["app"] == ["name": "Firefox", "icon": "firefox", "desktopEntry": "firefox"])
    }

    @Test("another connection's replaces_id, stack tag or CloseNotification leaves a notification's activity as it was")
    func strangers() throws {
        var tracker = Self.tracker()
        let tag: [(String, BusValue)] = [("x-dunst-stack-tag", .string("dl"))]
        tracker.called(
            NotifyCall(arguments: Self.arguments(summary: "Mine", hints: tag + [("value", .int32(40))]))!, caller: ":1.9",
            serial: 1, destination: ":1.5")
        guard
            case .show(let victim) = try #require(
                tracker.replied(
                    from: ":1.5", to: ":1.9", replySerial: 1, id: 7, now: 0,
                    lookup: Self.noEntries
                ).first)
        else { return }

        // The stranger's replacement: the server gives it id 7, the victim's is displaced.
        let ransom = NotifyCall(
            arguments: Self.arguments(
                replaces: 7, summary: "Transfer failed: pay 50 EUR to unlock",
                hints: tag + [("category", .string("transfer.error"))]))!
        tracker.called(ransom, caller: ":1.66", serial: 1, destination: ":1.5")
        let failed = tracker.replied(from: ":1.5", to: ":1.66", replySerial: 1, id: 7, now: 1, lookup: Self.noEntries)
        #expect(failed.count == 2)
        for change in failed {
            switch change {
            case .show(let activity): #expect(activity.source != victim.source)
            case .finish(let source, _, _): #expect(source != victim.source, "the victim's activity is neither rewritten nor ended")
            }
        }
        #expect(tracker.followedKeys == [.init(owner: ":1.9", id: 7)])
        let stolen = NotifyCall(arguments: Self.arguments(replaces: 7, summary: "Stolen", hints: tag + [("value", .int32(99))]))!
        tracker.called(stolen, caller: ":1.66", serial: 2, destination: ":1.5")
        let changes = tracker.replied(from: ":1.5", to: ":1.66", replySerial: 2, id: 7, now: 2, lookup: Self.noEntries)
        guard case .show(let theirs) = try #require(changes.first) else { return }
        #expect(changes.count == 1)
        #expect(theirs.source != victim.source, "a notification of its own, not the victim's")
        #expect(tracker.followedKeys == [.init(owner: ":1.9", id: 7), .init(owner: ":1.66", id: 7)])

        // The stranger closes id 7: the server's closing ends nothing of the victim's.
        tracker.closeCalled(id: 7, caller: ":1.66", destination: ":1.5")
        let closed = tracker.closed(id: 7, reason: 3, from: ":1.5")
        #expect(closed == [.finish(source: theirs.source, content: nil, keep: true)])
        #expect(tracker.followedKeys == [.init(owner: ":1.9", id: 7)])

        // The victim goes on in place; its own close ends it.
        tracker.called(
            NotifyCall(arguments: Self.arguments(replaces: 7, summary: "Mine", hints: [("value", .int32(60))]))!,
            caller: ":1.9", serial: 2, destination: ":1.5")
        guard
            case .show(let mine) = try #require(
                tracker.replied(
                    from: ":1.5", to: ":1.9", replySerial: 2, id: 7, now: 3,
                    lookup: Self.noEntries
                ).first)
        else { return }
        #expect(mine.source == victim.source && mine.content.state["percent"] == 60)
        tracker.closeCalled(id: 7, caller: ":1.9", destination: ":1.5")
        #expect(tracker.closed(id: 7, reason: 3, from: ":1.5") == [.finish(source: victim.source, content: nil, keep: true)])
    }

    @Test("a displaced notification does not end when the id's new occupant expires or is dismissed")
    func displaced() throws {
        var tracker = Self.tracker()
        let progress = NotifyCall(arguments: Self.arguments(hints: [("value", .int32(40))]))!
        tracker.called(progress, caller: ":1.9", serial: 1, destination: ":1.5")
        guard case .show(let victim) = tracker.replied(from: ":1.5", to: ":1.9", replySerial: 1, id: 7, now: 0, lookup: Self.noEntries).first
        else { return }
        tracker.called(
            NotifyCall(arguments: Self.arguments(replaces: 7, hints: [("value", .int32(1))]))!, caller: ":1.66", serial: 1,
            destination: ":1.5")
        guard case .show(let theirs) = tracker.replied(from: ":1.5", to: ":1.66", replySerial: 1, id: 7, now: 1, lookup: Self.noEntries).first
        else { return }
        #expect(tracker.closed(id: 7, reason: 1, from: ":1.5") == [.finish(source: theirs.source, content: nil, keep: true)])
        #expect(tracker.followedKeys == [.init(owner: ":1.9", id: 7)])
        _ = victim
    }

    @Test("a displaced notification whose connection left the bus is dismissed: a new connection per update leaves nothing stale")
    func oneShotSenders() throws {
        var tracker = Self.tracker()
        func notifySend(_ caller: String, replaces: UInt32, value: Int32, id: UInt32) -> [SourceChange] {
            tracker.called(
                NotifyCall(arguments: Self.arguments(replaces: replaces, hints: [("value", .int32(value))]))!, caller: caller,
                serial: 1, destination: ":1.5")
            return tracker.replied(from: ":1.5", to: caller, replySerial: 1, id: id, now: Double(value), lookup: Self.noEntries)
        }
        guard case .show(let first) = try #require(notifySend(":1.20", replaces: 0, value: 10, id: 9).first) else { return }
        #expect(tracker.owners == [":1.20"])
        #expect(tracker.ownerLeft(":1.20").isEmpty, "not displaced: it stays until it closes")
        #expect(tracker.owners.isEmpty)
        let next = notifySend(":1.21", replaces: 9, value: 20, id: 9)
        #expect(next.count == 2)
        #expect(next.first == .finish(source: first.source, content: nil, keep: false))
        guard case .show(let second) = try #require(next.last) else { return }
        #expect(second.source != first.source)
        // Displaced first, then gone.
        _ = notifySend(":1.22", replaces: 9, value: 30, id: 9)
        #expect(tracker.ownerLeft(":1.21") == [.finish(source: second.source, content: nil, keep: false)])
        #expect(tracker.followedKeys == [.init(owner: ":1.22", id: 9)])
    }

    @Test("Notify's arguments: loosely typed values clamped, stack tags, texts cut, other shapes refused")
    func parsing() throws {
        let call = try #require(
            NotifyCall(
                arguments: Self.arguments(
                    app: String(repeating: "a", count: 300), summary: "Line\none\u{1B}[31m",
                    body: "<b>bold</b> &amp; <i>it</i>" + String(repeating: "x", count: 2000),
                    hints: [("value", .double(140)), ("x-canonical-private-synchronous", .string("volume")), ("desktop-entry", .string("firefox"))])))
        #expect(call.value == 100)
        #expect(call.stackTag == "volume")
        #expect(call.desktopEntry == "firefox")
        #expect(call.summary == "Line one [31m")
        #expect(call.body.hasPrefix("bold & it"))
        #expect(call.body.utf8.count <= NotifyCall.maximumBodyBytes)
        #expect(call.appName.utf8.count <= SourceApp.maximumNameBytes)
        #expect(NotifyCall(arguments: Self.arguments(hints: [("value", .int32(-5))]))?.value == 0)
        #expect(NotifyCall(arguments: [.string("only one")]) == nil)
        #expect(NotifyCall(arguments: [.uint32(1)] + Self.arguments(hints: []).dropFirst()) == nil)
    }
}
