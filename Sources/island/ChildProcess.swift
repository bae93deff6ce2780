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

    /// The descriptors open in this process now. Taken before island opens any of its own, it
    /// is what the command should inherit: `spawn` passes on these and no others.
    static func openDescriptors() -> Set<Int32> {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        // The listing's own descriptor is in it, and is free again once it is done.
        let listing = dirfd(directory)
        var open: Set<Int32> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor != listing { open.insert(descriptor) }
        }
        return open
    }

    /// Starts `arguments` (looked up on PATH) with the default disposition of every signal the
    /// parent ignores while it waits. Descriptors island opened itself since `inherited` was
    /// taken (its event loops' epoll and eventfd, its connection to the daemon) are marked
    /// close-on-exec first: NIO does not open all of them so, and a command holding the
    /// daemon's socket open would keep island's connection alive after island is gone.
    static func spawn(_ arguments: [String], passing inherited: Set<Int32>) throws -> pid_t {
        for descriptor in openDescriptors().subtracting(inherited) where descriptor > 2 {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
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
    /// no task thread blocks. `beforeReaping` runs once the child has exited but while it is
    /// still a zombie, so its pid cannot have been reused yet: whoever signals it by pid must
    /// stop doing so there.
    static func wait(_ pid: pid_t, beforeReaping: @escaping @Sendable () -> Void) async -> Int32 {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
                beforeReaping()
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
