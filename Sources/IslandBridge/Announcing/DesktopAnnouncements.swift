package import FreeDesktop
import IslandProtocol
import OrderedCollections
package import OrderedJSON

/// What islandd is told of the desktop's states — focus (`DesktopFocus`), screen sharing
/// (`SharingAnnouncer`), the lock (`DesktopLock`) and GNOME's lock-screen privacy
/// (`GnomeLockScreen`) — as Admin calls, and when a call that
/// failed is tried again: each state on a `RetryingLink` of its own, so islandd being away
/// delays each by the same waits, and one state's failures never hold back another's call.
/// Pure: the bridge sends the calls `nextCalls()` hands out and says how each went.
package struct DesktopAnnouncements: Sendable {
    /// The states told, in the order their calls go out.
    package enum State: Sendable, Hashable, CaseIterable {
        case focus, sharing, lock, lockScreen
    }

    /// One Admin call: what it says, and the wish it carries, to hand back with its outcome.
    package enum Call: Sendable, Hashable {
        case focus(on: Bool)
        case sharing(SharingAnnouncer.Wish)
        case lock(DesktopLock.Wish)
        case lockScreen(GnomeLockScreen)

        package var state: State {
            switch self {
            case .focus: .focus
            case .sharing: .sharing
            case .lock: .lock
            case .lockScreen: .lockScreen
            }
        }

        /// The Admin method called.
        package var method: String {
            switch self {
            case .focus: AdminNames.SetFocus.method
            case .sharing: AdminNames.SetSharing.method
            case .lock: AdminNames.SetLock.method
            case .lockScreen: AdminNames.SetDesktopLockScreen.method
            }
        }

        package var parameters: JSONObject {
            switch self {
            case .focus(let on): [AdminNames.SetFocus.on: .bool(on)]
            case .sharing(let wish): Self.state(on: wish.on, source: wish.source?.rawValue)
            case .lock(let wish): Self.state(on: wish.on, source: wish.source?.rawValue)
            case .lockScreen(let levels):
                [
                    AdminNames.SetDesktopLockScreen.everyAppSecret: .bool(levels.everyAppSecret),
                    AdminNames.SetDesktopLockScreen.privateApps: .array(levels.privateApps.map(JSON.string)),
                    AdminNames.SetDesktopLockScreen.secretApps: .array(levels.secretApps.map(JSON.string)),
                ]
            }
        }

        /// A state on or off, and what said it, if anything.
        private static func state(on: Bool, source: String?) -> JSONObject {
            // SetSharing and SetLock take the same two members.
            var parameters: JSONObject = [AdminNames.SetLock.on: .bool(on)]
            if let source { parameters[AdminNames.SetLock.source] = .string(source) }
            return parameters
        }

        /// What the log says of islandd's `reply`: a message and its fields. A reply that is not
        /// what the interface says is logged as what was asked; the call was taken all the same.
        package func told(reply: JSONObject) -> (message: String, fields: [(String, String)]) {
            switch self {
            case .focus(let on):
                ("set islandd's focus", [("on", "\((try? AdminReplies.SetFocus(reply))?.focus.on ?? on)")])
            case .sharing(let wish):
                (
                    "set islandd's sharing",
                    [("on", "\(wish.on)"), ("contentHidden", "\((try? AdminReplies.SetSharing(reply))?.sharing.contentHidden ?? false)")]
                )
            case .lock(let wish):
                ("set islandd's lock", [("on", "\(wish.on)")])
            case .lockScreen(let levels):
                (
                    "set islandd's desktop lock-screen levels",
                    [
                        ("everyAppSecret", "\(levels.everyAppSecret)"),
                        ("private", "\(levels.privateApps.count)"), ("secret", "\(levels.secretApps.count)"),
                    ]
                )
            }
        }
    }

    package var focus = DesktopFocus()
    package var sharing = SharingAnnouncer()
    package var lock = DesktopLock()
    /// GNOME's lock-screen privacy: the latest read, said again to a daemon that restarted.
    package var lockScreen = LatestWishCalls(announced: GnomeLockScreen())
    private var links: RetryingLinks<State>

    /// `backoff`: the waits before a failed call is sent again.
    package init(backoff: Backoff) {
        links = RetryingLinks(backoff: backoff)
    }

    /// The calls to send now, each marked in flight.
    package mutating func nextCalls() -> [Call] {
        var calls: [Call] = []
        if let on = focus.nextCall() { calls.append(.focus(on: on)) }
        if let wish = sharing.nextCall() { calls.append(.sharing(wish)) }
        if let wish = lock.nextCall() { calls.append(.lock(wish)) }
        if let levels = lockScreen.nextCall() { calls.append(.lockScreen(levels)) }
        return calls
    }

    /// `call` came back at `now`. A failed one is due again once its link's wait is over.
    package mutating func completed(_ call: Call, succeeded: Bool, now: RetryingLink.Instant) {
        switch call {
        case .focus(let on): focus.completed(on, succeeded: succeeded)
        case .sharing(let wish): sharing.completed(wish, succeeded: succeeded)
        case .lock(let wish): lock.completed(wish, succeeded: succeeded)
        case .lockScreen(let levels): lockScreen.completed(levels, succeeded: succeeded)
        }
        if succeeded {
            links[call.state].held()
        } else {
            links[call.state].failed(now: now)
        }
    }

    /// When a failed call is next due; nil when none is.
    package var nextDue: RetryingLink.Instant? { links.nextDue }

    /// Makes the failed calls whose wait is over due again (then `nextCalls()` hands them out).
    package mutating func retryDue(now: RetryingLink.Instant) {
        for state in links.takeDue(now: now) { retry(state) }
    }

    /// Makes `state`'s failed call due again at once: islandd came back.
    package mutating func retry(_ state: State) {
        links[state].cancel()
        switch state {
        case .focus: focus.retry()
        case .sharing: sharing.retry()
        case .lock: lock.retry()
        case .lockScreen: lockScreen.retry()
        }
    }
}
