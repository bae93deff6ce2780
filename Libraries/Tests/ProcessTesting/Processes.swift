package import Foundation
import Subprocess
import Synchronization
import SystemPackage
import Testing

/// Where the package's built products are: next to the running test bundle.
package let productsDirectory: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

// Processes are started with swift-subprocess: it closes every descriptor but the standard
// three in the child (SwiftNIO accepts connections without close-on-exec, so a child would
// otherwise hold the server side of other tests' connections open), and it waits on a pidfd
// instead of reaping as Foundation's Process does, which hangs when several tests start
// processes at once. Output goes to files, so a chatty child never blocks on a full pipe.

/// Runs a command to completion; its exit status (128 + N when killed by signal N). A process
/// that outlives `timeout` is killed, and the test records an issue saying what the process
/// was doing then (`processState`).
package func runToCompletion(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdout: String, stderr: String, timeout: Duration
) async throws -> Int32 {
    let spawned = SpawnedProcess()
    return try await withThrowingTaskGroup(of: Int32?.self) { group in
        // Cancelled, it is killed at once: no teardown step comes before the final SIGKILL.
        group.addTask {
            try await launch(
                executable, arguments, environment: environment, stdout: stdout, stderr: stderr, teardown: [],
                onSpawn: { pid in spawned.pid.withLock { $0 = pid } })
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        if let first = try await group.next(), let status = first {
            group.cancelAll()
            return status
        }
        Issue.record("\(executable) outlived \(timeout) and was killed; \(processState(spawned.pid.withLock { $0 }))")
        group.cancelAll()
        while let result = try await group.next() {
            if let status = result { return status }
        }
        preconditionFailure("the process's task ended without a status")
    }
}

/// A process started in the background and stopped by `stop()`, which waits until it has
/// exited. Whoever starts one must stop it; `withBackgroundProcess` always does.
package final class BackgroundProcess: Sendable {
    private let exit: Task<Int32, any Error>

    /// Returns once the process runs; throws when it cannot be started.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]?,
        stdout: String, stderr: String
    ) async throws {
        let (spawned, announce) = AsyncStream.makeStream(of: Void.self)
        exit = Task {
            defer { announce.finish() }
            return try await launch(
                executable, arguments, environment: environment, stdout: stdout, stderr: stderr,
                teardown: [.gracefulShutDown(allowedDurationToNextStep: .seconds(30))],
                onSpawn: { _ in announce.yield() })
        }
        for await _ in spawned { return }
        // Never spawned: the task's error says why.
        _ = try await exit.value
    }

    /// SIGTERM, then SIGKILL after 30 seconds (generous: a loaded machine may be slow to stop
    /// gracefully, and the wait ends as soon as it has); waits for the exit and returns its status
    /// (128 + N when killed by signal N). Stopping again returns the same status.
    @discardableResult
    package func stop() async -> Int32? {
        exit.cancel()
        return try? await exit.value
    }
}

/// Runs `body` with a process started in the background, and stops it afterwards (awaited),
/// whether `body` returned or threw.
package func withBackgroundProcess<T>(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdout: String, stderr: String,
    _ body: (BackgroundProcess) async throws -> T
) async throws -> T {
    let process = try await BackgroundProcess(executable, arguments, environment: environment, stdout: stdout, stderr: stderr)
    return try await using(process, release: { await $0.stop() }, body)
}

/// Runs `body` with `resource`, then waits for `release` of it, whether `body` returned or
/// threw: the `defer` an `async` cleanup cannot have.
package func using<Resource, T>(
    _ resource: Resource, release: (Resource) async -> Void, _ body: (Resource) async throws -> T
) async throws -> T {
    do {
        let result = try await body(resource)
        await release(resource)
        return result
    } catch {
        await release(resource)
        throw error
    }
}

/// Starts the process with standard input from /dev/null and its output appended to files,
/// and waits for its exit; when the calling task is cancelled, `teardown` and then SIGKILL
/// end it.
private func launch(
    _ executable: String, _ arguments: [String], environment: [String: String]?, stdout: String, stderr: String,
    teardown: [TeardownStep], onSpawn: @Sendable (pid_t) -> Void = { _ in }
) async throws -> Int32 {
    func append(_ path: String) throws -> FileDescriptor {
        try FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .append],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
    }
    let output = try append(stdout)
    defer { try? output.close() }
    let error = try append(stderr)
    defer { try? error.close() }
    var options = PlatformOptions()
    options.teardownSequence = teardown
    let variables = environment.map { environment in
        Environment.custom(
            Dictionary(
                uniqueKeysWithValues: environment.compactMap { key, value in
                    Environment.Key(rawValue: key).map { ($0, value) }
                }))
    }
    let result = try await Subprocess.run(
        .path(FilePath(executable)), arguments: Arguments(arguments), environment: variables ?? .inherit,
        platformOptions: options, input: .none,
        output: .fileDescriptor(output, closeAfterSpawningProcess: false),
        error: .fileDescriptor(error, closeAfterSpawningProcess: false),
        body: { execution in onSpawn(execution.processIdentifier.value) })
    switch result.terminationStatus {
    case .exited(let code): return code
    case .signaled(let signal): return 128 + signal
    }
}

/// The process a task started, once it has.
private final class SpawnedProcess: Sendable {
    let pid = Mutex<pid_t?>(nil)
}

/// What the kernel says process `pid` is doing (its state in /proc/PID/stat, and where it
/// sleeps): whether one that outlived its time was still running, waiting on something, or had
/// exited without its exit being seen (state Z, a zombie nobody reaped).
func processState(_ pid: pid_t?) -> String {
    guard let pid else { return "it never started" }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return "process \(pid) was gone" }
    let state = stat[stat.index(after: close)...].split(separator: " ").first.map(String.init) ?? "?"
    let channel = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
    return "process \(pid) was in state \(state)\(state == "Z" ? " (it had exited; its exit was not seen)" : ", waiting in \(channel)")"
}
