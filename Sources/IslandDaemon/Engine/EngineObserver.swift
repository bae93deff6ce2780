import IslandStore

/// A client of the engine that keeps rows of its own beside the activities, and so must hear
/// of the engine's changes as they are decided and committed (push: Push/PushGateway.swift).
/// The engine calls it on its loop, as it tells its watchers (`WatcherHub`); it knows nothing
/// else of it.
protocol EngineObserver: AnyObject, Sendable {
    /// A decision removes activity `id`: the rows that go with it, deleted in the same commit.
    func removing(activity id: String) -> [StoreMutation]
    /// A decision was committed, and its caller answered.
    func committed()
    /// A commit failed and the engine reread its state from disk: `stored` is the truth.
    func restored(from stored: StoredState)
    /// An island may have stopped being busy (an expansion timed out, or the user let go).
    func islandMayRest()
}
