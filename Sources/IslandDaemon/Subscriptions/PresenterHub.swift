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
    /// Where in `shown` the activity last looked up was: the next version of it (a
    /// producer's stream of updates, each a `.changed` and a `.delivered`) is found there by
    /// one reference compared instead of a look-up (~180 instructions each). Checked, not
    /// kept in step: a place that holds a version of the activity is its place, whatever
    /// was inserted or removed since.
    private var lastShown: Int?
    /// When the user turned Do Not Disturb on, as presenters are shown it; nil while off.
    private(set) var focusSince: Double?
    /// Whether the screen is shared, and since when; nil while it is not.
    private(set) var sharing: ScreenSharing?
    /// islandd.conf's `HideWhileSharing=`: whether content is hidden while the screen is shared.
    private(set) var hidesWhileSharing = true
    /// Whether presenters are sent no activity content now: every item goes out as
    /// `Wire.writeHiddenItem` writes it, and every alert as `Wire.hiddenAlert`.
    var hidesContent: Bool { sharing != nil && hidesWhileSharing }
    /// Whether the session is locked, and since when; nil while it is not.
    private(set) var lock: SessionLock?
    /// islandd.conf's `[LockScreen]` sections: the user's lock-screen privacy.
    private(set) var lockPolicy = LockScreenPolicy()
    /// While locked, each shown activity's lock-screen visibility, fixed when the session locked
    /// or when the activity was first shown since: a change of layout while locked may make it
    /// stricter, never looser, so no producer raises its level on a locked screen. Empty while
    /// unlocked. An activity without one while locked is taken as `secret` (it fails closed).
    private var lockLevels: [HashedID: LockScreenVisibility] = [:]
    private var views: [UInt32: View] = [:]
    /// How long expansions last (islandd.conf's `ExpandedSec=`, `AlertSec=`), for every view.
    private var expansionTimes = IslandInteractions()
    var layouts: LayoutCache
    /// Snapshots last encoded, per uid: presenters subscribing (or resyncing) together share
    /// one encoding, and one buffer, of what may be every activity there is.
    private var snapshots: [UInt32: (updateNumber: UInt64, resync: Bool, encoded: VarlinkEncodedParameters)] = [:]
    /// Bytes queued for presenters that do not keep up, all of them together.
    private let budget = QueueBudget(limit: StreamBounds.allPresenterBytes)
    private var lastStreamID: UInt64 = 0
    /// `show`'s list of the activities an update delivered, empty between calls: kept for its
    /// capacity.
    private var deliveredScratch: [Activity] = []

    init(activities: [Activity], focusSince: Double?, scope: DaemonScope, layouts: LayoutCache) {
        self.shown = Self.presentable(activities)
        self.focusSince = focusSince
        self.scope = scope
        self.layouts = layouts
    }

    /// What presenters may be shown of `activities`: all but the pending ones, which no
    /// presenter hears of before they start.
    private static func presentable(_ activities: [Activity]) -> OrderedDictionary<HashedID, Activity> {
        OrderedDictionary(uniqueKeysWithValues: activities.lazy.filter { $0.state != .pending }.map { ($0.hashedID, $0) })
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
        var view = View(arbiter: IslandArbiter(interactions: expansionTimes))
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

    /// Whether presenters were shown the activity (not, for one, a pending activity).
    func isShown(_ id: String) -> Bool { shown[HashedID(id)] != nil }

    func isVisible(_ id: String, to uid: UInt32) -> Bool {
        isVisible(owner: shown[HashedID(id)]?.uid, to: uid)
    }

    private func candidates(for uid: UInt32) -> [IslandCandidate] {
        shown.values.compactMap { activity in
            isVisible(owner: activity.uid, to: uid) && !isAbsentWhileLocked(activity.hashedID) ? candidate(activity) : nil
        }
    }

    /// All the arbitration knows of an activity; nil once dismissed. An activity whose producer
    /// speaks for a verified app (a bridge showing mpv) is that app's here, so it shares the
    /// island with the producer's other activities as two apps' would; what it may cost (its
    /// budgets and limits) is still counted against the producer, by its owner, elsewhere.
    private func candidate(_ activity: Activity) -> IslandCandidate? {
        let state: IslandCandidate.State
        switch activity.state {
        case .active: state = .active
        case .stale: state = .stale
        case .ended: state = .ended
        case .pending, .dismissed: return nil
        }
        return IslandCandidate(
            id: activity.id, app: layouts.verifiedSourceApp(of: activity) ?? activity.app, state: state,
            relevanceScore: activity.deliveredRelevanceScore, startedAt: activity.activeSince)
    }

    // MARK: Showing changes

    /// Shows presenters what decided events changed: presenters hear only of what they would
    /// draw differently — a throttled update is stored but not shown until its delivery.
    mutating func show(_ events: [ActivityEvent], now: Double) {
        // Usually one activity: a list, not a hash table; the one kept between calls, with its
        // capacity, so that an update allocates none.
        var changed: [Activity] = []
        swap(&changed, &deliveredScratch)
        defer {
            // One by one: `removeAll(keepingCapacity:)` went through `replaceSubrange`, ~150
            // instructions for the one activity usually there.
            while !changed.isEmpty { changed.removeLast() }
            swap(&changed, &deliveredScratch)
        }
        var removed: [String] = []
        var alert: (id: String, alert: Alert)?
        var focusChanged = false
        // Do Not Disturb coming on takes down an alert showing, at once.
        var silencing = false
        // Most updates change content only: the arbitration, a sort of every activity, need
        // not run again for them (timeouts of expansions come by the timer).
        var arbitrationChanged = false
        // By index, each event read where it is: iterating the array copied every event, and
        // the activity in it, once more.
        for eventIndex in events.indices {
            switch events[eventIndex] {
            case .changed(let activity), .delivered(let activity):
                // A pending activity is no presenter's business; nor is the dismissal of one
                // that ended before it started, which presenters never heard of.
                if activity.state == .pending || (activity.state == .dismissed && shown[activity.hashedID] == nil) { continue }
                if lock != nil {
                    // A level that becomes secret takes the activity off the locked screen.
                    let wasShown = !isAbsentWhileLocked(activity.hashedID) && shown[activity.hashedID] != nil
                    pinLockLevel(of: activity)
                    if wasShown && isAbsentWhileLocked(activity.hashedID) {
                        arbitrationChanged = true
                        removed.append(activity.id)
                    }
                }
                // Found where the last one was, or by one look-up, for reading and for writing:
                // this runs for every update.
                if let index = shownIndex(of: activity) {
                    // An update's `.delivered` carries the very activity its `.changed` just
                    // showed: nothing to compare or store again.
                    let before = shown.values[index]
                    if !before.isSame(as: activity) {
                        // Of what arbitration knows of an activity, only these change.
                        arbitrationChanged =
                            arbitrationChanged || before.state != activity.state
                            || before.deliveredRelevanceScore != activity.deliveredRelevanceScore
                        shown.values[index] = activity
                    }
                } else {
                    arbitrationChanged = arbitrationChanged || candidate(activity) != nil
                    shown[activity.hashedID] = activity
                    lastShown = shown.count - 1
                }
                if case .delivered = events[eventIndex] {
                    if let index = changed.firstIndex(where: { $0.id == activity.id }) {
                        changed[index] = activity
                    } else {
                        changed.append(activity)
                    }
                }
            case .removed(let id):
                // Presenters never heard of a secret activity while locked, nor of one that
                // never started: nor of its removal.
                let wasAbsent = isAbsentWhileLocked(HashedID(id))
                let wasShown = shown.removeValue(forKey: HashedID(id)) != nil
                layouts.forget(id)
                lockLevels[HashedID(id)] = nil
                if wasShown, !wasAbsent, !removed.contains(id) { removed.append(id) }
            case .alerted(let id, let a):
                guard shown[HashedID(id)] != nil else { continue }
                alert = (id, a)
            case .focusChanged(let since):
                focusSince = since
                focusChanged = true
                silencing = since != nil
            case .settingsChanged, .budgetsChanged, .pushesSpent:
                break
            }
        }
        let arbitrate = arbitrationChanged || !removed.isEmpty || alert != nil || silencing
        let redaction = self.redaction
        // Not `? … : nil`: JSON takes `nil` as its own null, which a delta would then carry.
        var focus: JSON?
        if focusChanged { focus = Wire.focus(since: focusSince) }
        // Each view in place, by index: iterating the dictionary while changing a view would
        // copy all of it, every update.
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let uid = views.keys[index]
            let visibleAlert = alert.flatMap { isVisible($0.id, to: uid) && !isAbsentWhileLocked(HashedID($0.id)) ? $0 : nil }
            if silencing { views.values[index].arbiter.interactions.silenceAlert() }
            if let visibleAlert { views.values[index].arbiter.interactions.alert(id: visibleAlert.id, now: now) }
            // What the alert says is what its activity may show: all, nothing (its text emptied),
            // or, for an activity no longer there, nothing.
            let alertRedaction = visibleAlert.map { alert in
                shown[HashedID(alert.id)].map { redaction.of($0, layout: layouts.layout(for: $0)) } ?? .hiddenWhileSharing
            }
            var islandChanged = false
            if arbitrate {
                let candidates = candidates(for: uid)
                islandChanged = views.values[index].arbiter.recompute(candidates: candidates, now: now) != nil
            }
            // Usually one item, shown to everyone: no array made for it.
            var items =
                changed.count == 1 && removed.isEmpty && isVisible(owner: changed[0].uid, to: uid)
                ? changed
                : changed.filter { !removed.contains($0.id) && isVisible(owner: $0.uid, to: uid) }.sorted { $0.id < $1.id }
            if lock != nil { items.removeAll { isAbsentWhileLocked($0.hashedID) } }
            guard islandChanged || focusChanged || !items.isEmpty || !removed.isEmpty else { continue }
            views.values[index].send(
                island: islandChanged, focus: focus, items: items, removed: removed,
                alert: alertRedaction?.alert(visibleAlert), redaction: redaction, layouts: &layouts)
        }
    }

    /// Where `activity` is in `shown`, if it is: where the last one looked up was, if a
    /// version of it is there.
    private mutating func shownIndex(of activity: Activity) -> Int? {
        if let last = lastShown, last < shown.count, shown.values[last].isVersion(of: activity) { return last }
        let found = shown.index(forKey: activity.hashedID)
        lastShown = found
        return found
    }

    /// Shows the activities again, with their layouts worked out anew: after the layouts
    /// they are drawn with changed.
    mutating func redraw(_ ids: [String], now: Double) {
        guard !ids.isEmpty else { return }
        if lock != nil {
            // The layouts may say another level now: one only stricter, which may take an
            // activity off the locked screen, so every presenter is shown it all again.
            for id in ids { if let activity = shown[HashedID(id)] { pinLockLevel(of: activity) } }
            rearrangeAndSnapshot(now: now)
            return
        }
        let redaction = self.redaction
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let uid = views.keys[index]
            let visible = ids.filter { isVisible($0, to: uid) }
            guard !visible.isEmpty else { continue }
            let items = visible.compactMap { shown[HashedID($0)] }
            views.values[index].send(island: false, items: items, removed: [], alert: nil, redaction: redaction, layouts: &layouts)
        }
    }

    /// Rearranges every island at `now`, for an expansion that timed out.
    mutating func advance(now: Double) {
        let redaction = self.redaction
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let candidates = candidates(for: views.keys[index])
            if views.values[index].arbiter.recompute(candidates: candidates, now: now) != nil {
                views.values[index].send(island: true, items: [], removed: [], alert: nil, redaction: redaction, layouts: &layouts)
            }
        }
    }

    /// A presenter of `uid` long-pressed a live activity.
    mutating func expand(_ id: String, for uid: UInt32, now: Double) {
        let redaction = self.redaction
        let index = ensureView(for: uid, now: now)
        if views.values[index].arbiter.expand(id: id, now: now) != nil {
            views.values[index].send(island: true, items: [], removed: [], alert: nil, redaction: redaction, layouts: &layouts)
        }
    }

    /// A presenter of `uid` let go: its island rests again.
    mutating func collapse(for uid: UInt32, now: Double) {
        let redaction = self.redaction
        let index = ensureView(for: uid, now: now)
        if views.values[index].arbiter.collapse(now: now) != nil {
            views.values[index].send(island: true, items: [], removed: [], alert: nil, redaction: redaction, layouts: &layouts)
        }
    }

    /// Until when an island is busy at `now` (an alert presented, an activity the user
    /// expanded), the latest of them; nil when every island rests.
    func busyUntil(now: Double) -> Double? {
        views.values.compactMap { $0.arbiter.interactions.busyUntil(at: now) }.max()
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
        shown = Self.presentable(activities)
        self.focusSince = focusSince
        layouts.keepOnly { shown[$0] != nil }
        if lock != nil {
            lockLevels = lockLevels.filter { shown[$0.key] != nil }
            for activity in activities { pinLockLevel(of: activity) }
        }
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
    /// How long a user's expansion and an alert's last from now on, or built in for nil;
    /// expansions showing keep the deadline they were given.
    mutating func timeExpansions(user: Double?, alert: Double?) {
        let builtIn = IslandInteractions()
        expansionTimes.expandTimeout = user ?? builtIn.expandTimeout
        expansionTimes.alertExpansion = alert ?? builtIn.alertExpansion
        for index in views.values.indices {
            views.values[index].arbiter.interactions.expandTimeout = expansionTimes.expandTimeout
            views.values[index].arbiter.interactions.alertExpansion = expansionTimes.alertExpansion
        }
    }

    mutating func share(_ sharing: ScreenSharing?, hidingContent hides: Bool) {
        let before = (sharing: self.sharing, hidesContent: hidesContent)
        self.sharing = sharing
        hidesWhileSharing = hides
        // Who said so is not the presenters' business: only turning on or off, or hiding, is news.
        guard (before.sharing == nil) != (sharing == nil) || before.hidesContent != hidesContent else { return }
        sendSnapshots()
    }

    /// Sends every presenter a fresh snapshot (not a resync): every item is drawn anew.
    private mutating func sendSnapshots() {
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            views.values[index].updateNumber += 1
            for stream in views.values[index].streams.values { stream.send(.snapshot(resync: false)) }
        }
    }

    // MARK: The lock screen

    /// Takes whether the session is locked (nil: it is not) and the user's lock-screen privacy.
    /// When the session locks or unlocks, or the policy changes while locked, every island is
    /// arranged anew (secret activities are no candidates while locked) and each presenter gets a
    /// fresh snapshot: every item is drawn anew, as its level allows. The levels are fixed as the
    /// session locks; a policy read while locked can make them only stricter.
    mutating func lock(_ lock: SessionLock?, policy: LockScreenPolicy, now: Double) {
        let wasLocked = self.lock != nil
        let policyChanged = policy != lockPolicy
        self.lock = lock
        lockPolicy = policy
        if lock == nil {
            lockLevels = [:]
        } else if !wasLocked || policyChanged {
            for activity in shown.values { pinLockLevel(of: activity) }
        }
        guard wasLocked != (lock != nil) || (lock != nil && policyChanged) else { return }
        rearrangeAndSnapshot(now: now)
    }

    /// Arranges every island anew and sends each presenter a fresh snapshot.
    private mutating func rearrangeAndSnapshot(now: Double) {
        var index = views.startIndex
        while index != views.endIndex {
            defer { views.formIndex(after: &index) }
            let candidates = candidates(for: views.keys[index])
            _ = views.values[index].arbiter.recompute(candidates: candidates, now: now)
        }
        sendSnapshots()
    }

    /// Fixes, while locked, the activity's lock-screen visibility: the stricter of its layout's,
    /// the user's for its app, and the one it had since the session locked.
    private mutating func pinLockLevel(of activity: Activity) {
        let declared = layouts.layout(for: activity).lockScreen
        let user = lockPolicy.visibility(app: activity.app, sourceApp: activity.sourceApp)
        lockLevels[activity.hashedID] = declared.stricter(user).stricter(lockLevels[activity.hashedID])
    }

    /// Whether presenters are shown nothing of the activity: it is secret and the session locked.
    func isAbsentWhileLocked(_ id: HashedID) -> Bool {
        lock != nil && (lockLevels[id] ?? .secret) == .secret
    }

    /// Whether presenters may act on the activity now: not while locked (nothing acts on a
    /// locked screen).
    var isLocked: Bool { lock != nil }

    /// How presenters are shown each item now.
    var redaction: PresenterRedaction {
        PresenterRedaction(hidesContent: hidesContent, lockLevels: lock == nil ? nil : lockLevels)
    }

    // MARK: Snapshots

    /// The whole state `uid`'s presenters may see, encoded, and the update it is as of.
    mutating func snapshot(for uid: UInt32, resync: Bool, now: Double) -> (VarlinkEncodedParameters, updateNumber: UInt64) {
        let view = views.values[ensureView(for: uid, now: now)]
        if let cached = snapshots[uid], cached.updateNumber == view.updateNumber, cached.resync == resync {
            return (cached.encoded, view.updateNumber)
        }
        var update = Wire.PresenterUpdate(
            .snapshot, sequence: view.updateNumber, resync: resync, island: view.arbiter.presentation,
            focus: Wire.focus(since: focusSince),
            sharing: Wire.presenterSharing(sharing, contentHidden: hidesContent),
            lock: Wire.presenterLock(lock), capacity: 4096)
        let redaction = self.redaction
        for activity in shown.values where activity.state != .dismissed && isVisible(owner: activity.uid, to: uid) {
            let layout = layouts.layout(for: activity)
            update.add(activity, layout: (layout.json, layout.isDefault), app: layout.app, redaction: redaction.of(activity, layout: layout))
        }
        let encoded = update.finish(removed: [], alert: nil)
        snapshots[uid] = (view.updateNumber, resync, encoded)
        return (encoded, view.updateNumber)
    }
}

