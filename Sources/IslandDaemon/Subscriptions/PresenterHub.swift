import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore

/// What a presenter's stream carries.
enum PresenterMessage: Sendable {
    /// Encoded once, however many presenters it goes to; `number` is its view's `updateNumber`.
    case delta(VarlinkEncodedParameters, number: UInt64)
    /// The whole state, built when it is sent: first on subscribing, then after overflow.
    case snapshot(resync: Bool)
}

/// What presenters are shown: every activity as they draw it, and an island per uid —
/// in the system scope a user's presenters see only that user's activities and those of
/// system services, so each uid has its own view, arbitrated from what it may see.
///
/// Presenters are shown a change as soon as it is decided (`show`), before it is committed:
/// they hear only of what they would draw differently, in deltas that carry an item's layout
/// only when it changed. A presenter that subscribes, or falls behind, gets a snapshot.
/// Owned and changed by the engine, on its loop.
struct PresenterHub {
    /// Activities of uids below this belong to system services, which every presenter sees.
    static let firstUserUID: UInt32 = 1000

    struct View {
        var arbiter = IslandArbiter()
        /// The number of the view's latest update, which its presenters see as `sequence`: one
        /// more for each delta, and for each resync. (Not the arbiter's own count of islands.)
        var updateNumber: UInt64 = 0
        var streams: [UInt64: OutboundStream<PresenterMessage>] = [:]
        /// The layout revision each activity last had in this view's deltas: a delta carries
        /// an item's layout only when it changed, since a presenter keeps what it has.
        var sentLayouts: [HashedID: UInt64] = [:]
    }

    let scope: DaemonScope
    /// Every activity as presenters are shown it, in creation order: the islands, deltas and
    /// snapshots are all built from this, in the order changes were decided.
    private(set) var shown: OrderedDictionary<HashedID, Activity>
    /// When the user turned Do Not Disturb on, as presenters are shown it; nil while off.
    private(set) var focusSince: Double?
    /// Whether the screen is shared, and since when; nil while it is not.
    private(set) var sharing: ScreenSharing?
    /// islandd.conf's `HideWhileSharing=`: whether content is hidden while the screen is shared.
    private(set) var hidesWhileSharing = true
    /// Whether presenters are sent no activity content now: every item goes out as
    /// `Wire.writeHiddenItem` writes it, and every alert as `Wire.hiddenAlert`.
    var hidesContent: Bool { sharing != nil && hidesWhileSharing }
    private var views: [UInt32: View] = [:]
    var layouts: LayoutCache
    /// Snapshots last encoded, per uid: presenters subscribing (or resyncing) together share
    /// one encoding, and one buffer, of what may be every activity there is.
    private var snapshots: [UInt32: (updateNumber: UInt64, resync: Bool, encoded: VarlinkEncodedParameters)] = [:]
    /// Bytes queued for presenters that do not keep up, all of them together.
    private let budget = QueueBudget(limit: StreamBounds.allPresenterBytes)
    private var lastStreamID: UInt64 = 0

    init(activities: [Activity], focusSince: Double?, scope: DaemonScope, layouts: LayoutCache) {
        self.shown = OrderedDictionary(uniqueKeysWithValues: activities.map { ($0.hashedID, $0) })
        self.focusSince = focusSince
        self.scope = scope
        self.layouts = layouts
    }

    // MARK: Presenters

    /// Adds a presenter of `uid`'s island; it is sent a snapshot first.
    mutating func subscribe(uid: UInt32, responder: VarlinkResponder, now: Double) -> (id: UInt64, stream: OutboundStream<PresenterMessage>) {
        // A presenter that falls behind loses nothing it needs: its queued deltas collapse
        // into one resync, and it is sent the whole current state when it reads again.
        let stream = OutboundStream(responder: responder, policy: StreamBounds.presenter, budget: budget)
        lastStreamID += 1
        views.values[ensureView(for: uid, now: now)].streams[lastStreamID] = stream
        return (lastStreamID, stream)
    }

