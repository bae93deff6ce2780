import IslandCore
import OrderedJSON
import IslandStore
import Logging
import NIOCore

/// The pipeline every change goes through, one at a time:
///
/// 1. **decide** — the pure core applies an operation (or refuses it) and returns events;
/// 2. **show** — presenters are shown what the events changed, at once;
/// 3. **commit** — the events' rows go to the store's writer thread, a turn's worth together,
///    once the turn's writes to presenters are flushed; rows nobody waits for (a `oneway`
///    call's, the timer's) may linger up to a millisecond for company first;
/// 4. **finish** — once committed, in the order of decision: watchers are told, and the
///    caller is answered.
///
/// `apply` runs steps 2–4 for events decided elsewhere (timers, a producer coming back).
/// Its bookkeeping — the order of decisions, the per-turn batching — is a value,
/// `PipelineStateMachine`; this is the shell that carries out its steps.
extension IslandEngine {
    /// What one decision hands the store: its rows, and who waits for them.
    struct TurnCommit: Sendable {
        var mutations: [StoreMutation]
        var decision: UInt64
        var events: [ActivityEvent]
        var waiter: any DecisionWaiter
        /// A failed commit makes the engine reread the state from disk before `waiter` hears
        /// of it (a decision's commit; a timer's is tried again by the timer).
        var restoresOnFailure: Bool
        /// The commit waits for the disk (`DecisionWaiter.syncsCommit`).
        var syncing: Bool
    }

    /// Decides a core operation at `now` and sends its events down the pipeline, `waiter`
    /// taking what it returned: `waiter` is told once the change is decided and queued for the
    /// disk (the caller's next pipelined call may be decided from then on, while this one
    /// waits for its commit), then on the store's writer thread once it is committed, then on
    /// the engine, in the order of decision. A refusal goes straight to `waiter.finish`.
    /// Timers that fell due are applied first, so the operation sees the state as of `now`.
    /// `alsoStore` adds rows that are not the activities' (an engine client's, such as push
    /// tokens) to the same commit.
    func decide<Waiter: DecisionTaker>(
        _ body: (inout ActivityManager, Double) throws(IslandError) -> (Waiter.Decided, [ActivityEvent]),
        alsoStore: (Waiter.Decided) -> [StoreMutation] = { _ in [] },
        waiter: Waiter
    ) {
        let now = clock()
        let due = manager.advance(to: now)
        let result: Waiter.Decided
        let events: [ActivityEvent]
        do {
            (result, events) = try body(&manager, now)
        } catch {
            // The refusal changed nothing, but the timers it ran first did: keep those.
            apply(due, prepare: {}) { _, _ in }
            waiter.finish(.failure(.refused(error)), on: self)
            return
        }
        waiter.take(result)
        // A failed commit: other calls may have changed memory while this one waited, so the
        // disk, not a copy from before, is the truth to return to.
        send(due.isEmpty ? events : due + events, alsoStore: alsoStore(result), waiter: waiter, restoresOnFailure: true, now: now)
    }

    /// `decide` for callers that pass closures: `completion` gets what `prepare` made of the
    /// result on the writer thread once committed. `syncing`: `DecisionWaiter.syncsCommit`.
    func decide<T: Sendable, Reply: Sendable>(
        decided: @escaping @Sendable () -> Void = {},
        _ body: (inout ActivityManager, Double) throws(IslandError) -> (T, [ActivityEvent]),
        alsoStore: (T) -> [StoreMutation] = { _ in [] },
        syncing: Bool = true,
        prepare: @escaping @Sendable (T) -> Reply,
        completion: @escaping Completion<Reply>
    ) {
        decide(
            body, alsoStore: alsoStore,
            waiter: ClosureWaiter(decided: decided, prepare: prepare, syncing: syncing) { _, result in completion(result) })
    }

    @discardableResult
    func decide<T: Sendable>(_ body: (inout ActivityManager, Double) throws(IslandError) -> (T, [ActivityEvent])) async throws(EngineError) -> T {
        try await awaiting { done in decide(body, prepare: { $0 }, completion: done) }
    }

