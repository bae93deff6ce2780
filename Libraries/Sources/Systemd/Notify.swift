#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// Service state notifications to the manager, as described in `sd_notify(3)`.
///
/// Every method is a no-op returning `false` when the process is not supervised (no
/// `NOTIFY_SOCKET`), so callers can notify unconditionally.
public enum ServiceNotifier {
    /// Whether a service manager asked for notifications, i.e. `NOTIFY_SOCKET` is set.
    public static var isSupervised: Bool {
        guard let socket = getenv("NOTIFY_SOCKET") else { return false }
        return socket.pointee != 0
    }

    /// How often the manager expects ``watchdog()``, from `WATCHDOG_USEC` (and `WATCHDOG_PID`).
    ///
    /// `nil` when no watchdog is configured for this process. Ping at about half this interval.
    public static var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    /// Tells the manager that start-up finished (`READY=1`), optionally with a status line.
    @discardableResult
    public static func ready(status: String? = nil) -> Bool {
        var assignments = [("READY", "1")]
        if let status { assignments.append(("STATUS", status)) }
        return send(assignments)
    }

    /// Sets the free-form status line shown by `systemctl status` (`STATUS=`).
    @discardableResult
    public static func status(_ text: String) -> Bool {
        send([("STATUS", text)])
    }

    /// Tells the manager that the service is shutting down (`STOPPING=1`).
    @discardableResult
    public static func stopping() -> Bool {
        send([("STOPPING", "1")])
    }

    /// Tells the manager that the service is reloading its configuration.
    ///
    /// Sends `RELOADING=1` with `MONOTONIC_USEC=`, which newer managers require to tell this
    /// reload apart from earlier ones. Send ``ready(status:)`` once the reload is complete.
    @discardableResult
    public static func reloading() -> Bool {
        send([("RELOADING", "1"), ("MONOTONIC_USEC", String(monotonicMicroseconds()))])
    }

    /// Keeps the watchdog from firing (`WATCHDOG=1`). See ``watchdogInterval``.
    @discardableResult
    public static func watchdog() -> Bool {
        send([("WATCHDOG", "1")])
    }

    /// Sends arbitrary assignments in the given order, e.g. `send(["READY": "1", "STATUS": "up"])`.
    ///
    /// - Returns: Whether the notification socket received the message; `false` when not
    ///   supervised, on a send error, or when a key is not a plain `[A-Z0-9_]` variable name.
    @discardableResult
    public static func send(_ assignments: KeyValuePairs<String, String>) -> Bool {
        send(assignments.map { ($0.key, $0.value) })
    }

    /// Sends arbitrary assignments in the given order; for building a message programmatically.
    ///
    /// Newlines in values are replaced by spaces: the protocol is one assignment per line, so a
    /// stray newline would otherwise smuggle in a second assignment.
    @discardableResult
    public static func send(_ assignments: [(String, String)]) -> Bool {
        guard let message = message(assignments) else { return false }
        return sd_notify(0, message) > 0
    }

    /// The datagram for `assignments`, or `nil` when there is nothing valid to send.
    static func message(_ assignments: [(String, String)]) -> String? {
        guard !assignments.isEmpty else { return nil }
        var lines: [String] = []
        lines.reserveCapacity(assignments.count)
        for (key, value) in assignments {
            guard isValidKey(key) else { return nil }
            lines.append(key + "=" + singleLine(value))
        }
        return lines.joined(separator: "\n")
    }

    static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty
            && key.utf8.allSatisfy { byte in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_")
            }
    }

    /// Replaces line breaks (and NUL, which would truncate the C string) with spaces.
    static func singleLine(_ value: String) -> String {
        // Scalars, not Characters: "\r\n" is one Character and would not compare equal to "\n".
        var scalars = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\n", "\r", "\0": scalars.append(" ")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
