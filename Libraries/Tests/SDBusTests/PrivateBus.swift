import Foundation
import Glibc
import ProcessTesting
import SDBus
import Testing

/// A real `dbus-daemon` of the test's own, on a socket in a temporary directory: the peer every
/// SDBus test talks to. `restart()` stops it and starts a new one on the same address.
final class PrivateBus: Sendable {
    let directory: URL
    let address: String
    private let process: SharedProcess

    private final class SharedProcess: @unchecked Sendable {
        var current: BackgroundProcess?
    }

    static let daemon = "/usr/bin/dbus-daemon"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: daemon) }

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory.path)/bus"
        process = SharedProcess()
        try await start()
    }

    private func start() async throws {
        let socket = directory.appendingPathComponent("bus").path
        try? FileManager.default.removeItem(atPath: socket)
        process.current = try await BackgroundProcess(
            Self.daemon, ["--session", "--nofork", "--nopidfile", "--address=\(address)"], environment: nil,
            stdout: directory.appendingPathComponent("dbus.out").path, stderr: directory.appendingPathComponent("dbus.err").path)
        // Until a connection is accepted: the daemon binds the socket (the file appears) before
        // it listens, and a loaded machine may run a test in between. Generous: the bound only
        // keeps a daemon that never listens from hanging the test.
        let deadline = ContinuousClock.now + .seconds(30)
        while !Self.accepts(socket) {
            guard ContinuousClock.now < deadline else { throw BusNotReady() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Whether something listens on the Unix socket at `path`.
    private static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    struct BusNotReady: Error {}

    /// Stops the daemon: every connection to it drops.
    func stop() async {
        await process.current?.stop()
        process.current = nil
    }

    func restart() async throws {
        await stop()
        try await start()
    }

    func close() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a private bus, closed afterwards whatever happens.
func withPrivateBus<T>(_ body: (PrivateBus) async throws -> T) async throws -> T {
    try await using(try await PrivateBus(), release: { await $0.close() }, body)
}

/// A private bus with a loop actor connected to it twice, as "server" and "client"; `body`
/// gets the actor and the server's unique name.
func withServerAndClient(_ body: (LoopActor, String) async throws -> Void) async throws {
    try await withPrivateBus { privateBus in
        let loop = try BusLoop()
        defer { loop.shutdown() }
        let peer = LoopActor(loop: loop)
        let server = try await peer.connect("server", address: privateBus.address)
        _ = try await peer.connect("client", address: privateBus.address)
        try await body(peer, server)
    }
}

/// An actor on a `BusLoop`, as the bridge is: what it does with its buses runs on the loop.
actor LoopActor {
    nonisolated let loop: BusLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    var buses: [String: Bus] = [:]
    var slots: [AnyObject] = []

    init(loop: BusLoop) {
        self.loop = loop
    }

    func connect(_ name: String, address: String, onDisconnect: @escaping @Sendable () -> Void = {}) throws -> String {
        let bus = try Bus.connect(address: address, loop: loop, description: name, onDisconnect: onDisconnect)
        buses[name] = bus
        return bus.uniqueName
    }

    func bus(_ name: String) -> Bus { buses[name]! }

    func keep(_ slot: AnyObject) { slots.append(slot) }

    func close(_ name: String) {
        buses[name]?.close()
        buses[name] = nil
    }

    func closeAll() {
        slots = []
        for bus in buses.values { bus.close() }
        buses = [:]
    }

    /// Calls a method and waits for its reply's arguments.
    func call(
        _ name: String, destination: String, path: String, interface: String, member: String,
        arguments: [BusValue] = [], limits: DecodingLimits = .init()
    ) async throws -> [BusValue] {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try bus(name).call(
                    destination: destination, path: path, interface: interface, member: member,
                    arguments: arguments
                ) { result in
                    continuation.resume(
                        with: result.flatMap { reply in
                            Result { () throws(BusError) in try reply.arguments(limits: limits) }
                        }.mapError { $0 as any Error })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// Waits (at most `timeout`) for the first element of `stream`: for something expected to come,
/// so the bound is generous and returns as soon as it does.
func first<T: Sendable>(_ stream: AsyncStream<T>, within timeout: Duration = .seconds(30)) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await value in stream { return value }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}
