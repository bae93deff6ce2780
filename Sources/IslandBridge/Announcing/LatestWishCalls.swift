/// What islandd is to be told of one desktop state (focus, sharing, the lock): one call at a
/// time, and while one is out only the latest wish waits, so a peer flipping the state as fast
/// as it can costs one call per round trip. A failed call (islandd away) is due again at
/// `retry()`, unless a newer wish took its place. `DesktopFocus`, `DesktopLock` and
/// `SharingAnnouncer` are this value with what they know of their own state around it.
package struct LatestWishCalls<Wish: Hashable & Sendable>: Sendable {
    /// What islandd was last told, or is being told; nil when a call failed and nobody knows.
    package private(set) var announced: Wish?
    private var wanted: Wish?
    private var inFlight: Wish?
    private var failed: Wish?

    /// `announced`: what islandd holds before anything is said (a daemon starts unshared,
    /// unlocked).
    package init(announced: Wish?) {
        self.announced = announced
    }

    /// islandd is to hear `wish`. With `again`, said even if it was told so already: a daemon
    /// that restarted starts from its defaults, and a bridge that starts cannot know what the
    /// one before it said.
    package mutating func wish(_ wish: Wish, again: Bool = false) {
        guard again || wish != (wanted ?? inFlight ?? announced) else { return }
        wanted = wish
        failed = nil
    }

    /// The call to send now, marked in flight; nil when nothing is due or a call is out.
    package mutating func nextCall() -> Wish? {
        guard inFlight == nil, let wanted else { return nil }
        inFlight = wanted
        announced = wanted
        self.wanted = nil
        return wanted
    }

    /// The call for `wish` came back. A failed one is due again at `retry()` if `keepsFailed`
    /// (false once the state is no longer followed) and no newer wish took its place.
    package mutating func completed(_ wish: Wish, succeeded: Bool, keepsFailed: Bool = true) {
        inFlight = nil
        if !succeeded {
            announced = nil
            if wanted == nil, keepsFailed { failed = wish }
        }
    }

    /// Time to try again.
    package mutating func retry() {
        if let failed, wanted == nil { wanted = failed }
        failed = nil
    }

    /// Nothing more to say: what waits, and what failed, is dropped (a call out still completes).
    package mutating func drop() {
        wanted = nil
        failed = nil
    }
}
