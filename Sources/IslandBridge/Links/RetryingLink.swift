package import FreeDesktop

/// One link to a peer that may be away — a bus connection, islandd, a call that tells islandd a
/// desktop state — and when to try it again. Pure, on an injected clock: the bridge says how each
/// try went and when, and its one timer wakes it at the earliest `due` of all its links.
///
/// Every link waits the same way: after a failed try, the backoff's wait for the failures so far
/// (so a peer that stays away is tried less and less often, never more often than the backoff's
/// maximum); a link that held resets the count.
package struct RetryingLink: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package let backoff: Backoff
    /// Failed tries since the link last held.
    package private(set) var failures = 0
    /// When to try again; nil while no try is due (the link holds, or nothing is to be said).
    package private(set) var due: Instant?

    package init(backoff: Backoff) {
        self.backoff = backoff
    }

    /// A try failed at `now`: the next is due after the backoff's wait for the failures so far.
    /// Answers that wait, for the log.
    @discardableResult
    package mutating func failed(now: Instant) -> Duration {
        let wait = backoff.delay(attempt: failures)
        failures += 1
        due = now + wait
        return wait
    }

    /// A try is due `wait` after `now` whatever came before: a peer that refused will not change
    /// its mind soon, and one that was there and went (restarted) is likely back at once. The
    /// count of failures is left as it is.
    package mutating func retry(after wait: Duration, now: Instant) {
        due = now + wait
    }

    /// The link held (connected, or a call came back): no try is due and the waits start over.
    package mutating func held() {
        failures = 0
        due = nil
    }

    /// Nothing is to be tried any more (the bridge stopped following what the link carries).
    package mutating func cancel() {
        due = nil
    }

    /// Whether a try is due at `now`; if so, it is taken (due again only after the next failure).
    package mutating func takeDue(now: Instant) -> Bool {
        guard let due, due <= now else { return false }
        self.due = nil
        return true
    }
}

/// A set of `RetryingLink`s named by `Key`, so that one timer serves them all: armed for
/// `nextDue`, and on firing, the links `takeDue` names are tried again, in `Key`'s order.
package struct RetryingLinks<Key: Hashable & CaseIterable & Sendable>: Sendable where Key.AllCases: Sendable {
    private var links: [Key: RetryingLink]

    /// Every key's link waits with `backoff`.
    package init(backoff: Backoff) {
        links = Dictionary(uniqueKeysWithValues: Key.allCases.map { ($0, RetryingLink(backoff: backoff)) })
    }

    package subscript(key: Key) -> RetryingLink {
        get { links[key]! }
        set { links[key] = newValue }
    }

    /// The earliest time a link is due; nil when none is.
    package var nextDue: RetryingLink.Instant? {
        links.values.compactMap(\.due).min()
    }

    /// The links due at `now`, taken, in `Key`'s order.
    package mutating func takeDue(now: RetryingLink.Instant) -> [Key] {
        Key.allCases.filter { links[$0]!.takeDue(now: now) }
    }

    /// Nothing is due any more.
    package mutating func cancelAll() {
        for key in Key.allCases { links[key]!.cancel() }
    }
}
