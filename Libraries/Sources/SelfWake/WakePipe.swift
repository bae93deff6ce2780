#if canImport(Glibc)
import Glibc
#endif

/// The self-pipe: a thread that waits in `poll` (or an event loop) on `readEnd` is woken by
/// any other thread's `wake()`. Both ends are close-on-exec (a child spawned meanwhile must
/// not hold them) and non-blocking: a pipe already full wakes the reader just as well, so the
/// byte that does not fit is not needed, and a drain stops when nothing is left. Closed with
/// the value.
package final class WakePipe: Sendable {
    /// The end to poll for `POLLIN`, or to register with an event loop.
    package let readEnd: Int32
    private let writeEnd: Int32

    /// Fails with the `errno` of `pipe` (out of descriptors).
    package init() throws(WakePipeError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw WakePipeError(errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the thread waiting on `readEnd`, or the next one to wait.
    package func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads every wake-up written so far: the next wait waits for a new one.
    package func drain() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while read(readEnd, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }
}

/// A pipe could not be made.
package struct WakePipeError: Error, Sendable, CustomStringConvertible {
    package let errno: Int32

    package var description: String { "pipe: \(String(cString: strerror(errno)))" }
}
