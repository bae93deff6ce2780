import CLinuxScheduling
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// How the event loop asks for the CPU. A presenter's delta is written in the same turn that
/// reads the producer's call, so the loop's wake-ups are the latency the benchmark measures; on
/// a shared machine the loop woke and then waited 4–8 ms for a CPU that a compiler held for
/// its whole slice (`perf sched timehist`). A short slice lets the loop preempt such work when
/// it wakes (EEVDF, Linux 6.12 and later), without a larger share of the CPU and without
/// privileges.
enum EventLoopScheduling {
    /// The shortest slice the kernel takes: a turn of the loop for one update is a few tens of
    /// microseconds.
    static let timeSlice: UInt64 = 100_000

    /// Requests the short slice for the calling thread, which must be the loop's.
    static func requestShortTimeSlice(logger: Logger) {
        if island_request_time_slice(timeSlice) != 0 {
            logger.debug("the scheduler took no time slice for the event loop", metadata: ["errno": "\(errno)"])
        }
    }
}
