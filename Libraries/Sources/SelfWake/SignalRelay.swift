import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivers signals to handlers on a thread of the relay's own, instead of their default action,
/// for as long as the watch is kept.
///
/// The signal is caught from the moment `init` returns. A Dispatch signal source is not: it is
/// registered later, on libdispatch's own thread, and a caller has to set `SIG_IGN` first so the
/// default action does not kill the process meanwhile — a signal that arrives in between is
/// discarded by the kernel (an ignored signal is never made pending). A `kill` sent as soon as
/// `island run`'s command had started was lost that way on a busy machine.
///
/// Here `init` installs, with `sigaction`, a handler that writes the signal's number to a pipe
/// (all it does: `write` is async-signal-safe) and a thread reads the pipe and calls the
/// handlers. Once a signal has a watch, its disposition stays the relay's: with no watch left,
/// a signal is read and dropped, as `SIG_IGN` would drop it. A program started with
/// `posix_spawn` or `exec` gets the default action back (a caught signal is reset by `exec`).
package final class SignalWatch: Sendable {
    private let id: UInt64
    private let signals: [Int32]

    /// Watches `signals`; `handler` runs on the relay's thread, once per signal received (two
    /// of one signal that arrive together may be one, as the kernel merges them).
    package init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        id = SignalRelay.shared.add(signals, handler)
    }

    deinit { SignalRelay.shared.remove(id, signals) }
}

/// The process's one relay: the pipe, its reader thread and the handlers by signal.
private final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private struct Handlers {
        var next: UInt64 = 0
        var bySignal: [Int32: [UInt64: @Sendable (Int32) -> Void]] = [:]
        var installed: Set<Int32> = []
    }

    private let handlers = Mutex(Handlers())
    private let readEnd: Int32

    private init() {
        var ends: [Int32] = [-1, -1]
        // Without a pipe no signal could be relayed, and every watcher would be deaf: a process
        // out of descriptors before it watches its first signal cannot go on usefully.
        precondition(pipe(&ends) == 0, "pipe for the signal relay: \(String(cString: strerror(errno)))")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The handler must never block; a full pipe loses only a signal that many are pending.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        readEnd = ends[0]
        relayWriteEnd.store(ends[1], ordering: .releasing)
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { _ in
                SignalRelay.shared.run()
                return nil
            }, nil)
        precondition(created == 0, "the signal relay's thread: \(String(cString: strerror(created)))")
        pthread_detach(thread)
    }

    func add(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) -> UInt64 {
        handlers.withLock { state in
            let id = state.next
            state.next += 1
            for number in signals {
                state.bySignal[number, default: [:]][id] = handler
                if state.installed.insert(number).inserted {
                    var action = sigaction()
                    action.__sigaction_handler.sa_handler = relaySignal
                    action.sa_flags = SA_RESTART
                    sigemptyset(&action.sa_mask)
                    sigaction(number, &action, nil)
                }
            }
            return id
        }
    }

    func remove(_ id: UInt64, _ signals: [Int32]) {
        handlers.withLock { state in
            for number in signals { state.bySignal[number]?[id] = nil }
        }
    }

    private func run() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &bytes, bytes.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            for byte in bytes[0..<count] {
                let number = Int32(byte)
                let receivers = handlers.withLock { state in state.bySignal[number].map { Array($0.values) } ?? [] }
                for receiver in receivers { receiver(number) }
            }
        }
    }
}

/// The pipe's write end, for the handler, which can reach nothing but globals.
private let relayWriteEnd = Atomic<Int32>(-1)

/// The signal handler: writes the number and nothing else, keeping `errno` as it found it.
private func relaySignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(relayWriteEnd.load(ordering: .acquiring), &byte, 1)
    errno = saved
}
