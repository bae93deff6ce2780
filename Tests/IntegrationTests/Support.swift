import Foundation
import ProcessTesting
import Testing

/// Finds and runs the package's executables and the reference Python implementation.
enum Harness {
    /// The directory holding the built products, next to the running test bundle.

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

    /// Runs a command to completion, killing it if it outlives `timeout`. Output goes through
    /// files, so a chatty child can never block on a full pipe.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: Duration = .seconds(60)) async throws -> Result {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try Spawned(executable, arguments, environment: environment, stdout: dir + "/out", stderr: dir + "/err")
        let status = try await child.wait(timeout: timeout)
        return Result(status: status,
                      output: (try? String(contentsOfFile: dir + "/out", encoding: .utf8)) ?? "",
                      error: (try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? "")
    }

    /// A process started in the background and stopped (by its PID) when the test is done.
    final class Background {
        let child: Spawned
        let log: String

        init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, log: String) throws {
            self.log = log
            child = try Spawned(executable, arguments, environment: environment, stdout: log, stderr: log)
        }

        var pid: pid_t { child.pid }
        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// SIGTERM, then SIGKILL if it has not exited within five seconds.
        func stop() {
            child.terminate()
        }

        deinit { stop() }
    }


    /// Waits until `path` exists as a socket (a server is listening), or fails the test.
    static func waitForSocket(_ path: String, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no socket at \(path) after \(timeout)")
        throw CancellationError()
    }
}
