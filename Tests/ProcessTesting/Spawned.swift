import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the package's built products are: next to the running test bundle.
public let productsDirectory: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

/// posix_spawn and waitpid, without Foundation's Process, whose child reaping hangs when
/// several tests start processes at once.
public final class Spawned: @unchecked Sendable {
    public let pid: pid_t
    private var exitStatus: Int32?

    public init(_ executable: String, _ arguments: [String], environment: [String: String]?, stdout: String, stderr: String) throws {
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

    public var isRunning: Bool { poll() == nil }

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
    public func wait(timeout: Duration) async throws -> Int32 {
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

    public func terminate() {
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
