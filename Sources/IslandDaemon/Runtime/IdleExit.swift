import Foundation

/// `[Daemon] IdleExitSec=`: a socket-activated daemon with nothing to do stops by itself, and
/// the service manager, which keeps the listening socket, starts it again on the next
/// connection. "Nothing to do" is no open connection, no live activity and no pending timer
/// (an ended activity waiting for its dismissal keeps the daemon up). Never applies to a
/// daemon that bound its own socket: nobody would start it again.
final class IdleExit: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Double?

    init(seconds: Double?) { self.seconds = seconds }

    /// The current `IdleExitSec=`; a reload may change it.
    var after: Double? {
        get { lock.withLock { seconds } }
        set { lock.withLock { seconds = newValue } }
    }

    /// Returns once `isIdle` has held at every check for `after` seconds; never returns while
    /// idle exit is off, and returns early only when cancelled. Checks a few times per period
    /// (at least once a second), so a connection that opens and closes between two checks may
    /// go unnoticed: the daemon then stops a little early, and the next client starts it again.
    func wait(until isIdle: @Sendable () async -> Bool) async {
        var idleSince: ContinuousClock.Instant?
        while !Task.isCancelled {
            guard let after, after > 0 else {
                idleSince = nil
                try? await Task.sleep(for: .seconds(1))
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

extension IslandEngine {
    /// No live activity and no timer (delivery, staleness, expiry, dismissal) waits.
    var isIdle: Bool {
        manager.nextDeadline == nil && !manager.list(app: nil, type: nil, states: nil).contains(where: \.isLive)
    }
}
