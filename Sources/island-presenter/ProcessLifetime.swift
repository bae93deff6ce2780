import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import OrderedJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@Sendable func now() -> Double { Date().timeIntervalSince1970 }

/// Sleeps to just past the next whole second, so timers turn over when a clock would.
func sleepToNextSecond() async throws {
    let fraction = now().truncatingRemainder(dividingBy: 1)
    try await Task.sleep(for: .milliseconds(Int((1 - fraction) * 1000) + 5))
}

/// The exit status of a bar presenter whose bar went away (EX_IOERR): a presenter that outlived
/// its bar would stay subscribed, and reconnect, forever.
let outputClosedStatus: Int32 = 74

/// Called from the stdout watcher's thread or the driver's: `_exit`, because exit handlers
/// running while the other threads still work is what sanitizers report as races; every
/// write is unbuffered, so nothing is lost.
@Sendable func exitOutputClosed() -> Never {
    removeBarRecord()
    writeAll("island-presenter: standard output closed; exiting\n", to: 2)
    Glibc._exit(outputClosedStatus)
}

/// Ends the process on SIGINT or SIGTERM with the shell's status for it (128 + N), whatever
/// disposition it inherited: a bar started as a background job of a non-interactive shell
/// has SIGINT ignored, and the default action would then never stop it.
func exitOnInterrupt(cleanup: @escaping @Sendable () -> Void = {}) -> Task<Void, Never> {
    let signals = signalStream([SIGINT, SIGTERM])
    return Task.detached {
        for await number in signals {
            cleanup()
            Glibc._exit(128 + number)
        }
    }
}
