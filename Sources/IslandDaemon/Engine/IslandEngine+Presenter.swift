import IslandCore
import Synchronization
import VarlinkCore

/// What a presenter does to an activity (`org.island.Presenter.Interact`).
enum PresenterAction: String, Sendable, CaseIterable {
    case expand, collapse, tap, dismiss, button
}

/// The presenter role: subscriptions to an island, and interactions with it.
extension IslandEngine {
    /// Streams the island of `uid` to `responder` until the call ends: a snapshot, then deltas.
    func subscribe(uid: UInt32, responder: VarlinkResponder) {
        let (id, stream) = presenters.subscribe(uid: uid, responder: responder, now: clock())
        responder.onCancel { [weak self] in self?.performLater { $0.presenters.unsubscribe(id, uid: uid) } }
        stream.send(.snapshot(resync: false))
        // A snapshot is built when it is sent, so deltas queued before then are already in it.
        let lastSnapshot = Mutex<UInt64>(0)
        Task {
            await stream.run { message in
                switch message {
                case .delta(let update, let number):
                    return number > lastSnapshot.withLock { $0 } ? update : nil
                case .snapshot(let resync):
                    let (snapshot, number) = await self.encodedSnapshot(uid: uid, resync: resync)
                    lastSnapshot.withLock { $0 = number }
                    return snapshot
                }
            }
        }
    }

    func encodedSnapshot(uid: UInt32, resync: Bool) -> (VarlinkEncodedParameters, updateNumber: UInt64) {
        presenters.snapshot(for: uid, resync: resync, now: clock())
    }

    /// A presenter of `uid` acts on activity `id` (or on the island, to collapse it); a tap
    /// answers the URL to open, if any.
    func interact(uid: UInt32, action: PresenterAction, id: String?, button: String?) async throws(EngineError) -> String? {
        let now = clock()
        // What presenters were never shown (a pending activity) does not exist for them.
        if let id, !presenters.isShown(id) || !presenters.isVisible(id, to: uid) || presenters.isAbsentWhileLocked(HashedID(id)) {
            throw .noSuchActivity(id)
        }
        // Nothing acts on a locked screen: what a tap opens, a button does or a dismissal
        // removes is for the user who unlocked it. The island may still expand and collapse.
        if presenters.isLocked, action == .tap || action == .button || action == .dismiss { throw .locked }
        presenters.ensureView(for: uid, now: now)
        switch action {
        case .expand:
            guard let id, manager.activity(id: id)?.isLive == true else { throw .noSuchActivity(id) }
            presenters.expand(id, for: uid, now: now)
            scheduleTimer()
            return nil
        case .collapse:
            presenters.collapse(for: uid, now: now)
            observer?.islandMayRest()
            return nil
        case .tap:
            // An ended activity is tapped too: it is still on the lock screen, and a tap opens
            // its app, as on iOS.
            guard let id, let activity = manager.activity(id: id) else { throw .noSuchActivity(id) }
            let url = presenters.layouts.tapURL(for: activity, now: now)
            watchers.tell(about: activity) { .tap(activity, url: url) }
            return url
        case .button:
            guard let id, let activity = manager.activity(id: id) else { throw .noSuchActivity(id) }
            guard let button else { throw .buttonMissing }
            // What the app is told must be a press of a button it drew: not one on a stale
            // card (its action may no longer make sense), nor one no layout of it has.
            guard activity.isLive else { throw .refused(.activityEnded(id: id, state: activity.state)) }
            guard presenters.layouts.buttonActions(for: activity).contains(button) else {
                throw .noSuchButton(id: id, button: button)
            }
            watchers.tell(about: activity) { .button(activity, action: button) }
            return nil
        case .dismiss:
            guard let id else { throw .noSuchActivity(nil) }
            // A system service's activity is on every user's island: one user removing it
            // would remove it for all.
            if scope == .system, uid != 0, let owner = manager.activity(id: id)?.uid, owner != uid {
                throw .sharedActivity
            }
            try await decide { manager, now throws(IslandError) in ((), try manager.dismiss(id: id, now: now)) }
            return nil
        }
    }
}
