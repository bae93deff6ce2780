import Foundation
import OrderedCollections
import OrderedJSON
import SelfWake
import SpawnDescriptors
import Synchronization
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
    static func openDescriptors() -> Set<Int32> { SpawnDescriptors.openNow() }

    /// Starts `arguments` (looked up on PATH) with the default disposition of every signal the
    /// parent ignores while it waits. Descriptors island opened itself since `inherited` was
    /// taken (its event loops' epoll and eventfd, its connection to the daemon) are closed in
    /// the child: NIO does not open all of them close-on-exec, and a command holding the
    /// daemon's socket open would keep island's connection alive after island is gone.
    /// They are closed by the spawn's own file actions, in the child, rather than marked
    /// close-on-exec here: another of island's threads may open one between a marking pass
    /// and the spawn.
    /// With `standardOutput`, the command writes there instead of island's standard output
    /// (`island progress` reads it); island's copy of that descriptor is the caller's to close.
    static func spawn(_ arguments: [String], passing inherited: Set<Int32>, standardOutput: Int32? = nil) throws -> pid_t {
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardOutput { posix_spawn_file_actions_adddup2(&actions, standardOutput, 1) }
        SpawnDescriptors.closeAll(but: inherited, in: &actions)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else { throw SpawnError(command: arguments[0], errno: result) }
        return pid
    }

    /// How the child ended. Waits on a thread of its own so no task thread blocks.
    /// `beforeReaping` runs once the child has exited but while it is still a zombie, so its
    /// pid cannot have been reused yet: whoever signals it by pid must stop doing so there.
    static func wait(_ pid: pid_t, beforeReaping: @escaping @Sendable () -> Void) async -> Termination {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
                beforeReaping()
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: Termination(waitStatus: status))
            }
            thread.start()
        }
    }
}

extension ChildProcess {
    /// Runs `command` as a shell runs a foreground job, and says how it ended (nil when it
    /// could not start: the reason is on standard error). Ctrl-C and Ctrl-\ reach the command
    /// through the process group, and island stays to report how it ended; a SIGTERM or SIGHUP
    /// aimed at island alone (a service manager, a closed terminal, `kill`) is passed on to the
    /// command, so it is not left running orphaned.
    static func runInForeground(
        _ command: [String], passing inherited: Set<Int32>, standardOutput: Int32? = nil,
        started: () -> Void = {}
    ) async -> Termination? {
        let child = Mutex<pid_t>(0)
        let ignored = SignalWatch([SIGINT, SIGQUIT]) { _ in }
        // Signalled under the lock, which the wait takes before it reaps the command: a pid
        // is never signalled once it could belong to another process.
        let forwarder = SignalWatch([SIGTERM, SIGHUP]) { number in
            child.withLock { pid in
                if pid > 0 { kill(pid, number) }
            }
        }
        defer { _ = (ignored, forwarder) }
        let pid: pid_t
        do {
            pid = try spawn(command, passing: inherited, standardOutput: standardOutput)
        } catch {
            Output.error("island: \(error)\n")
            return nil
        }
        child.withLock { $0 = pid }
        started()
        return await wait(pid, beforeReaping: { child.withLock { $0 = 0 } })
    }
}

/// How a command ended, as a shell tells it.
enum Termination: Hashable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case killed(signal: Int32)

    /// From a `waitpid` status.
    init(waitStatus status: Int32) {
        self = (status & 0x7F) == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: status & 0x7F)
    }

    var succeeded: Bool { self == .exited(0) }

    /// What `$?` says of it in a shell: the exit status, or 128 + the signal's number.
    var shellStatus: Int32 {
        switch self {
        case .exited(let status): status
        case .killed(let signal): 128 + signal
        }
    }

    /// For the user: "exit status 3", "killed by SIGTERM".
    var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .killed(let signal): "killed by \(Self.name(ofSignal: signal))"
        }
    }

    /// What an ended activity's state says of it: `status` succeeded or failed, `exitStatus`
    /// as a shell has it, and for a failure the words an activity's card shows (`outcome`,
    /// which the default layout puts right after the status: "Exit status 3", "Killed by
    /// SIGTERM").
    var stateMembers: JSONObject {
        var members: JSONObject = ["status": .string(succeeded ? "succeeded" : "failed"), "exitStatus": .int(Int(shellStatus))]
        if !succeeded { members["outcome"] = .string(description.prefix(1).uppercased() + description.dropFirst()) }
        return members
    }

    /// `SIGTERM` for 15; `signal 40` for one with no name here (real-time signals).
    static func name(ofSignal number: Int32) -> String {
        let names: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
            SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
            SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
            SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF", SIGSYS: "SIGSYS",
        ]
        return names[number] ?? "signal \(number)"
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

extension SignalWatch {
    /// Ends the process on SIGINT or SIGTERM with the shell's status for it (128 + N), whatever
    /// disposition it inherited: a background job of a non-interactive shell starts with
    /// SIGINT ignored, and a command left to the default action would then never stop.
    /// `_exit`, not `exit`: the other threads are still running, and there is nothing to clean
    /// up that the kernel does not (the daemon sees the connection close).
    static func exitingOnInterrupt() -> SignalWatch {
        SignalWatch([SIGINT, SIGTERM]) { number in
            fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
            _exit(128 + number)
        }
    }
}