    /// Shows, commits and finishes decided events. `completion` runs on the engine with what
    /// `prepare` returned (made on the writer thread once the commit succeeded), or the error
    /// if it failed. `awaited`: whether anyone waits for `completion` (`DecisionWaiter.isAwaited`).
    func apply<Prepared: Sendable>(
        _ events: [ActivityEvent], alsoStore: [StoreMutation] = [], decided: @escaping @Sendable () -> Void = {},
        prepare: @escaping @Sendable () -> Prepared, awaited: Bool = true,
        then completion: @escaping @Sendable (isolated IslandEngine, Result<Prepared, EngineError>) -> Void
    ) {
        let waiter = ClosureWaiter<Void, Prepared>(
            decided: decided, prepare: { _ in prepare() }, awaited: awaited, completion: completion)
        waiter.take(())
        send(events, alsoStore: alsoStore, waiter: waiter, restoresOnFailure: false, now: clock())
    }

    func apply(_ events: [ActivityEvent]) async throws(EngineError) {
        let _: Void = try await awaiting { done in
            apply(events, prepare: {}) { _, result in done(result) }
        }
    }

    /// Shows, commits and finishes decided events for `waiter`. `now`: the time they were
    /// decided at, read once for the decision and its showing (the clock is a `Date()`, ~115
    /// instructions a reading, Benchmarks/profile.py).
    private func send(
        _ events: [ActivityEvent], alsoStore: [StoreMutation], waiter: some DecisionWaiter, restoresOnFailure: Bool, now: Double
    ) {
        guard !events.isEmpty || !alsoStore.isEmpty else {
            waiter.decided()
            waiter.committed(.success(()))
            waiter.finish(.success(()), on: self)
            return
        }
        let (decision, step) = pipeline.decide()
        presenters.show(events, now: now)
        // After the presenters' writes: a presenter whose write waits for the end of the loop's
        // tick has queued its flush before the turn's commit, which wakes the store's writer.
        if step == .queueEndOfTurn { endTurnLater() }
        var mutations = storeMutations(for: events)
        if !alsoStore.isEmpty { mutations += alsoStore }
        let commit = TurnCommit(
            mutations: mutations, decision: decision, events: events, waiter: waiter, restoresOnFailure: restoresOnFailure,
            syncing: waiter.syncsCommit)
        guard !mutations.isEmpty else {
            waiter.decided()
            waiter.committed(.success(()))
            finish(commit, .success(()))
            return
        }
        if pipeline.queue(commit, rows: mutations.count, awaited: waiter.isAwaited, now: now) == .queueEndOfTurn {
            endTurnLater()
        }
        waiter.decided()
    }

    // MARK: Commit

    /// Has `endTurn` run once the loop has handled the reads of this turn: the changes
    /// decided in it go to the store together (`PipelineStateMachine.EndOfTurn`).
    private func endTurnLater() {
        loop.execute { self.onLoop { $0.endTurn() } }
    }

    private func endTurn() {
        // What the writer parked ends first, in the order of decision: the loop is awake anyway.
        finishParked(disarming: false)
        let end = pipeline.endTurn(now: clock())
        commit(end.commits)
        switch end.lingerTimer {
        case .keep:
            break
        case .cancel:
            lingerTimer?.cancel()
            lingerTimer = nil
        case .schedule(let nanoseconds):
            lingerTimer?.cancel()
            // A scheduled callback, not `scheduleTask`: on the engine's loop it is an entry in the
            // loop's heap, without the promise, future and closures of a task, which cost a
            // `oneway` update that comes alone ~5,000 instructions. Nil only once the loop has
            // stopped, when `commitEverythingDecided` takes what lingers.
            lingerTimer = try? loop.scheduleCallback(in: .nanoseconds(nanoseconds), handler: LingerTimerHandler(engine: self))
        }
        if end.rescheduleTimer { scheduleTimer() }
        turnEnded?()
    }

    fileprivate func lingerTimerFired() {
        lingerTimer = nil
        commit(pipeline.lingerTimerFired())
    }

    /// For stopping: commits whatever lingers and returns once every change decided so far is
    /// committed; from then on nothing lingers.
    func commitEverythingDecided() async throws(EngineError) {
        lingerTimer?.cancel()
        lingerTimer = nil
        commit(pipeline.stopLingering())
        try await commitAndWait([])
        // Committed: what the writer parked (ParkedFinishes) finishes now, not at the timer.
        finishParked(disarming: false)
    }