    mutating func unsubscribe(_ id: UInt64, uid: UInt32) {
        views[uid]?.streams[id] = nil
    }

    var presenterCount: Int { views.values.reduce(0) { $0 + $1.streams.count } }

    /// Creates the island of `uid`'s presenters on first use, arbitrated from what they may see.
    @discardableResult
    mutating func ensureView(for uid: UInt32, now: Double) -> Dictionary<UInt32, View>.Index {
        if let index = views.index(forKey: uid) { return index }
        var view = View()
        _ = view.arbiter.recompute(candidates: candidates(for: uid), now: now)
        views[uid] = view
        return views.index(forKey: uid)!  // just inserted
    }

    // MARK: Visibility

    /// Whether presenters of `uid` may see an activity of `owner`: their own, and system
    /// services'; root's see every one.
    func isVisible(owner: UInt32?, to uid: UInt32) -> Bool {
        guard scope == .system, uid != 0, let owner else { return true }
        return owner == uid || owner < Self.firstUserUID
    }

    func isVisible(_ id: String, to uid: UInt32) -> Bool {
        isVisible(owner: shown[HashedID(id)]?.uid, to: uid)
    }

    private func candidates(for uid: UInt32) -> [IslandCandidate] {
        shown.values.compactMap { activity in isVisible(owner: activity.uid, to: uid) ? candidate(activity) : nil }
    }

    /// All the arbitration knows of an activity; nil once dismissed. An activity whose producer
    /// speaks for a verified app (a bridge showing mpv) is that app's here, so it shares the
    /// island with the producer's other activities as two apps' would; what it may cost (its
    /// budgets and limits) is still counted against the producer, by its owner, elsewhere.
    private func candidate(_ activity: Activity) -> IslandCandidate? {
        let state: IslandCandidate.State
        switch activity.state {
        case .pending, .active: state = .active
        case .stale: state = .stale
        case .ended: state = .ended
        case .dismissed: return nil
        }
        return IslandCandidate(id: activity.id, app: layouts.verifiedSourceApp(of: activity) ?? activity.app, state: state,
                               relevanceScore: activity.deliveredContent.relevanceScore, startedAt: activity.createdAt)
    }

    // MARK: Showing changes

