import OrderedJSON
import Synchronization

/// The latest known snapshot of one activity and the streams following it. Shared by every
/// `Activity` object with this id; fed by the connection's watch stream and, after a
/// reconnect, by a fresh listing (which re-emits the current state and content).
final class ActivityChannel: Sendable {
    typealias Handler = @Sendable (ActivitySnapshot) -> Void

    private struct State {
        var latest: ActivitySnapshot
        var lastContent: RawActivityContent
        var lastState: ActivityState
        var contentHandlers: [UInt64: Handler] = [:]
        var stateHandlers: [UInt64: Handler] = [:]
        var finishers: [UInt64: @Sendable () -> Void] = [:]
        /// Kept apart from `latest`: state and content events do not carry the token.
        var pushToken: String?
        var pushTokenHandlers: [UInt64: @Sendable (String) -> Void] = [:]
        var interactionHandlers: [UInt64: @Sendable (ActivityInteraction) -> Void] = [:]
        var nextID: UInt64 = 0
    }

    let id: String
    private let state: Mutex<State>

    init(_ snapshot: ActivitySnapshot) {
        id = snapshot.id
        state = Mutex(
            State(
                latest: snapshot, lastContent: snapshot.deliveredContent, lastState: snapshot.state,
                pushToken: snapshot.pushToken))
    }

    var pushToken: String? { state.withLock { $0.pushToken } }

    /// Records the activity's push token; handlers run when it is new.
    func receive(pushToken: String) {
        let handlers = state.withLock { s -> [@Sendable (String) -> Void] in
            guard s.pushToken != pushToken else { return [] }
            s.pushToken = pushToken
            return Array(s.pushTokenHandlers.values)
        }
        handlers.forEach { $0(pushToken) }
    }

    /// Adds a handler of new push tokens, called at once with the current one; `finish`
    /// runs when the activity is dismissed. Returns a token for `remove`.
    func subscribePushToken(_ handler: @escaping @Sendable (String) -> Void, finish: @escaping @Sendable () -> Void) -> UInt64? {
        let (id, current) = state.withLock { s -> (UInt64?, String?) in
            if s.latest.state == .dismissed { return (nil, nil) }
            s.nextID += 1
            s.pushTokenHandlers[s.nextID] = handler
            s.finishers[s.nextID] = finish
            return (s.nextID, s.pushToken)
        }
        if id != nil, let current { handler(current) }
        return id
    }

    /// Passes a tap or a button press on to the handlers.
    func receive(_ interaction: ActivityInteraction) {
        let handlers = state.withLock { Array($0.interactionHandlers.values) }
        handlers.forEach { $0(interaction) }
    }

    /// Adds a handler of taps and button presses; `finish` runs when the activity is
    /// dismissed. Returns a token for `remove`.
    func subscribeInteractions(
        _ handler: @escaping @Sendable (ActivityInteraction) -> Void,
        finish: @escaping @Sendable () -> Void
    ) -> UInt64? {
        state.withLock { s in
            if s.latest.state == .dismissed { return nil }
            s.nextID += 1
            s.interactionHandlers[s.nextID] = handler
            s.finishers[s.nextID] = finish
            return s.nextID
        }
    }

    var latest: ActivitySnapshot { state.withLock { $0.latest } }

    /// Records a snapshot; handlers run when the delivered content or the state changed, or
    /// always with `force` (after a reconnect). A dismissed activity's streams finish.
    ///
    /// State handlers see `ended` before `dismissed`, as in ActivityKit, also when the
    /// activity went from live to dismissed at once (an immediate dismissal, the user's
    /// dismissal, or a restart that missed the end): `ended` is never skipped.
    func receive(_ snapshot: ActivitySnapshot, force: Bool) {
        var endedFirst: ActivitySnapshot?
        let (content, states, finishers) = state.withLock { s -> ([Handler], [Handler], [@Sendable () -> Void]) in
            if Self.isNewer(snapshot, than: s.latest) { s.latest = snapshot }
            if let token = snapshot.pushToken { s.pushToken = token }
            var content: [Handler] = []
            var states: [Handler] = []
            if force || snapshot.deliveredContent != s.lastContent {
                s.lastContent = snapshot.deliveredContent
                content = Array(s.contentHandlers.values)
            }
            if force || snapshot.state != s.lastState {
                if snapshot.state == .dismissed, s.lastState != .ended, s.lastState != .dismissed {
                    var ended = snapshot
                    ended.state = .ended
                    endedFirst = ended
                }
                s.lastState = snapshot.state
                states = Array(s.stateHandlers.values)
            }
            var finishers: [@Sendable () -> Void] = []
            if snapshot.state == .dismissed {
                finishers = Array(s.finishers.values)
                s.contentHandlers = [:]
                s.stateHandlers = [:]
                s.pushTokenHandlers = [:]
                s.interactionHandlers = [:]
                s.finishers = [:]
            }
            return (content, states, finishers)
        }
        content.forEach { $0(snapshot) }
        if let endedFirst { states.forEach { $0(endedFirst) } }
        states.forEach { $0(snapshot) }
        finishers.forEach { $0() }
    }

    /// Records a snapshot from a reply (an update's, an end's) without emitting anything:
    /// the streams follow what presenters get, from the watch stream.
    func note(_ snapshot: ActivitySnapshot) {
        state.withLock { s in
            if Self.isNewer(snapshot, than: s.latest) { s.latest = snapshot }
            if let token = snapshot.pushToken { s.pushToken = token }
        }
    }

    /// Replies and events may cross: never go back from ended to live, or to older content.
    private static func isNewer(_ snapshot: ActivitySnapshot, than latest: ActivitySnapshot) -> Bool {
        func rank(_ state: ActivityState) -> Int {
            switch state {
            case .pending, .active, .stale: 0
            case .ended: 1
            case .dismissed: 2
            }
        }
        return (rank(snapshot.state), snapshot.updatedAt) >= (rank(latest.state), latest.updatedAt)
    }

    enum Kind { case content, state }

    /// Adds a handler; `finish` runs when the activity is dismissed. Returns a token for `remove`.
    func subscribe(_ kind: Kind, handler: @escaping Handler, finish: @escaping @Sendable () -> Void) -> UInt64? {
        state.withLock { s in
            if s.latest.state == .dismissed { return nil }
            s.nextID += 1
            switch kind {
            case .content: s.contentHandlers[s.nextID] = handler
            case .state: s.stateHandlers[s.nextID] = handler
            }
            s.finishers[s.nextID] = finish
            return s.nextID
        }
    }

    func remove(_ token: UInt64) {
        state.withLock { s in
            s.contentHandlers[token] = nil
            s.stateHandlers[token] = nil
            s.pushTokenHandlers[token] = nil
            s.interactionHandlers[token] = nil
            s.finishers[token] = nil
        }
    }
}
