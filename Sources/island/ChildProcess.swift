import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command that inherits the terminal (stdin, stdout, stderr), the way a shell would.
///
/// Hand-written rather than swift-subprocess (1.0.2), which the tests use: like a shell, `time`
/// or `nice`, `island run` passes on the descriptors it was given beyond the standard three
/// (make's jobserver pipes, `3>file`), and swift-subprocess closes them all in the child with
/// no way to keep any. Its `.name` lookup also refuses a command with a slash and never falls
/// back to `/bin/sh` for a script without `#!`, both of which `posix_spawnp` does.
enum ChildProcess {
    struct SpawnError: Error, CustomStringConvertible {
        var command: String
        var errno: Int32
        var description: String { "\(command): \(String(cString: strerror(errno)))" }
    }

    /// Starts `arguments` (looked up on PATH) with the default disposition of every signal the
    /// parent ignores while it waits.
    static func spawn(_ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], nil, &attributes, argv, environ)
        guard result == 0 else { throw SpawnError(command: arguments[0], errno: result) }
        return pid
    }

    /// The exit status, or 128 + the signal that killed it. Waits on a thread of its own so
    /// no task thread blocks.
    static func wait(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                continuation.resume(returning: code)
            }
            thread.start()
        }
    }
}

/// Reads standard input line by line on a thread of its own.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }
    }
}

/// Delivers a signal as an async event instead of its default action.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}

extension SignalWatcher {
    /// Ends the process on SIGINT or SIGTERM with the shell's status for it (128 + N), whatever
    /// disposition it inherited: a background job of a non-interactive shell starts with
    /// SIGINT ignored, and a command left to the default action would then never stop.
    /// `_exit`, not `exit`: the other threads are still running, and there is nothing to clean
    /// up that the kernel does not (the daemon sees the connection close).
    static func exitingOnInterrupt() -> SignalWatcher {
        SignalWatcher([SIGINT, SIGTERM]) { number in
            fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
            _exit(128 + number)
        }
    }
}
