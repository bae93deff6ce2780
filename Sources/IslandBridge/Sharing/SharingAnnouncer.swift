/// What islandd is to be told of screen sharing (Admin `SetSharing`), as `DesktopFocus` does
/// for focus: one call at a time, and while one is out only the latest wish waits, so a peer
/// starting and closing sessions as fast as it can costs one call per round trip. A failed
/// call (islandd away) is due again at `retry()`.
package struct SharingAnnouncer: Sendable {
    /// Shared by `source`, or not shared (nil).
    package struct Wish: Sendable, Hashable {
        package let source: ScreenCastSessions.Service?
        package var on: Bool { source != nil }
    }

    private var calls = LatestWishCalls(announced: Wish(source: nil))
    /// What islandd was last told, or is being told; nil when a call failed and nobody knows.
    /// A daemon starts unshared.
    package var announced: Wish? { calls.announced }

    package init() {}

    /// The screen is now shared by `source` (nil: not shared). With `again`, said even if
    /// islandd was told so already: a daemon that restarted starts unshared, and a bridge
    /// that starts cannot know what the one before it said.
    package mutating func shared(by source: ScreenCastSessions.Service?, again: Bool = false) {
        calls.wish(Wish(source: source), again: again)
    }

    /// The call to send now, marked in flight; nil when nothing is due or a call is out.
    package mutating func nextCall() -> Wish? { calls.nextCall() }

    /// The call for `wish` came back. A failed one is due again at `retry()`, unless a newer
    /// wish took its place.
    package mutating func completed(_ wish: Wish, succeeded: Bool) { calls.completed(wish, succeeded: succeeded) }

    /// Time to try again.
    package mutating func retry() { calls.retry() }
}