    /// Hands commits to the store, in the order they were decided; the writer thread groups
    /// them further with whatever arrives during its current transaction. One commit that
    /// waits for the disk makes them all wait: they are one transaction.
    ///
    /// The end of a group that waits for no disk — only broadcast channel messages nobody is
    /// told of (`DecisionWaiter.syncsCommit`) — while no app watches is parked for the loop's
    /// next turn, at most `parkedFinishDelay` later (`ParkedFinishes`), instead of waking the
    /// loop for it; a failed commit is handed over at once, as every other.
    private func commit(_ commits: [TurnCommit]) {
        guard !commits.isEmpty else { return }
        let mutations = commits.count == 1 ? commits[0].mutations : commits.flatMap(\.mutations)
        let syncing = commits.contains { $0.syncing }
        let parks = !syncing && watchers.isEmpty
        if parks, parkedFinishes.arm() { scheduleParkedFinishes() }
        store.commit(mutations, syncing: syncing) { [loop, parkedFinishes] result in
            for commit in commits { commit.waiter.committed(result) }
            if parks, case .success = result, parkedFinishes.park(commits) { return }
            loop.execute {
                self.onLoop { engine in
                    // Those parked before it ended first: they were committed first.
                    engine.finishParked(disarming: false)
                    for commit in commits { engine.finish(commit, result) }
                }
            }
        }
    }

    /// Sets the timer that takes the ends the writer parks, at the latest.
    private func scheduleParkedFinishes() {
        let handler = ParkedFinishesTimerHandler(engine: self)
        // Nil only once the loop has stopped: nothing is parked then, it is handed over.
        if (try? loop.scheduleCallback(in: parkedFinishDelay, handler: handler)) == nil {
            finishParked(disarming: true)
        }
    }

    /// Finishes the commits the writer parked, in the order they ended. `disarming`: the timer
    /// fired, so the writer hands over what ends after this.
    fileprivate func finishParked(disarming: Bool) {
        for commits in parkedFinishes.take(disarming: disarming) {
            for commit in commits { finish(commit, .success(())) }
        }
    }

    /// Commits rows that are not activity events (layouts, an engine client's), after the
    /// changes already decided, and returns once they are committed.
    func commitAndWait(_ mutations: [StoreMutation]) async throws(EngineError) {
        try await awaiting { done in commit(mutations, then: done) }
    }

    /// Commits rows that are not activity events, after the changes already decided (those
    /// lingering too): `done` gets the outcome, on the store's writer thread.
    func commit(_ mutations: [StoreMutation], then done: @escaping Completion<Void>) {
        commit(pipeline.takeCommits())
        store.commit(mutations) { [logger] result in
            done(result.mapError { Self.persistenceFailure($0, logger: logger) })
        }
    }

    private func storeMutations(for events: [ActivityEvent]) -> [StoreMutation] {
        var mutations: [StoreMutation] = []
        mutations.reserveCapacity(events.count + 1)
        var settingsChanged = false
        for index in events.indices {
            switch events[index] {
            case .changed(let activity), .delivered(let activity):
                // An update is reported as changed, then delivered: the row is written once, as
                // last reported, and no row is built only to be replaced.
                if index + 1 < events.count, Self.reports(events[index + 1], of: activity) { continue }
                mutations.append(
                    .putActivity(
                        id: activity.id, app: activity.app, state: activity.state.rawValue,
                        body: StoredDocument(text: ActivityDocument(activity: activity))))
            case .removed(let id):
                mutations.append(.deleteActivity(id: id))
                // Rows of the engine's clients that die with the activity (its push token) go in the same commit.
                if let observer { mutations += observer.removing(activity: id) }
            case .settingsChanged, .budgetsChanged:
                settingsChanged = true
            case .pushesSpent(let owner):
                // A row per owner: the manager's whole document is not rewritten for each push.
                mutations.append(
                    .putSetting(key: PushSpending.settingKey(for: owner), value: .object(manager.budgets.pushes.row(for: owner))))
            case .alerted, .focusChanged:
                break
            }
        }
        if settingsChanged {
            mutations.append(.putSetting(key: "manager", value: .object(manager.settingsAndBudgetsJSON)))
        }
        return mutations
    }

