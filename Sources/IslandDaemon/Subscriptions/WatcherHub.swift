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
    /// The content heard is that of `delivered`, the activity it was delivered in: keeping the
    /// activity (one reference, mostly the very one the manager holds) rather than a copy of
    /// its content makes the next delivery's bookkeeping a reference stored, and what was
    /// heard is compared only when someone watches.
    private typealias Heard = (state: ActivityState, delivered: Activity)
    /// Where the activity last told of is in `heard`, for the next event of a version of it
    /// (a producer's stream of updates): found by one reference compared instead of a look-up.
    /// An insertion or removal moves every index, and forgets it.
    private var lastHeard: Dictionary<HashedID, Heard>.Index?
    /// Bytes queued for watchers that do not keep up, all of them together.
    private let budget = QueueBudget(limit: StreamBounds.allWatchBytes)
    private var lastID: UInt64 = 0

    /// Starts from the activities as committed, which watchers are taken to know.
    init(activities: [Activity]) {
        for activity in activities { heard[activity.hashedID] = (activity.state, activity) }
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

    /// Where `activity` is in `heard`, if it is.
    private mutating func index(of activity: Activity) -> Dictionary<HashedID, Heard>.Index? {
        if let last = lastHeard, heard.values[last].delivered.isVersion(of: activity) { return last }
        let found = heard.index(forKey: activity.hashedID)
        lastHeard = found
        return found
    }

    /// `activity` is heard of as `now`: written where it is, or inserted.
    private mutating func remember(_ now: Heard, of activity: Activity, at found: Dictionary<HashedID, Heard>.Index?) {
        if let found {
            heard.values[found] = now
        } else {
            heard[activity.hashedID] = now
            lastHeard = nil
        }
    }

    /// Tells watchers what committed events changed: a state only when it changed, content
    /// only when it was delivered and differs from what they heard. `newState` hears of each
    /// activity whose state changed, watched or not (for the journal).
    mutating func tell(_ events: [ActivityEvent], newState: (Activity) -> Void) {
        // By index, each event read where it is: iterating the array copied every event, and
        // the activity in it, once more.
        for eventIndex in events.indices {
            switch events[eventIndex] {
            case .changed(let activity):
                let found = index(of: activity)
                let before = found.map { heard.values[$0].state }
                // An update that leaves the state as it was (most of them) writes nothing.
                guard before != activity.state else { continue }
                // Dismissed in the moment it ended (an immediate dismissal, the user's
                // dismiss of a live activity): watchers hear `ended` first all the same,
                // which is what they act on.
                if activity.state == .dismissed, before != .ended, let ended = activity.asEnded {
                    tell(about: ended) { WatchEvent(kind: .state, activity: ended) }
                }
                tell(about: activity) { WatchEvent(kind: .state, activity: activity) }
                newState(activity)
                if let found {
                    heard.values[found].state = activity.state
                } else {
                    remember((activity.state, activity), of: activity, at: nil)
                }
            case .delivered(let activity):
                let found = index(of: activity)
                if let found {
                    let was = heard.values[found]
                    // Delivered again in the very activity heard (the same update's events
                    // told twice): nothing to tell or write.
                    if was.delivered.isSame(as: activity), was.state == activity.state { continue }
                    // Comparing contents costs as much as the rest of an update: only for watchers.
                    if isWatched(activity), was.delivered.deliveredContent != activity.deliveredContent {
                        tell(about: activity) { WatchEvent(kind: .content, activity: activity) }
                    }
                }
                remember((activity.state, activity), of: activity, at: found)
            case .removed(let id):
                heard[HashedID(id)] = nil
                lastHeard = nil
            case .focusChanged(let since):
                // The user's, so every app's watchers hear of it.
                let event = WatchEvent.focus(since: since)
                for watcher in watchers.values { watcher.stream.send(event, encoded: event.encoded) }
            case .alerted, .settingsChanged, .budgetsChanged, .pushesSpent:
                break
            }
        }
    }

    /// Nobody watches: a commit's end tells nobody (the engine may leave it for a later turn,
    /// `ParkedFinishes`).
    var isEmpty: Bool { watchers.isEmpty }

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
