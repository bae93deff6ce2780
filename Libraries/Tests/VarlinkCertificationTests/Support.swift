import Foundation
import ProcessTesting
import Testing

/// Finds and runs the package's executables and the reference Python implementation.
enum Harness {
    static func product(_ name: String) -> String { productsDirectory.appendingPathComponent(name).path }

    /// The directory of the installed reference `varlink` Python package's tests.
    static func pythonVarlinkTests() async throws -> String {
        let result = try await run("/usr/bin/env", ["python3", "-c", "import os, varlink; print(os.path.dirname(varlink.__file__))"])
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/tests"
    }

    static func temporaryDirectory() throws -> String {
        // Short: socket paths are limited to 107 bytes.
        let path = "/tmp/island-it-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs a command to completion, killing it if it outlives `timeout`.
    @discardableResult
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let status = try await runToCompletion(
            executable, arguments, environment: environment,
            stdout: dir + "/out", stderr: dir + "/err", timeout: timeout)
        return Result(
            status: status,
            output: (try? String(contentsOfFile: dir + "/out", encoding: .utf8)) ?? "",
            error: (try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? "")
    }

    /// A process started in the background for one test, its output in `log`.
    struct Background: Sendable {
        let process: BackgroundProcess
        let log: String

        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// SIGTERM, then SIGKILL if it has not exited within 30 seconds; waits for the exit.
        func stop() async { await process.stop() }
    }

    /// Runs `body` with a process started in the background, and stops it afterwards
    /// (awaited), whether `body` returned or threw.
    static func withBackground<T>(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        log: String, _ body: (Background) async throws -> T
    ) async throws -> T {
        try await withBackgroundProcess(executable, arguments, environment: environment, stdout: log, stderr: log) { process in
            try await body(Background(process: process, log: log))
        }
    }

    /// Waits until `path` exists as a socket (a server is listening), or fails the test.
    /// The bound only keeps a server that never listens from hanging the test.
    static func waitForSocket(_ path: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        // Checked once more after the deadline: on a loaded machine this task may wake long
        // after it, while the server went on starting.
        while true {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { return }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no socket at \(path) after \(timeout)")
        throw CancellationError()
    }
}
