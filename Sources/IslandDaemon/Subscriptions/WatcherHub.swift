import IslandCore
import OrderedJSON
import VarlinkCore

/// The apps' Watch streams, and what they are told: committed changes of their own
/// activities (a state when it changed, content when it was delivered), taps and button
/// presses, changes of their authorization, and the user's Do Not Disturb. Owned and changed by the engine, on its loop.
struct WatcherHub {
    struct Watcher {
        let owner: ActivityOwner
        /// The activities watched; nil for all of the owner's.
        let ids: Set<String>?
        let stream: OutboundStream<WatchEvent>

        func watches(_ activity: Activity) -> Bool {
            owner == activity.owner && (ids?.contains(activity.id) ?? true)
        }
    }

    private var watchers: [UInt64: Watcher] = [:]
    /// The state and delivered content watchers last heard of, per activity.
    private var heard: [HashedID: Heard] = [:]
    private typealias Heard = (state: ActivityState, content: ActivityContent)
    /// Bytes queued for watchers that do not keep up, all of them together.
    private let budget = QueueBudget(limit: StreamBounds.allWatchBytes)
    private var lastID: UInt64 = 0

    /// Starts from the activities as committed, which watchers are taken to know.
    init(activities: [Activity]) {
        for activity in activities { heard[activity.hashedID] = (activity.state, activity.deliveredContent) }
    }

    /// Adds a watcher of `owner`'s activities, or only of `ids`, and tells it it is
    /// registered, so that its client can tell when no later change can escape it, and
    /// whether Do Not Disturb is on (`focusSince`), which later `focus` events update.
    mutating func add(owner: ActivityOwner, ids: Set<String>?, focusSince: Double?, responder: VarlinkResponder) -> UInt64 {
        let stream = OutboundStream(responder: responder, policy: StreamBounds.watch, budget: budget)
        lastID += 1
        watchers[lastID] = Watcher(owner: owner, ids: ids, stream: stream)
        let watching = WatchEvent.watching(focusSince: focusSince)
        stream.send(watching, encoded: watching.encoded)
        Task { await stream.run { $0.encoded } }
        return lastID
    }

    mutating func remove(_ id: UInt64) {
        watchers[id] = nil
    }

    /// Tells watchers what committed events changed: a state only when it changed, content
    /// only when it was delivered and differs from what they heard. `newState` hears of each
    /// activity whose state changed, watched or not (for the journal).
    mutating func tell(_ events: [ActivityEvent], newState: (Activity) -> Void) {
        // Where the last activity is in `heard`: an update is reported as changed, then
        // delivered, and one hash of its id serves both (this runs for every update).
        var last: (id: HashedID, index: Dictionary<HashedID, Heard>.Index)?
        func index(of id: HashedID) -> Dictionary<HashedID, Heard>.Index? {
            if let last, last.id == id { return last.index }
            return heard.index(forKey: id)
        }
        func remember(_ now: Heard, of id: HashedID, at found: Dictionary<HashedID, Heard>.Index?) {
            if let found {
                heard.values[found] = now
                last = (id, found)
            } else {
                // An insertion moves every index.
                heard[id] = now
                last = nil
            }
        }
        // By index, each event read where it is: iterating the array copied every event, and
        // the activity in it, once more.
        for eventIndex in events.indices {
            switch events[eventIndex] {
            case .changed(let activity):
                let id = activity.hashedID
                let found = index(of: id)
                let before = found.map { heard.values[$0] }
                if before?.state != activity.state {
                    // Dismissed in the moment it ended (an immediate dismissal, the user's
                    // dismiss of a live activity): watchers hear `ended` first all the same,
                    // which is what they act on.
                    if activity.state == .dismissed, before?.state != .ended, let ended = activity.asEnded {
                        tell(about: ended) { WatchEvent(kind: .state, activity: ended) }
                    }
                    tell(about: activity) { WatchEvent(kind: .state, activity: activity) }
                    newState(activity)
                }
                remember((activity.state, before?.content ?? activity.deliveredContent), of: id, at: found)
            case .delivered(let activity):
                let id = activity.hashedID
                let found = index(of: id)
                // Comparing contents costs as much as the rest of an update: only for watchers.
                if let found, isWatched(activity), heard.values[found].content != activity.deliveredContent {
                    tell(about: activity) { WatchEvent(kind: .content, activity: activity) }
                }
                remember((activity.state, activity.deliveredContent), of: id, at: found)
            case .removed(let id):
                heard[HashedID(id)] = nil
                last = nil
            case .focusChanged(let since):
                // The user's, so every app's watchers hear of it.
                let event = WatchEvent.focus(since: since)
                for watcher in watchers.values { watcher.stream.send(event, encoded: event.encoded) }
            case .alerted, .settingsChanged, .budgetsChanged, .pushesSpent:
                break
            }
        }
    }

    private func isWatched(_ activity: Activity) -> Bool {
        // Iterating even an empty dictionary's values costs ~90 instructions, on every update.
        !watchers.isEmpty && watchers.values.contains { $0.watches(activity) }
    }

    /// Sends the watchers following `activity` an event about it, which `event` makes: only
    /// if there are any, and once for all of them.
    mutating func tell(about activity: Activity, _ event: () -> WatchEvent) {
        var built: WatchEvent?
        var cutOff: [UInt64] = []
        for (id, watcher) in watchers where watcher.watches(activity) {
            // A watcher cut off for falling too far behind is gone from its connection.
            if watcher.stream.isClosed {
                cutOff.append(id)
                continue
            }
            let event = built ?? event()
            built = event
            watcher.stream.send(event, encoded: event.encoded)
        }
        for id in cutOff { watchers[id] = nil }
    }

    /// Tells `owner`'s watchers an event that is not an activity's change (a push-to-start
    /// token); with `activity`, only those that watch it.
    func tell(owner: ActivityOwner, activity: String? = nil, _ event: WatchEvent) {
        for watcher in watchers.values where watcher.owner == owner && (activity == nil || watcher.ids?.contains(activity!) ?? true) {
            watcher.stream.send(event, encoded: event.encoded)
        }
    }

    /// Tells the watchers of `app`, or of every app when nil, their authorization as it is
    /// now, which `authorization` works out for each owner.
    func tellAuthorization(of app: String?, _ authorization: (ActivityOwner) -> AuthorizationInfo) {
        for watcher in watchers.values where app == nil || watcher.owner.app == app {
            let event = WatchEvent.authorization(authorization(watcher.owner))
            watcher.stream.send(event, encoded: event.encoded)
        }
    }
}
