extension Actor {
    /// `assumeIsolated(body)` without its check at run time: what it does once the check has
    /// passed. The check asks the concurrency runtime whether the current executor is this
    /// actor's (~400 instructions), which the update path would pay several times. For the
    /// actors whose executor is the engine's event loop (`IslandEngine`, `PushGateway`), called
    /// on that loop's thread, which each caller asserts in debug builds first.
    @inline(__always)
    nonisolated func withUncheckedIsolation<T>(_ body: (isolated Self) -> T) -> T {
        typealias Unchecked = (Self) -> T
        return withoutActuallyEscaping(body) { body in unsafeBitCast(body, to: Unchecked.self)(self) }
    }
}
