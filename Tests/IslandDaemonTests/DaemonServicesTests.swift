import Foundation
import IslandCore
import OrderedJSON
import Logging
import NIOPosix
import OrderedCollections
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing
import VarlinkCore
import VarlinkNIO
@testable import IslandDaemon

/// The services `islandd` runs in its `ServiceGroup`, each against a graceful shutdown.
@Suite(.timeLimit(.minutes(1))) struct DaemonServicesTests {
    let logger = Logger(label: "test")

    @Test func theSocketServesFromReadyUntilAGracefulShutdownDrainsIt() async throws {
        let tree = try TemporaryTree("isl-socket")
        defer { try? FileManager.default.removeItem(atPath: tree.root) }
        let path = tree.path("run/s.sock")
        let (readiness, ready) = AsyncStream.makeStream(of: Void.self)
        let socket = SocketService(
            service: VarlinkService(
                info: VarlinkServiceInfo(vendor: "t", product: "t", version: "0", url: "u"), implementations: [], connectionErrors: .island),
            settings: .init(), scope: .user, descriptors: 1024, mayUseReserve: { _ in false },
            loop: MultiThreadedEventLoopGroup.singleton,
            source: .path(DaemonPaths(socket: path, stateDirectory: tree.path("state"), configurationFile: "/dev/null", dataDirectories: []), .user),
            ready: { ready.yield() }, logger: logger)

        try await testGracefulShutdown { shutdown in
            let running = Task { try await socket.run() }
            for await _ in readiness { break }
            // Ready means served: the directory was made private, and a client gets answers.
            #expect(try FileManager.default.attributesOfItem(atPath: tree.path("run"))[.posixPermissions] as? Int == 0o700)
            let client = try await VarlinkClient.connect(unixPath: path)
            #expect(try await client.call("org.varlink.service.GetInfo")["product"]?.stringValue == "t")
            #expect(socket.connectionCount == 1)

            shutdown.triggerGracefulShutdown()
            try await running.value
            #expect(socket.connectionCount == 0)
            await client.close()
            await #expect(throws: (any Error).self) { try await VarlinkClient.connect(unixPath: path) }
        }
    }

    @Test func aSocketThatCannotBeServedIsAStartErrorNamingIt() async throws {
        let path = "/dev/null/island/s.sock"
        let socket = SocketService(
            service: VarlinkService(
                info: VarlinkServiceInfo(vendor: "t", product: "t", version: "0", url: "u"), implementations: [], connectionErrors: .island),
            settings: .init(), scope: .user, descriptors: 1024, mayUseReserve: { _ in false },
            loop: MultiThreadedEventLoopGroup.singleton,
            source: .path(DaemonPaths(socket: path, stateDirectory: "/nonexistent", configurationFile: "/dev/null", dataDirectories: []), .user),
            ready: { Issue.record("ready without a socket") }, logger: logger)
        do {
            try await socket.run()
            Issue.record("served \(path)")
        } catch let error as IslandDaemon.StartError {
            #expect("\(error)".hasPrefix("socket: \(path): "), "\(error)")
        }
    }

    /// A reporter asleep for an hour must not hold up the daemon's stop.
    @Test func reportersStopAtOnceOnGracefulShutdown() async {
        let (asleep, fellAsleep) = AsyncStream.makeStream(of: Duration.self)
        let sleep: @Sendable (Duration) async throws -> Void = { duration in
            fellAsleep.yield(duration)
            try await Task.sleep(for: duration)
        }
        await testGracefulShutdown { shutdown in
            let watchdog = Task { await WatchdogPings(interval: .seconds(7200), sleep: sleep).run() }
            let status = Task { await StatusReports(period: .seconds(3600), status: { "" }, sleep: sleep).run() }
            // Both asleep for the hour before the shutdown comes.
            var sleeps: [Duration] = []
            for await duration in asleep {
                sleeps.append(duration)
                if sleeps.count == 2 { break }
            }
            #expect(sleeps == [.seconds(3600), .seconds(3600)])
            let triggered = ContinuousClock.now
            shutdown.triggerGracefulShutdown()
            await watchdog.value
            await status.value
            // Woken, not slept out (the suite's time limit bounds how long "at once" may take).
            #expect(ContinuousClock.now - triggered < .seconds(3600))
        }
    }

    @Test func idleExitReturnsOnceIdleForItsPeriod() async {
        let idle = IdleExitService(idleExit: IdleExit(seconds: 0.05), isIdle: { true }, logger: logger)
        await testGracefulShutdown { _ in await idle.run() }
    }

    @Test func idleExitEndsOnGracefulShutdownWhileBusy() async {
        let (checks, checked) = AsyncStream.makeStream(of: Void.self)
        let busy = IdleExitService(
            idleExit: IdleExit(seconds: 0.05),
            isIdle: {
                checked.yield(); return false
            }, logger: logger)
        await testGracefulShutdown { shutdown in
            let running = Task { await busy.run() }
            // It has found the daemon busy (and goes on waiting) before the shutdown comes.
            for await _ in checks { break }
            shutdown.triggerGracefulShutdown()
            await running.value
        }
    }

    @Test func aSharedValueReplacedIsWhatEveryReaderSees() async {
        let shared = SharedValue(1)
        await Task.detached { shared.value = 2 }.value
        #expect(shared.value == 2)
    }
}