    /// Whether `event` reports a change of `activity` (its row to write): an update's
    /// `.delivered` carries the very activity its `.changed` does, one reference to compare
    /// before the ids.
    private static func reports(_ event: ActivityEvent, of activity: Activity) -> Bool {
        switch event {
        case .changed(let other), .delivered(let other): other.isSame(as: activity) || other.id == activity.id
        case .removed, .alerted, .settingsChanged, .budgetsChanged, .pushesSpent, .focusChanged: false
        }
    }

    /// Logs a failed commit and names it for the caller.
    private static func persistenceFailure(_ error: StoreError, logger: Logger) -> EngineError {
        logger.error("could not store a change", metadata: ["error": "\(error)"])
        return .persistenceFailure(reason: error.description)
    }

    /// After a failed commit: the state is reread from disk, and presenters, who were shown
    /// decisions that are gone, each get the committed state whole.
    private func restoreFromDisk() {
        do {
            let stored = try store.store.load()
            manager = StateRestorer.manager(from: stored, limits: manager.limits, now: clock(), logger: logger)
            observer?.restored(from: stored)
            presenters.resync(to: manager.list(), focusSince: manager.focusSince, now: clock())
            scheduleTimer()
        } catch {
            logger.critical("cannot reread the state database after a failed write", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Finish

    /// A decision's commit is over: its events finish once every earlier decision's have,
    /// and its caller is answered.
    private func finish(_ commit: TurnCommit, _ result: Result<Void, StoreError>) {
        switch result {
        case .success:
            pipeline.committed(commit.decision, events: commit.events)
            tellWatchersInOrder()
            commit.waiter.finish(.success(()), on: self)
            observer?.committed()
        case .failure(let error):
            pipeline.committed(commit.decision, events: [])
            tellWatchersInOrder()
            let failure = Self.persistenceFailure(error, logger: logger)
            if commit.restoresOnFailure { restoreFromDisk() }
            commit.waiter.finish(.failure(failure), on: self)
        }
    }

    /// Tells watchers (and the journal) what the committed decisions changed, in the order
    /// they were made, as far as they are committed.
    private func tellWatchersInOrder() {
        while let events = pipeline.nextToFinish() {
            if !events.isEmpty { watchers.tell(events) { logLifecycle($0) } }
        }
    }

    /// One journal entry per lifecycle step, with ACTIVITY_ID= and APP_ID= for journalctl.
    private func logLifecycle(_ activity: Activity) {
        var metadata: Logger.Metadata = [
            "activity_id": "\(activity.id)", "app_id": "\(activity.app)", "activity_type": "\(activity.type)",
        ]
        if let reason = activity.endReason { metadata["end_reason"] = "\(reason.rawValue)" }
        if let schedule = activity.schedule {
            metadata["scheduled_start"] = "\(schedule.date)"
            // Said once, as it starts: the date passed while the daemon was down.
            if let late = schedule.late, activity.state == .active || activity.state == .stale, activity.updatedAt == schedule.startsAt {
                metadata["late_start"] = "\(late.rawValue)"
                logger.notice("scheduled activity started late: the daemon was not running at its date", metadata: metadata)
                return
            }
        }
        logger.info("activity \(activity.state.rawValue)", metadata: metadata)
    }
}

/// An activity as the store keeps it: its document written on the writer thread, from the
/// activity itself (one reference) rather than from a closure allocated to capture it.
struct ActivityDocument: StoredText {
    let activity: Activity
    var jsonText: [UInt8] { activity.jsonText }
}

/// Takes what the store's writer parked (`IslandEngine.parkedFinishes`) when its timer fires,
/// on the engine's loop.
private final class ParkedFinishesTimerHandler: NIOScheduledCallbackHandler, Sendable {
    weak let engine: IslandEngine?

    init(engine: IslandEngine) {
        self.engine = engine
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        engine?.onLoop { $0.finishParked(disarming: true) }
    }
}

/// Ends a linger when `IslandEngine.lingerTimer` fires, on the engine's loop.
private final class LingerTimerHandler: NIOScheduledCallbackHandler, Sendable {
    weak let engine: IslandEngine?

    init(engine: IslandEngine) {
        self.engine = engine
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        engine?.onLoop { $0.lingerTimerFired() }
    }
}