    /// Shows presenters what decided events changed: presenters hear only of what they would
    /// draw differently — a throttled update is stored but not shown until its delivery.
    mutating func show(_ events: [ActivityEvent], now: Double) {
        // Usually one activity: a list, not a hash table.
        var changed: [Activity] = []
        var removed: [String] = []
        var alert: (id: String, alert: Alert)?
        var focusChanged = false
        // Most updates change content only: the arbitration, a sort of every activity, need
        // not run again for them (timeouts of expansions come by the timer).
        var arbitrationChanged = false
        for event in events {
            switch event {
            case .changed(let activity), .delivered(let activity):
                // One hash of the id for the look-up and the update: this runs for every update.
                if let index = shown.index(forKey: activity.hashedID) {
                    // Of what arbitration knows of an activity, only these change.
                    let before = shown.values[index]
                    arbitrationChanged = arbitrationChanged || before.state != activity.state
                        || before.deliveredContent.relevanceScore != activity.deliveredContent.relevanceScore
                    shown.values[index] = activity
                } else {
                    arbitrationChanged = arbitrationChanged || candidate(activity) != nil
                    shown[activity.hashedID] = activity
                }
                if case .delivered = event {
                    if let index = changed.firstIndex(where: { $0.id == activity.id }) {
                        changed[index] = activity
                    } else {
                        changed.append(activity)
                    }
                }
            case .removed(let id):
                shown.removeValue(forKey: HashedID(id))
                layouts.forget(id)
                removed.append(id)
            case .alerted(let id, let a):
                alert = (id, a)
            case .focusChanged(let since):
                focusSince = since
                focusChanged = true
            case .settingsChanged, .budgetsChanged:
                break
            }
        }
        let arbitrate = arbitrationChanged || !removed.isEmpty || alert != nil
        // Not `? … : nil`: JSON takes `nil` as its own null, which a delta would then carry.
        var focus: JSON?
        if focusChanged { focus = Wire.focus(since: focusSince) }
        // Each view in place, by index: iterating the dictionary while changing a view would
        // copy all of it, every update.
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let uid = views.keys[index]
            let visibleAlert = alert.flatMap { isVisible($0.id, to: uid) ? $0 : nil }
            if let visibleAlert { views.values[index].arbiter.interactions.alert(id: visibleAlert.id, now: now) }
            var islandChanged = false
            if arbitrate {
                let candidates = candidates(for: uid)
                islandChanged = views.values[index].arbiter.recompute(candidates: candidates, now: now) != nil
            }
            // Usually one item, shown to everyone: no array made for it.
            let items = changed.count == 1 && removed.isEmpty && isVisible(owner: changed[0].uid, to: uid)
                ? changed
                : changed.filter { !removed.contains($0.id) && isVisible(owner: $0.uid, to: uid) }.sorted { $0.id < $1.id }
            guard islandChanged || focusChanged || !items.isEmpty || !removed.isEmpty else { continue }
            views.values[index].send(island: islandChanged, focus: focus, items: items, removed: removed, alert: visibleAlert,
                                     hidingContent: hidesContent, layouts: &layouts)
        }
    }

    /// Shows the activities again, with their layouts worked out anew: after the layouts
    /// they are drawn with changed.
    mutating func redraw(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let uid = views.keys[index]
            let visible = ids.filter { isVisible($0, to: uid) }
            guard !visible.isEmpty else { continue }
            let items = visible.compactMap { shown[HashedID($0)] }
            views.values[index].send(island: false, items: items, removed: [], alert: nil, hidingContent: hidesContent, layouts: &layouts)
        }
    }

    /// Rearranges every island at `now`, for an expansion that timed out.
    mutating func advance(now: Double) {
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let candidates = candidates(for: views.keys[index])
            if views.values[index].arbiter.recompute(candidates: candidates, now: now) != nil {
                views.values[index].send(island: true, items: [], removed: [], alert: nil, hidingContent: hidesContent, layouts: &layouts)
            }
        }
    }

    /// A presenter of `uid` long-pressed a live activity.
    mutating func expand(_ id: String, for uid: UInt32, now: Double) {
        let index = ensureView(for: uid, now: now)
        if views.values[index].arbiter.expand(id: id, now: now) != nil {
            views.values[index].send(island: true, items: [], removed: [], alert: nil, hidingContent: hidesContent, layouts: &layouts)
        }
    }

    /// A presenter of `uid` let go: its island rests again.
    mutating func collapse(for uid: UInt32, now: Double) {
        let index = ensureView(for: uid, now: now)
        if views.values[index].arbiter.collapse(now: now) != nil {
            views.values[index].send(island: true, items: [], removed: [], alert: nil, hidingContent: hidesContent, layouts: &layouts)
        }
    }

    /// When the next expansion times out, on any island.
    var nextDeadline: Double? {
        var deadline: Double?
        for view in views.values {
            if let next = view.arbiter.nextDeadline, next < deadline ?? .infinity { deadline = next }
        }
        return deadline
    }

    /// Goes back to `activities`, the committed state, after presenters were shown decisions
    /// that did not reach the disk: each presenter gets the whole state again.
    mutating func resync(to activities: [Activity], focusSince: Double?, now: Double) {
        shown = OrderedDictionary(uniqueKeysWithValues: activities.map { ($0.hashedID, $0) })
        self.focusSince = focusSince
        layouts.keepOnly { shown[$0] != nil }
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let candidates = candidates(for: views.keys[index])
            views.values[index].updateNumber += 1
            _ = views.values[index].arbiter.recompute(candidates: candidates, now: now)
            for stream in views.values[index].streams.values { stream.send(.snapshot(resync: true)) }
        }
    }

    // MARK: Screen sharing

    /// Takes whether the screen is shared (nil: it is not) and whether content is hidden
    /// meanwhile. When either changes what presenters are told, each gets a fresh snapshot
    /// (not a resync): every item is drawn anew, hidden or shown again — a delta would carry
    /// no layout for items whose layout did not change, and presenters would keep the other.
    mutating func share(_ sharing: ScreenSharing?, hidingContent hides: Bool) {
        let before = (sharing: self.sharing, hidesContent: hidesContent)
        self.sharing = sharing
        hidesWhileSharing = hides
        // Who said so is not the presenters' business: only turning on or off, or hiding, is news.
        guard (before.sharing == nil) != (sharing == nil) || before.hidesContent != hidesContent else { return }
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            views.values[index].updateNumber += 1
            for stream in views.values[index].streams.values { stream.send(.snapshot(resync: false)) }
        }
    }

    // MARK: Snapshots

    /// The whole state `uid`'s presenters may see, encoded, and the update it is as of.
    mutating func snapshot(for uid: UInt32, resync: Bool, now: Double) -> (VarlinkEncodedParameters, updateNumber: UInt64) {
        let view = views.values[ensureView(for: uid, now: now)]
        if let cached = snapshots[uid], cached.updateNumber == view.updateNumber, cached.resync == resync {
            return (cached.encoded, view.updateNumber)
        }
        var update = Wire.PresenterUpdate(.snapshot, sequence: view.updateNumber, resync: resync, island: view.arbiter.presentation,
                                          focus: Wire.focus(since: focusSince),
                                          sharing: Wire.presenterSharing(sharing, contentHidden: hidesContent), capacity: 4096)
        let hiding = hidesContent
        for activity in shown.values where activity.state != .dismissed && isVisible(owner: activity.uid, to: uid) {
            let layout = layouts.layout(for: activity)
            if hiding {
                update.addHidden(activity, app: layout.app)
            } else {
                update.add(activity, layout: (layout.json, layout.isDefault), app: layout.app)
            }
        }
        let encoded = update.finish(removed: [], alert: nil)
        snapshots[uid] = (view.updateNumber, resync, encoded)
        return (encoded, view.updateNumber)
    }
}

