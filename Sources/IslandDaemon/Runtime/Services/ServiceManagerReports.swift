import ServiceLifecycle
import Systemd

/// WATCHDOG=1 at half the interval the service manager asked for (`WatchdogSec=`). The group
/// runs it only when a watchdog is configured, and stops it last, after the socket drained.
struct WatchdogPings: Service {
    let interval: Duration
    /// How it waits between pings (a test's own also says when the service falls asleep).
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    func run() async {
        try? await cancelWhenGracefulShutdown {
            while true {
                ServiceNotifier.watchdog()
                try await sleep(interval / 2)
            }
        }
    }
}

/// STATUS= every few seconds, for `systemctl status`. The group runs it only under a service
/// manager: without one, nothing wakes for it (docs/design.md §9, no wake-up while idle).
struct StatusReports: Service {
    let period: Duration
    let status: @Sendable () async -> String
    /// How it waits between reports (a test's own also says when the service falls asleep).
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    func run() async {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await sleep(period)
                ServiceNotifier.status(await status())
            }
        }
    }
}
