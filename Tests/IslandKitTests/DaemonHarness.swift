import Foundation
import ProcessTesting
import OrderedJSON
import OrderedCollections
import IslandKit
import Testing
import Synchronization
import VarlinkCore
import VarlinkNIO

/// Runs `body` with the real islandd on a temporary socket, state directory and XDG_DATA_HOME
/// with a manifest for the test app; stops the daemon and removes its files afterwards
/// (awaited), whether `body` returned or threw.
func withDaemon<T>(configuration: String = "", _ body: (TestDaemon) async throws -> T) async throws -> T {
    let daemon = try TestDaemon(configuration: configuration)
    defer { try? FileManager.default.removeItem(atPath: daemon.root) }
    do {
        try await daemon.start()
        let result = try await body(daemon)
        await daemon.stop()
        return result
    } catch {
        await daemon.stop()
        throw error
    }
}

/// `withDaemon` with a connection for the test app, closed before the daemon stops.
func withDaemonConnection<T>(_ body: (TestDaemon, IslandConnection) async throws -> T) async throws -> T {
    try await withDaemon { daemon in
        try await daemon.withConnection { connection in try await body(daemon, connection) }
    }
}

/// The daemon of `withDaemon`; restartable on the same socket and state.
final class TestDaemon {
    static let app = "org.example.KitTest"

    let root: String
    var socket: String { root + "/s.sock" }
    private var process: BackgroundProcess?

    fileprivate init(configuration: String) throws {
        // Short: socket paths are limited to 107 bytes.
        root = "/tmp/island-kit-\(UUID().uuidString.prefix(8))"
        let applications = root + "/share/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Kit test\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n"
            .write(toFile: applications + "/\(Self.app).desktop", atomically: true, encoding: .utf8)
        try configuration.write(toFile: root + "/islandd.conf", atomically: true, encoding: .utf8)
    }

    /// Starts islandd and waits until it listens.
    func start() async throws {
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] { environment[key] = nil }
        environment["XDG_DATA_HOME"] = root + "/share"
        environment["XDG_DATA_DIRS"] = root + "/none"
        process = try await BackgroundProcess(
            productsDirectory.appendingPathComponent("islandd").path,
            ["--socket", socket, "--state-dir", root + "/state", "--config", root + "/islandd.conf"],
            environment: environment, stdout: root + "/islandd.log", stderr: root + "/islandd.log")
        // Sanitized builds run several times slower (scripts/sanitize.sh sets ISLAND_SANITIZER).
        let slowdown = ProcessInfo.processInfo.environment["ISLAND_SANITIZER"] == nil ? 1 : 5
        let deadline = ContinuousClock.now + .seconds(30 * slowdown)
        // Checked once more after the deadline: on a loaded machine this task may wake long
        // after it, while islandd went on starting.
        while true {
            if let client = try? await VarlinkClient.connect(unixPath: socket) {
                await client.close()
                return
            }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("islandd did not listen within \(30 * slowdown) s: \(log)")
        throw CancellationError()
    }

    /// SIGTERM, SIGKILL after 30 seconds; waits for the exit, which must be the graceful one.
    func stop() async {
        guard let process else { return }
        self.process = nil
        let status = await process.stop()
        #expect(status == 0, "islandd did not stop gracefully on SIGTERM (\(status.map(String.init) ?? "no status")): \(log)")
    }

    var log: String { (try? String(contentsOfFile: root + "/islandd.log", encoding: .utf8)) ?? "" }

    func configuration(app: String? = TestDaemon.app) -> IslandKit.Configuration {
        // How long a call waits for the daemon to be back: generous, since a restart on a
        // loaded machine may be slow, and over as soon as it is back.
        IslandKit.Configuration(appID: app, socketPath: socket, reconnectTimeout: .seconds(30))
    }

    /// Runs `body` with a connection for `app`, closed afterwards (awaited), whether `body`
    /// returned or threw.
    func withConnection<T>(app: String? = TestDaemon.app, _ body: (IslandConnection) async throws -> T) async throws -> T {
        try await using(IslandConnection(configuration: configuration(app: app)), release: { await $0.close() }, body)
    }

    func admin(_ method: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        let client = try await VarlinkClient.connect(unixPath: socket)
        do {
            let reply = try await client.call("org.island.Admin." + method, parameters)
            await client.close()
            return reply
        } catch {
            await client.close()
            throw error
        }
    }
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

    /// The first element (from index `from`) that matches, waiting up to `timeout`: for one
    /// expected to come, so the bound is generous and returns as soon as it does.
    func first(from: Int = 0, within timeout: Duration = .seconds(30), where predicate: (Element) -> Bool) async -> Element? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let elements = self.elements
            if elements.count > from, let match = elements[from...].first(where: predicate) { return match }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits up to `timeout` for the loop to end.
    func finished(within timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isFinished, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return isFinished
    }

    deinit { task.cancel() }
}
