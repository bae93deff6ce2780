import FreeDesktop
import IslandProtocol
package import VarlinkCore

/// The decisions of `IslandConnection`'s supervisor, as a value beside it: after each try to
/// reach the daemon, whether to try again and after what wait, or to give up. No I/O and no
/// clock: the connection makes the tries, says how each ended, and sleeps the waits it is told.
///
/// - A local daemon restarts in well under a second: retry soon, and never wait long.
/// - A daemon that answers with an error of its own refuses this app: no retry will change
///   that, so the supervisor gives up, and the waiting calls get the refusal.
/// - A daemon never reached at all is said at once, instead of making the callers wait; one
///   that was reached before is waited for (a restart, an upgrade).
package struct ReconnectionSupervisor: Sendable {
    /// How a try ended.
    package enum Outcome: Sendable, Equatable {
        /// Connected; the watch stream has since ended (the daemon went away).
        case lost
        /// The daemon answered with an error of its own.
        case refused
        /// The daemon was not reached, or the connection broke before the app was bound.
        case unreachable

        /// How a try that threw `error` ended.
        package init(_ error: any Error) {
            if let error = error as? VarlinkError, ReconnectionSupervisor.isRefusal(error) {
                self = .refused
            } else {
                self = .unreachable
            }
        }
    }

    /// What the supervisor does next.
    package enum Next: Sendable, Equatable {
        case retry(after: Duration)
        case giveUp
    }

    static let backoff = Backoff(first: .milliseconds(50), maximum: .seconds(2))

    /// Whether the daemon was ever reached: a try after that is a reconnection.
    package private(set) var everConnected = false
    /// Failed tries since the last connection.
    private var attempt = 0

    package init() {}

    /// A try connected and bound the app.
    package mutating func connected() {
        everConnected = true
        attempt = 0
    }

    /// What to do after a try that ended with `outcome`.
    package mutating func next(after outcome: Outcome) -> Next {
        switch outcome {
        case .refused:
            return .giveUp
        case .unreachable where !everConnected:
            return .giveUp
        case .lost, .unreachable:
            defer { attempt += 1 }
            return .retry(after: Self.backoff.delay(attempt: attempt))
        }
    }

    /// An error of the daemon's own (`org.island.*`), not the connection's
    /// (`org.island.Connection.*`, said by the transport).
    package static func isRefusal(_ error: VarlinkError) -> Bool {
        error.name.hasPrefix(IslandErrorNames.interface + ".") && !error.name.hasPrefix(ConnectionNames.interface + ".")
    }
}
