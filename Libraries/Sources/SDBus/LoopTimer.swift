import CSystemd
import Glibc

/// A one-shot timer on a `BusLoop`, armed for a deadline and disarmed at will: the loop
/// wakes for it only while it is armed. Use it on the loop thread.
public final class LoopTimer {
    private var source: OpaquePointer?
    private let fire: () -> Void

    /// A disarmed timer that runs `fire` on the loop thread when it is due.
    public init(loop: BusLoop, fire: @escaping () -> Void) throws(BusError) {
        self.fire = fire
        var created: OpaquePointer?
        // A deadline far away, disabled until armed.
        let result = sd_event_add_time(
            loop.event, &created, CLOCK_MONOTONIC, UInt64.max - 1, 0,
            { _, _, userdata in
                Unmanaged<LoopTimer>.fromOpaque(userdata!).takeUnretainedValue().fire()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        guard result >= 0, let created else { throw BusError(errno: result, doing: "sd_event_add_time") }
        source = created
        sd_event_source_set_enabled(created, Int32(SD_EVENT_OFF))
    }

    deinit {
        sd_event_source_disable_unref(source)
    }

    /// Fires once, `delay` from now (replacing any earlier arming).
    public func arm(after delay: Duration) {
        let components = delay.components
        let usec = max(0, components.seconds) * 1_000_000 + max(0, components.attoseconds) / 1_000_000_000_000
        // Within a millisecond: sd-event may then coalesce it with other wake-ups.
        _ = sd_event_source_set_time_relative(source, UInt64(usec))
        _ = sd_event_source_set_time_accuracy(source, 1_000)
        _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT))
    }

    public func disarm() {
        _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF))
    }
}
