import FreeDesktop
import OrderedCollections
import OrderedJSON
import IslandBridge
import Testing

@Suite("A retrying link: when a link to a peer that may be away is tried again, on an injected clock")
struct RetryingLinkTests {
    let backoff = Backoff(first: .seconds(1), maximum: .seconds(30))
    let start = ContinuousClock.now

    @Test("each failure waits longer, up to the backoff's maximum; a link that held starts over")
    func waits() {
        var link = RetryingLink(backoff: backoff)
        #expect(link.due == nil)
        let first = link.failed(now: start)
        #expect(first == .seconds(1))
        #expect(link.due == start + .seconds(1))
        let waits = (1...6).map { _ in link.failed(now: start) }
        #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
        #expect(link.failures == 7)
        link.held()
        #expect(link.due == nil && link.failures == 0)
        let again = link.failed(now: start)
        #expect(again == .seconds(1))
    }

    @Test("a try is taken once it is due, and not before")
    func takesWhenDue() {
        var link = RetryingLink(backoff: backoff)
        link.failed(now: start)
        let early = link.takeDue(now: start + .milliseconds(999))
        #expect(!early)
        let due = link.takeDue(now: start + .seconds(1))
        #expect(due)
        #expect(link.due == nil)
        let later = link.takeDue(now: start + .seconds(60))
        #expect(!later, "taken once")
        #expect(link.failures == 1, "taking a try is not its outcome")
    }

    @Test("a fixed wait (refused, or a peer that went and is likely back) leaves the count of failures")
    func fixedWait() {
        var link = RetryingLink(backoff: backoff)
        link.failed(now: start)
        link.failed(now: start)
        link.retry(after: .seconds(60), now: start)
        #expect(link.due == start + .seconds(60))
        #expect(link.failures == 2)
        let third = link.failed(now: start)
        #expect(third == .seconds(4))
        link.cancel()
        #expect(link.due == nil)
    }

    enum Peer: Hashable, CaseIterable { case bus, daemon, logind }

    @Test("links share one timer: the earliest due, and the due ones in their order")
    func links() {
        var links = RetryingLinks<Peer>(backoff: backoff)
        #expect(links.nextDue == nil)
        links[.logind].failed(now: start)
        links[.daemon].retry(after: .seconds(60), now: start)
        links[.bus].failed(now: start + .milliseconds(500))
        #expect(links.nextDue == start + .seconds(1))
        let first = links.takeDue(now: start + .seconds(1))
        #expect(first == [.logind])
        #expect(links.nextDue == start + .milliseconds(1500))
        let then = links.takeDue(now: start + .seconds(61))
        #expect(then == [.bus, .daemon])
        #expect(links.nextDue == nil)
        links[.bus].failed(now: start)
        links.cancelAll()
        #expect(links.nextDue == nil)
    }
}

@Suite("What islandd is told of the desktop's states, and when a failed call is sent again")
struct DesktopAnnouncementsTests {
    let start = ContinuousClock.now

    @Test("each state's wish becomes its Admin call, focus first")
    func calls() {
        var desktop = DesktopAnnouncements(backoff: Backoff(first: .seconds(1), maximum: .seconds(30)))
        let none = desktop.nextCalls()
        #expect(none.isEmpty, "nothing read: islandd's defaults stand")
        desktop.sharing.shared(by: .portal)
        _ = desktop.lock.read(.gnome, locked: true)
        _ = desktop.focus.read(.dunst, focus: true)
        let calls = desktop.nextCalls()
        #expect(calls.map(\.method) == ["org.island.Admin.SetFocus", "org.island.Admin.SetSharing", "org.island.Admin.SetLock"])
        #expect(
            calls.map(\.parameters) == [
                ["on": .bool(true)], ["on": .bool(true), "source": .string("portal")],
                ["on": .bool(true), "source": .string("gnome")],
            ])
        let more = desktop.nextCalls()
        #expect(more.isEmpty, "one call of each state at a time")
        #expect(calls[0].told(reply: ["focus": .object(["on": .bool(false)])]).fields.map(\.1) == ["false"], "islandd's answer is logged")
    }

    @Test("a failed call is due again after its own link's wait, which grows; a call that went through resets it")
    func retries() {
        var desktop = DesktopAnnouncements(backoff: Backoff(first: .seconds(1), maximum: .seconds(30)))
        _ = desktop.focus.read(.dunst, focus: true)
        desktop.sharing.shared(by: .portal)
        let calls = desktop.nextCalls()
        desktop.completed(calls[0], succeeded: false, now: start)
        desktop.completed(calls[1], succeeded: true, now: start)
        #expect(desktop.nextDue == start + .seconds(1))
        desktop.retryDue(now: start + .milliseconds(900))
        let early = desktop.nextCalls()
        #expect(early.isEmpty, "not yet")
        desktop.retryDue(now: start + .seconds(1))
        let due = desktop.nextCalls()
        #expect(due == [.focus(on: true)], "only the failed state is sent again")
        desktop.completed(.focus(on: true), succeeded: false, now: start + .seconds(1))
        #expect(desktop.nextDue == start + .seconds(3), "the second failure waits twice as long")
        desktop.retry(.focus)
        #expect(desktop.nextDue == nil, "sent again at once: islandd came back")
        desktop.completed(desktop.nextCalls()[0], succeeded: true, now: start + .seconds(2))
        _ = desktop.focus.read(.dunst, focus: false)
        desktop.completed(desktop.nextCalls()[0], succeeded: false, now: start + .seconds(2))
        #expect(desktop.nextDue == start + .seconds(3), "a call that went through started the waits over")
    }
}