extension PresenterHub.View {
    /// Sends the view's presenters a delta: the island when it changed, the focus state when
    /// it changed (`Wire.focus(since:)`), the items, the removed ids and the alert — the items
    /// and the alert without their content while `hidingContent`. Numbered even with no
    /// presenter to send it to, so that a cached snapshot is known to be out of date.
    mutating func send(island: Bool, focus: JSON? = nil, items: [Activity], removed: [String], alert: (id: String, alert: Alert)?,
                       hidingContent: Bool, layouts: inout LayoutCache) {
        updateNumber += 1
        for id in removed { sentLayouts[HashedID(id)] = nil }
        guard !streams.isEmpty else { return }
        var update = Wire.PresenterUpdate(.delta, sequence: updateNumber, resync: false, island: island ? arbiter.presentation : nil,
                                          focus: focus, capacity: 1024)
        for activity in items {
            let layout = layouts.layout(for: activity)
            // `sentLayouts` is left as it was: the snapshot that ends the hiding carries every
            // layout, and later deltas compare with what presenters had before it.
            if hidingContent {
                update.addHidden(activity, app: layout.app)
                continue
            }
            let changed = sentLayouts[activity.hashedID] != layout.revision
            if changed { sentLayouts[activity.hashedID] = layout.revision }
            update.add(activity, layout: changed ? (layout.json, layout.isDefault) : nil, app: layout.app)
        }
        let encoded = update.finish(removed: removed, alert: hidingContent ? alert.map { ($0.id, Wire.hiddenAlert) } : alert)
        for stream in streams.values { stream.send(.delta(encoded, number: updateNumber), encoded: encoded) }
    }
}
