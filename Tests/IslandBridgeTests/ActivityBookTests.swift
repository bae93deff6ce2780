import OrderedCollections
import IslandBridge
import OrderedJSON
import Testing

@Suite("ActivityBook: what sources want, what the daemon holds, and the calls between")
struct ActivityBookTests {
    static func activity(_ source: String, _ value: Int, tier: Rank.Tier = .progress, since: Double = 0) -> BridgedActivity {
        BridgedActivity(
            source: source, type: "Progress", attributes: [:],
            content: BridgedContent(state: ["percent": .int(value)]), rank: Rank(tier: tier, since: since))
    }

    static func enabledBook(capacity: Int = 5) -> ActivityBook {
        var book = ActivityBook(capacity: capacity, instance: "t")
        book.authorized(enabled: true, maximumActivities: nil)
        return book
    }

    @Test("nothing is sent before the daemon says the bridge is enabled")
    func waitsForAuthorization() {
        var book = ActivityBook(capacity: 5, instance: "t")
        book.show(Self.activity("a", 1))
        #expect(book.commands(now: 0).isEmpty)
        book.authorized(enabled: true, maximumActivities: 5)
        #expect(book.commands(now: 0).count == 1)
    }

    @Test("one call in flight per activity: content arriving meanwhile waits, and only the latest is sent")
    func coalesces() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("a", 1))
        let first = book.commands(now: 0)
        guard case .request(let ticket, let key, _, let attributes, let content) = try #require(first.first) else {
            Issue.record("expected a request, got \(first)")
            return
        }
        #expect(attributes["source"] == "a")
        expectJSON(content.state["percent"], 1)
        for value in 2...50 { book.show(Self.activity("a", value)) }
        #expect(book.commands(now: 0).isEmpty, "nothing more while the request is on its way")
        book.completed(ticket, .requested(id: "A", ended: false, content: content), now: 0)
        let next = book.commands(now: 0)
        #expect(next.count == 1)
        guard case .update(let updateTicket, let id, let latest) = try #require(next.first) else {
            Issue.record("expected an update, got \(next)")
            return
        }
        #expect(id == "A")
        expectJSON(latest.state["percent"], 50, "the latest content, once")
        book.completed(updateTicket, .updated, now: 0)
        #expect(book.commands(now: 0).isEmpty, "nothing left to send")
        #expect(key.hasPrefix("a@t."))
    }

    @Test("a request retried after the daemon was out of reach keeps its key, after a backoff")
    func retryKeepsKey() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("a", 1))
        guard case .request(let ticket, let key, _, _, _) = try #require(book.commands(now: 0).first) else { return }
        book.completed(ticket, .unavailable, now: 100)
        #expect(book.commands(now: 100.5).isEmpty, "held while the daemon is away")
        #expect(book.nextDeadline == 101)
        guard case .request(let retry, let again, _, _, _) = try #require(book.commands(now: 101).first) else { return }
        #expect(again == key, "the same key: a request the daemon did get is found, not duplicated")
        book.completed(retry, .unavailable, now: 101)
        #expect(book.nextDeadline == 103, "the backoff doubles")
        #expect(book.takeNotices().count == 1, "said once")
    }

    @Test("at capacity the highest ranks are shown; a higher one evicts the lowest, which returns when there is room")
    func capacityAndEviction() throws {
        var book = Self.enabledBook(capacity: 2)
        book.show(Self.activity("paused", 1, tier: .paused, since: 1))
        book.show(Self.activity("transfer", 1, tier: .progress, since: 2))
        book.show(Self.activity("stopped", 1, tier: .stopped, since: 3))
        var ids: [String: String] = [:]
        func run(_ now: Double = 0) -> [ActivityBook.Command] {
            let commands = book.commands(now: now)
            for command in commands {
                switch command {
                case .request(let ticket, _, _, _, let content):
                    ids[ticket.source] = "id-" + ticket.source
                    book.completed(ticket, .requested(id: "id-" + ticket.source, ended: false, content: content), now: now)
                case .update(let ticket, _, _): book.completed(ticket, .updated, now: now)
                case .end(let ticket, _, _, _):
                    ids[ticket.source] = nil
                    book.completed(ticket, .ended, now: now)
                }
            }
            return commands
        }
        _ = run()
        #expect(Set(ids.keys) == ["paused", "transfer"])
        book.show(Self.activity("playing", 1, tier: .playing, since: 4))
        let evicting = run()
        #expect(evicting.count == 1)
        guard case .end(_, let id, _, let dismissal) = try #require(evicting.first) else { return }
        #expect(id == "id-paused" && dismissal == .immediate, "the lowest rank goes, at once")
        _ = run()
        #expect(Set(ids.keys) == ["playing", "transfer"])
        book.finish("transfer", content: nil, dismissal: .after(60))
        _ = run()
        _ = run()
        #expect(Set(ids.keys) == ["playing", "paused"], "the evicted one is back in the freed place")
    }

    @Test("the start budget holds new requests until retryAfter; the limits hold what they refused")
    func refusalsHold() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("a", 1))
        book.show(Self.activity("b", 1))
        let first = book.commands(now: 10)
        #expect(first.count == 2)
        guard case .request(let a, _, _, _, _) = first[0], case .request(let b, _, _, _, _) = first[1] else { return }
        book.completed(a, .refused(.startBudget(retryAfter: 7)), now: 10)
        book.completed(b, .refused(.globalMaximum(limit: 32)), now: 10)
        #expect(book.commands(now: 12).isEmpty)
        #expect(book.nextDeadline == 17)
        #expect(book.takeNotices().count == 2)
        book.show(Self.activity("a", 2))
        #expect(book.commands(now: 16).isEmpty, "a change does not lift the hold")
        let retried = book.commands(now: 17)
        #expect(retried.count == 1, "the budget's hold is over; the limit's lasts \(ActivityBook.limitHold) s")
        #expect(book.commands(now: 10 + ActivityBook.limitHold).count == 1)
    }

    @Test("denied stops every call, said once; enabled again, everything is shown anew")
    func denied() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("a", 1))
        guard case .request(let ticket, _, _, _, let content) = try #require(book.commands(now: 0).first) else { return }
        book.completed(ticket, .requested(id: "A", ended: false, content: content), now: 0)
        book.authorized(enabled: false, maximumActivities: nil)
        book.daemonEnded(id: "A", reason: "user")
        book.show(Self.activity("a", 2))
        book.show(Self.activity("b", 1))
        #expect(book.commands(now: 1).isEmpty)
        #expect(book.nextDeadline == nil, "no timer while turned off")
        #expect(book.takeNotices().count == 1)
        book.authorized(enabled: false, maximumActivities: nil)
        #expect(book.takeNotices().isEmpty, "said once")
        book.authorized(enabled: true, maximumActivities: 5)
        let again = book.commands(now: 2)
        #expect(again.count == 2, "both requested, the one the switch ended included")
    }

    @Test("a previous run's activities are adopted by their source, or ended once sources settled")
    func adoption() throws {
        var book = Self.enabledBook()
        book.adopt([
            .init(id: "old-a", source: "a", content: BridgedContent(state: ["percent": 1])),
            .init(id: "orphan", source: "gone", content: BridgedContent(state: [:])),
        ])
        book.show(Self.activity("a", 2))
        let commands = book.commands(now: 0)
        #expect(commands.count == 1)
        guard case .update(_, let id, let content) = try #require(commands.first) else {
            Issue.record("adopted: an update, not a request; got \(commands)")
            return
        }
        #expect(id == "old-a" && content.state["percent"] == 2)
        book.settle()
        let orphans = book.commands(now: 0)
        guard case .end(_, let orphan, _, .immediate) = try #require(orphans.first) else { return }
        #expect(orphan == "orphan")
    }

    @Test("dismissed by the user: not shown again; expired: shown again with a new key")
    func daemonEnds() throws {
        var book = Self.enabledBook()
        for source in ["user", "expired"] {
            book.show(Self.activity(source, 1))
        }
        var keys: [String: String] = [:]
        for command in book.commands(now: 0) {
            guard case .request(let ticket, let key, _, _, let content) = command else { continue }
            keys[ticket.source] = key
            book.completed(ticket, .requested(id: ticket.source.uppercased(), ended: false, content: content), now: 0)
        }
        book.daemonEnded(id: "USER", reason: "user")
        book.daemonEnded(id: "EXPIRED", reason: "expired")
        let again = book.commands(now: 1)
        #expect(again.count == 1)
        guard case .request(let ticket, let key, _, _, _) = try #require(again.first) else { return }
        #expect(ticket.source == "expired")
        #expect(key != keys["expired"], "a new key: the ended activity still holds the old one")
    }

    @Test("a finished source ends its activity with its last content and dismissal; one never shown is forgotten")
    func finishing() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("shown", 1))
        guard case .request(let ticket, _, _, _, let content) = try #require(book.commands(now: 0).first) else { return }
        book.completed(ticket, .requested(id: "S", ended: false, content: content), now: 0)
        book.finish("shown", content: BridgedContent(state: ["percent": 100]), dismissal: .after(70))
        book.show(Self.activity("shown", 3))
        book.show(Self.activity("never", 1))
        book.finish("never", content: nil, dismissal: .immediate)
        let commands = book.commands(now: 10)
        #expect(commands.count == 1)
        guard case .end(let end, "S", let final, .after(70)) = try #require(commands.first) else {
            Issue.record("expected the end, got \(commands)")
            return
        }
        expectJSON(final?.state["percent"], 100)
        book.completed(end, .ended, now: 10)
        #expect(book.sources.isEmpty)
    }

    @Test("content the daemon refused is not sent again until it changes")
    func rejectedContent() throws {
        var book = Self.enabledBook()
        book.show(Self.activity("a", 1))
        guard case .request(let ticket, _, _, _, let content) = try #require(book.commands(now: 0).first) else { return }
        book.completed(ticket, .requested(id: "A", ended: false, content: content), now: 0)
        book.show(Self.activity("a", 2))
        guard case .update(let update, _, _) = try #require(book.commands(now: 0).first) else { return }
        book.completed(update, .refused(.other(name: "org.island.AttributesTooLarge", detail: "")), now: 0)
        #expect(book.commands(now: 1000).isEmpty)
        book.show(Self.activity("a", 3))
        #expect(book.commands(now: 1000).count == 1)
    }

    @Test("the daemon's MaxActivitiesPerApp caps the configured capacity")
    func daemonCapacity() {
        var book = ActivityBook(capacity: 8, instance: "t")
        book.authorized(enabled: true, maximumActivities: 3)
        #expect(book.capacity == 3)
        book.configure(capacity: 2)
        #expect(book.capacity == 2)
        book.configure(capacity: 10)
        #expect(book.capacity == 3)
    }
}