extension PresenterHub.View {
    /// Sends the view's presenters a delta: the island when it changed, the focus state when
    /// it changed (`Wire.focus(since:)`), the items, the removed ids and the alert (as the
    /// caller redacted it) — the items as `redaction` lets presenters see them. Numbered even with no presenter to
    /// send it to, so that a cached snapshot is known to be out of date.
    mutating func send(
        island: Bool, focus: JSON? = nil, items: [Activity], removed: [String], alert: (id: String, alert: Alert)?,
        redaction: PresenterRedaction, layouts: inout LayoutCache
    ) {
        updateNumber += 1
        for id in removed { sentLayouts[HashedID(id)] = nil }
        guard !streams.isEmpty else { return }
        var update = Wire.PresenterUpdate(
            .delta, sequence: updateNumber, resync: false, island: island ? arbiter.presentation : nil,
            focus: focus, capacity: 1024)
        for activity in items {
            let layout = layouts.layout(for: activity)
            // `sentLayouts` is left as it was: the snapshot that ends the hiding carries every
            // layout, and later deltas compare with what presenters had before it.
            let itemRedaction = redaction.of(activity, layout: layout)
            guard itemRedaction == .none else {
                update.add(activity, layout: nil, app: layout.app, redaction: itemRedaction)
                continue
            }
            let changed = sentLayouts[activity.hashedID] != layout.revision
            if changed { sentLayouts[activity.hashedID] = layout.revision }
            update.add(activity, layout: changed ? (layout.json, layout.isDefault) : nil, app: layout.app)
        }
        let encoded = update.finish(removed: removed, alert: alert)
        for stream in streams.values { stream.send(.delta(encoded, number: updateNumber), encoded: encoded) }
    }
}

/// How presenters are shown activities now: each item's `ItemRedaction`, from whether the
/// screen is shared with content hidden and, while the session is locked, each activity's level.
struct PresenterRedaction {
    var hidesContent: Bool
    /// Nil while unlocked.
    var lockLevels: [HashedID: LockScreenVisibility]?

    func of(_ activity: Activity, layout: LayoutCache.ItemLayout) -> ItemRedaction {
        if let lockLevels {
            switch lockLevels[activity.hashedID] ?? .secret {
            case .secret: return .absent
            case .private: return .privateOnLockScreen(publicLayout: layout.publicLayout)
            case .public: break
            }
        }
        return hidesContent ? .hiddenWhileSharing : .none
    }
}
