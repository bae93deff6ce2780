import Foundation
import Testing

/// Finds and runs the package's executables and the reference Python implementation.
enum Harness {
    /// The directory holding the built products, next to the running test bundle.
    static let productsDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent()
    }()

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

    /// posix_spawn and waitpid, without Foundation's Process, whose child reaping hangs when
    /// several tests start processes at once.
    final class Spawned {
        let pid: pid_t
        private var exitStatus: Int32?

        init(_ executable: String, _ arguments: [String], environment: [String: String]?, stdout: String, stderr: String) throws {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            if stderr == stdout {
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            } else {
                posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            }
            // SwiftNIO accepts connections without close-on-exec, so a child would otherwise
            // inherit the server side of other tests' connections and keep them open.
            _ = Self.closeFrom(&actions, 3)
            let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = env.map { strdup($0) } + [nil]
            defer {
                argv.forEach { free($0) }
                envp.forEach { free($0) }
            }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
            guard result == 0 else { throw POSIXError(.init(rawValue: result)!) }
            self.pid = pid
        }

        /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift's Glibc module
        /// does not import.
        private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
                fatalError("glibc lacks posix_spawn_file_actions_addclosefrom_np")
            }
            return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

        var isRunning: Bool { poll() == nil }

        private func poll() -> Int32? {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                exitStatus = code
            }
            return exitStatus
        }

        /// The exit status (128 + signal when killed); kills the process after `timeout`.
        func wait(timeout: Duration) async throws -> Int32 {
            let deadline = ContinuousClock.now + timeout
            while true {
                if let status = poll() { return status }
                if ContinuousClock.now >= deadline {
                    kill(pid, SIGKILL)
                    Issue.record("process \(pid) outlived \(timeout) and was killed")
                    return try await wait(timeout: .seconds(5))
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        func terminate() {
            guard isRunning else { return }
            kill(pid, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(5)
            while isRunning, ContinuousClock.now < deadline { usleep(5_000) }
            if isRunning {
                kill(pid, SIGKILL)
                while isRunning { usleep(1_000) }
            }
        }

        deinit { terminate() }
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
