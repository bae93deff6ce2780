import IslandStore

/// Who waits for a change on its way through the pipeline (IslandEngine+Pipeline.swift), told
/// at each step: decided, committed, finished. One object carries a call the whole way — what
/// it decided, the reply made of it, the answer — where a closure made at each step, each
/// capturing the one before, cost an allocation and a few more references to count per step
/// on every update.
///
/// The steps run on two threads, one after the other, never at once: `take` and `decided` on
/// the engine, `committed` on the store's writer thread once the commit is over (the store
/// takes the commit under its lock, so it sees what `take` stored), and `finish` on the engine
/// again (the writer hands it over through the loop's queue, so it sees what `committed`
/// stored). That is the rule that lets a waiter keep what it holds in plain stored properties.
protocol DecisionWaiter: AnyObject, Sendable {
    /// Somebody is told once the change is committed (a call's reply, a caller awaiting it):
    /// its commit goes at the end of the turn. Otherwise — a `oneway` call, the timer's
    /// changes — it may linger for company (`PipelineStateMachine.Linger`).
    var isAwaited: Bool { get }
    /// The change's commit waits for the disk (`synchronous = FULL`), as every change's does
    /// but one nobody is told of that the broker can hand over again: a broadcast channel's
    /// message asking no answers (docs/design.md §8), whose commit survives `kill -9` without
    /// the `fdatasync`.
    var syncsCommit: Bool { get }
    /// The change is made in memory and queued for the disk: from now on the caller's next
    /// pipelined call may be decided, while this one waits for its commit.
    func decided()
    /// The change's commit is over, on the store's writer thread: what takes time to make (a
    /// reply that encodes the whole activity) is made here, off the event loop.
    func committed(_ outcome: Result<Void, StoreError>)
    /// The change finished, on the engine, in the order of decision: the caller is answered.
    /// A refusal comes straight here, with no step before it.
    func finish(_ outcome: Result<Void, EngineError>, on engine: isolated IslandEngine)
}

extension DecisionWaiter {
    var syncsCommit: Bool { true }
}

/// A waiter that keeps what the decision returned, for its reply.
protocol DecisionTaker<Decided>: DecisionWaiter {
    associatedtype Decided: Sendable
    /// What the decision returned, before it is queued for the disk.
    func take(_ decided: Decided)
}

/// The waiter of callers that pass closures (timers, push, tests): `prepare` makes the reply
/// on the writer thread once the change is committed, `completion` gets it on the engine.
final class ClosureWaiter<Decided: Sendable, Reply: Sendable>: DecisionTaker, @unchecked Sendable {
    private let onDecided: @Sendable () -> Void
    private let prepare: @Sendable (Decided) -> Reply
    private let completion: @Sendable (isolated IslandEngine, Result<Reply, EngineError>) -> Void
    let isAwaited: Bool
    let syncsCommit: Bool
    // Written and read in the order of the steps (`DecisionWaiter`): never at once.
    private var result: Decided?
    private var prepared: Reply?

    /// `awaited`: see `DecisionWaiter.isAwaited`; a caller that passes closures is taken to
    /// wait unless it says otherwise. `syncing`: see `DecisionWaiter.syncsCommit`.
    init(
        decided: @escaping @Sendable () -> Void, prepare: @escaping @Sendable (Decided) -> Reply,
        awaited: Bool = true, syncing: Bool = true,
        completion: @escaping @Sendable (isolated IslandEngine, Result<Reply, EngineError>) -> Void
    ) {
        self.isAwaited = awaited
        self.syncsCommit = syncing
        self.onDecided = decided
        self.prepare = prepare
        self.completion = completion
    }

    func take(_ decided: Decided) { result = decided }

    func decided() { onDecided() }

    func committed(_ outcome: Result<Void, StoreError>) {
        if case .success = outcome, let result { prepared = prepare(result) }
        result = nil
    }

    func finish(_ outcome: Result<Void, EngineError>, on engine: isolated IslandEngine) {
        switch outcome {
        case .success:
            // `committed` ran before, with success, and prepared it.
            guard let prepared else { preconditionFailure("a change finished before its reply was prepared") }
            completion(engine, .success(prepared))
        case .failure(let error):
            completion(engine, .failure(error))
        }
    }
}
