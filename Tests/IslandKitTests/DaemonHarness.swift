import Foundation
import IslandJSON
import IslandKit
import Testing
import Synchronization
import Varlink

/// The real islandd on a temporary socket, state directory and XDG_DATA_HOME with a manifest
/// for the test app; restartable on the same socket and state.
final class TestDaemon: @unchecked Sendable {
    static let app = "org.example.KitTest"

    /// The directory of the built products, next to the running test bundle.
    static let productsDirectory: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

    let root: String
    var socket: String { root + "/s.sock" }
    private var process: Spawned?

    init() throws {
        // Short: socket paths are limited to 107 bytes.
        root = "/tmp/island-kit-\(UUID().uuidString.prefix(8))"
        let applications = root + "/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Kit test\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n"
            .write(toFile: applications + "/\(Self.app).desktop", atomically: true, encoding: .utf8)
        try "".write(toFile: root + "/islandd.conf", atomically: true, encoding: .utf8)
    }

    func start() async throws {
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] { environment[key] = nil }
        environment["XDG_DATA_HOME"] = root + "/share"
        environment["XDG_DATA_DIRS"] = root + "/none"
        process = try Spawned(Self.productsDirectory.appendingPathComponent("islandd").path,
                              ["--socket", socket, "--state-dir", root + "/state", "--config", root + "/islandd.conf"],
                              environment: environment, log: root + "/islandd.log")
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if let client = try? await VarlinkClient.connect(unixPath: socket) {
                await client.close()
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("islandd did not listen within 15 s: \(log)")
        throw CancellationError()
    }

    /// SIGTERM and wait (SIGKILL after five seconds).
    func stop() {
        process?.terminate()
        process = nil
    }

    var log: String { (try? String(contentsOfFile: root + "/islandd.log", encoding: .utf8)) ?? "" }

    func configuration(app: String? = TestDaemon.app) -> IslandKit.Configuration {
        IslandKit.Configuration(appID: app, socketPath: socket, reconnectTimeout: .seconds(15))
    }

    func admin(_ method: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        let client = try await VarlinkClient.connect(unixPath: socket)
        defer { Task { await client.close() } }
        return try await client.call("org.island.Admin." + method, parameters)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// posix_spawn and waitpid, without Foundation's Process, whose child reaping hangs when
/// several tests start processes at once (as in Tests/IntegrationTests/Support.swift).
final class Spawned {
    let pid: pid_t
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], environment: [String: String], log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // SwiftNIO's sockets are not close-on-exec; the child must not keep other tests' connections open.
        _ = Self.closeFrom(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(.init(rawValue: result)!) }
        self.pid = pid
    }

    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc lacks posix_spawn_file_actions_addclosefrom_np")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status }
        return exitStatus == nil
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

/// One `for await` loop over a stream, running in a task of its own, that records every
/// element; tests wait (with a deadline) for the element they expect.
final class Collected<Element: Sendable>: Sendable {
    private final class State: Sendable {
        let seen = Mutex<[Element]>([])
        let ended = Mutex(false)
    }

    private let state = State()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        task = Task { [state] in
            for await element in stream { state.seen.withLock { $0.append(element) } }
            state.ended.withLock { $0 = true }
        }
    }

    var elements: [Element] { state.seen.withLock { $0 } }
    var isFinished: Bool { state.ended.withLock { $0 } }

    /// The first element (from index `from`) that matches, waiting up to `timeout`.
    func first(from: Int = 0, within timeout: Duration = .seconds(10), where predicate: (Element) -> Bool) async -> Element? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let elements = self.elements
            if elements.count > from, let match = elements[from...].first(where: predicate) { return match }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits up to `timeout` for the loop to end.
    func finished(within timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isFinished, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return isFinished
    }

    deinit { task.cancel() }
}
