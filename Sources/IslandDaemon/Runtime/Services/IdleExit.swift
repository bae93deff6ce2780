import IslandCore
import Logging
import ServiceLifecycle
import Synchronization

/// `[Daemon] IdleExitSec=`: a socket-activated daemon with nothing to do stops by itself, and
/// the service manager, which keeps the listening socket, starts it again on the next
/// connection. "Nothing to do" is no open connection, no live activity and no pending timer
/// (an ended activity waiting for its dismissal keeps the daemon up). Never applies to a
/// daemon that bound its own socket: nobody would start it again.
final class IdleExit: Sendable {
    private let seconds: Mutex<Double?>
    /// Each change of `after`, so that `wait` sleeps while idle exit is off instead of looking
    /// every second (docs/design.md §9: no wake-up while idle).
    private let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation
    /// Called each time `wait` finds idle exit off and starts waiting for a change (a test's
    /// cue that the wait is asleep).
    private let whileOff: @Sendable () -> Void

    init(seconds: Double?, whileOff: @escaping @Sendable () -> Void = {}) {
        self.seconds = Mutex(seconds)
        self.whileOff = whileOff
        (changes, changed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The current `IdleExitSec=`; a reload may change it.
    var after: Double? {
        get { seconds.withLock { $0 } }
        set {
            seconds.withLock { $0 = newValue }
            changed.yield()
        }
    }

    /// Returns once `isIdle` has held at every check for `after` seconds; never returns while
    /// idle exit is off (it then waits for a change of `after`), and returns early only when
    /// cancelled. Call it once at a time. Checks a few times per period
    /// (at least once a second), so a connection that opens and closes between two checks may
    /// go unnoticed: the daemon then stops a little early, and the next client starts it again.
    func wait(until isIdle: @Sendable () async -> Bool) async {
        var idleSince: ContinuousClock.Instant?
        while !Task.isCancelled {
            guard let after, after > 0 else {
                idleSince = nil
                whileOff()
                var next = changes.makeAsyncIterator()
                _ = await next.next()
                continue
            }
            let period = Duration.seconds(after)
            if await isIdle() {
                let now = ContinuousClock.now
                let since = idleSince ?? now
                idleSince = since
                if now - since >= period { return }
            } else {
                idleSince = nil
            }
            try? await Task.sleep(for: min(period / 4, .seconds(1)))
        }
    }
}

/// Idle exit as a service of the group, which runs it only when socket activated: when it
/// returns of itself, the group shuts down gracefully.
struct IdleExitService: Service {
    let idleExit: IdleExit
    let isIdle: @Sendable () async -> Bool
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown { await idleExit.wait(until: isIdle) }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        logger.info("idle for IdleExitSec=\(idleExit.after ?? 0)s: stopping")
    }
}

extension IslandEngine {
    /// No live activity and no timer (delivery, staleness, expiry, dismissal) waits.
    var isIdle: Bool {
        manager.nextDeadline == nil && !manager.list(app: nil, type: nil, states: nil).contains(where: \.isLive)
    }
}
