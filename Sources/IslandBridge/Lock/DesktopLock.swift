/// Whether the session is locked, from the desktop's reports (`LockSignal`), and what islandd is
/// to be told of it (Admin `SetLock`): one call at a time, and while one is out only the latest
/// wish waits, so a peer flipping a report as fast as it can costs one call per round trip. A
/// failed call (islandd away) is due again at `retry()`.
///
/// The session counts as locked while any report says so: the reports of one desktop agree,
/// and one that no longer has an owner reads nil. So a peer that claims a free name can only
/// hide more, never show what a locked screen hides.
package struct DesktopLock: Sendable {
    /// Locked, said first by `source`, or unlocked (nil).
    package struct Wish: Sendable, Hashable {
        package let source: LockSignal.Kind?
        package var on: Bool { source != nil }
    }

    private var readings: [LockSignal.Kind: Bool] = [:]
    private var calls = LatestWishCalls(announced: Wish(source: nil))
    /// What islandd was last told, or is being told; nil when a call failed and nobody knows.
    /// A daemon starts unlocked.
    package var announced: Wish? { calls.announced }
    /// False once the bridge stops following: a call that fails then is not tried again.
    private var following = true

    package init() {}

    /// Which report says locked, in the order of how much each knows: the shell's own lock
    /// screen first, then the freedesktop screensaver's, then logind's hint (which a desktop
    /// sets when its locker comes up). Nil: unlocked.
    package var lockedBy: LockSignal.Kind? {
        [LockSignal.Kind.gnome, .freedesktop, .logind].first { readings[$0] == true }
    }

    /// A report read `locked` (nil: it has nothing to say, its owner gone). Answers the change
    /// to log, if the session's state changed.
    package mutating func read(_ kind: LockSignal.Kind, locked: Bool?) -> String? {
        let before = lockedBy
        readings[kind] = locked
        let after = lockedBy
        guard before != after else { return nil }
        wish(Wish(source: after))
        if let after { return "the session is locked (\(after.rawValue))" }
        return "the session is unlocked"
    }

    /// Says the state again, even if islandd was told so already: a daemon that restarted
    /// starts unlocked, and a bridge that starts cannot know what the one before it said.
    package mutating func announceAgain() {
        wish(Wish(source: lockedBy), again: true)
    }

    /// Forgets every report of one bus (it went away): they read nil until read again.
    package mutating func forget(_ kinds: [LockSignal.Kind]) -> String? {
        var change: String?
        for kind in kinds { change = read(kind, locked: nil) ?? change }
        return change
    }

    /// Forgets every report without a word to islandd: the bridge stops following, and the lock
    /// stays as it was said last (a call out still completes).
    package mutating func stopFollowing() {
        readings = [:]
        calls.drop()
        following = false
    }

    private mutating func wish(_ wish: Wish, again: Bool = false) {
        following = true
        calls.wish(wish, again: again)
    }

    /// The call to send now, marked in flight; nil when nothing is due or a call is out.
    package mutating func nextCall() -> Wish? { calls.nextCall() }

    /// The call for `wish` came back. A failed one is due again at `retry()`, unless a newer
    /// wish took its place or the bridge stopped following.
    package mutating func completed(_ wish: Wish, succeeded: Bool) {
        calls.completed(wish, succeeded: succeeded, keepsFailed: following)
    }

    /// Time to try again.
    package mutating func retry() { calls.retry() }
}
