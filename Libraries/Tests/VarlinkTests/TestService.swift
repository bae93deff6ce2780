import Foundation
import OrderedJSON
import NIOCore
import NIOPosix
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore
import VarlinkInProcess
import VarlinkNIO

/// `org.example.test`, served by every transport the tests use, and what its handlers saw.
struct TestService {
    static let interfaceText = """
        interface org.example.test
        type Item (name: string, count: int)
        method Echo(text: string) -> (text: string)
        method Items(item: Item, tags: []string) -> (ok: bool)
        # Replies n times with continues; needs more.
        method Count(n: int) -> (i: int)
        # Streams until the connection goes away.
        method Forever() -> (tick: int)
        # Replies after ms milliseconds, from a task.
        method Sleep(ms: int) -> (slept: int)
        # Releases its connection at once, waits (at most 30 s) until `of` Overlap calls have
        # started, then replies after ms more milliseconds with how many had started.
        method Overlap(ms: int, of: int) -> (ms: int, started: int)
        method Fail(why: string) -> ()
        method Unimplemented() -> ()
        # The caller's kernel-verified credentials.
        method Who() -> (pid: int, uid: int)
        # Sends n replies of 1 KiB at once, whether or not the peer reads them.
        method Flood(n: int) -> (pad: string)
        # Streams what Tell calls say, until the connection goes away.
        method Listen() -> (heard: string)
        # Says text to every listener; with hold, then holds the event loop until the test lets
        # it go (through `tellHold`).
        method Tell(text: string, hold: bool) -> ()
        # Answered by the test, through `held`.
        method Hold(id: string) -> (id: string)
        error Boom (why: string)
        """

    /// The connection errors of the tests' services: the conditions under names of their own.
    static let connectionErrors = VarlinkConnectionErrors(
        declaredBy: try! VarlinkInterface(
            parsing: """
                interface org.example.connection
                error MessageTooLarge (limit: int)
                error InvalidMessage (reason: string)
                error TooManyConnections (limit: int, scope: (total, user))
                error ShuttingDown ()
                """))

    let service: VarlinkService
    /// Streaming calls whose handler learnt the connection went away.
    let cancelled = Counter()
    /// `Sleep` calls that reached their handler.
    let sleepsStarted = Counter()
    /// The `ms` of each `Sleep` call that reached its handler, in the order they did.
    let sleeps = Log()
    /// `Listen` calls streaming what is told.
    let listeners = Responders()
    /// Where a `Tell` with `hold` holds the event loop.
    let tellHold = LoopHold()
    /// `Hold` calls waiting for the test to answer them, oldest first.
    let held = Responders()

    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    final class Log: Sendable {
        private let values = Mutex<[Int]>([])
        func append(_ value: Int) { values.withLock { $0.append(value) } }
        var all: [Int] { values.withLock { $0 } }
    }

    /// Blocks the thread that calls `hold()` (an event loop, on purpose) until the test calls
    /// `release()`, and tells the test, through `holding`, each time a hold has begun: what
    /// that thread did before is done, and nothing it would do after has happened yet.
    final class LoopHold: Sendable {
        private let releasedForGood = Mutex(false)
        private let semaphore = DispatchSemaphore(value: 0)
        let holding: AsyncStream<Void>
        private let began: AsyncStream<Void>.Continuation

        init() { (holding, began) = AsyncStream.makeStream() }

        func hold() {
            began.yield()
            guard !releasedForGood.withLock({ $0 }) else { return }
            semaphore.wait()
        }

        /// Waits until a hold has begun (the next one not waited for yet).
        func begun() async {
            for await _ in holding { return }
        }

        /// Lets the hold go: the one in progress, or the next.
        func release() { semaphore.signal() }

        /// Lets every hold go, now and later: for a test that ends while the loop is held.
        func releaseAll() {
            releasedForGood.withLock { $0 = true }
            semaphore.signal()
        }
    }

    final class Responders: Sendable {
        private let responders = Mutex<[(call: VarlinkCall, responder: VarlinkResponder)]>([])
        func add(_ responder: VarlinkResponder, for call: VarlinkCall) { responders.withLock { $0.append((call, responder)) } }
        var all: [VarlinkResponder] { responders.withLock { $0.map(\.responder) } }
        /// The calls `all` answer, in the same order.
        var calls: [VarlinkCall] { responders.withLock { $0.map(\.call) } }
        var count: Int { responders.withLock { $0.count } }
    }

    init(connectionErrors: VarlinkConnectionErrors = TestService.connectionErrors) {
        let cancelled = cancelled
        let started = sleepsStarted
        let sleeps = sleeps
        let held = held
        let overlapStarted = Counter()
        let listeners = listeners
        let tellHold = tellHold
        let interface = try! VarlinkInterface(parsing: Self.interfaceText)
        let implementation = VarlinkImplementation(
            interface: interface,
            handlers: [
                "Echo": .immediate { request in ["text": request.parameters["text"]!] },
                "Items": .immediate { _ in ["ok": true] },
                "Count": .streaming { request, responder in
                    let n = request.parameters["n"]!.intValue!
                    for i in 0..<n { responder.reply(["i": .int(i)], continues: i < n - 1) }
                    if n == 0 { responder.reply(["i": -1]) }
                },
                "Forever": .streaming { _, responder in
                    responder.onCancel { cancelled.increment() }
                    Task {
                        var tick = 0
                        while !responder.isFinished, tick < 100_000 {
                            responder.reply(["tick": .int(tick)], continues: true)
                            tick += 1
                            try? await Task.sleep(for: .milliseconds(5))
                            if cancelled.count > 0 { return }
                        }
                    }
                },
                "Sleep": .async { request in
                    let ms = request.parameters["ms"]!.intValue!
                    sleeps.append(ms)
                    started.increment()
                    try? await Task.sleep(for: .milliseconds(ms))
                    return ["slept": .int(ms)]
                },
                "Overlap": .pipelined { request, release in
                    overlapStarted.increment()
                    release()
                    let ms = request.parameters["ms"]!.intValue!
                    let of = request.parameters["of"]!.intValue!
                    // A barrier, not a race: a server that ran these one after another would leave
                    // the first waiting out the whole bound and answering `started: 1`. The bound
                    // is generous, and the barrier opens as soon as the last has started.
                    let deadline = ContinuousClock.now + .seconds(30 * RawConnection.slowdown)
                    while overlapStarted.count < of {
                        guard ContinuousClock.now < deadline else { break }
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    try? await Task.sleep(for: .milliseconds(ms))
                    return ["ms": .int(ms), "started": .int(overlapStarted.count)]
                },
                "Fail": .immediate { request throws(VarlinkError) in
                    throw VarlinkError("org.example.test.Boom", ["why": request.parameters["why"]!])
                },
                "Flood": .streaming { request, responder in
                    let n = request.parameters["n"]!.intValue!
                    let pad = JSON.string(String(repeating: "x", count: 1024))
                    for i in 0..<n { responder.reply(["pad": pad], continues: i < n - 1) }
                },
                "Listen": .streaming { request, responder in listeners.add(responder, for: request.call) },
                "Tell": .immediate { request in
                    for listener in listeners.all { listener.reply(["heard": request.parameters["text"]!], continues: true) }
                    // Blocks the loop on purpose: what was said must already be on its way, or wait.
                    if request.parameters["hold"]?.boolValue == true { tellHold.hold() }
                    return [:]
                },
                "Who": .immediate { request in
                    ["pid": .int(Int(request.connection.peer?.pid ?? -1)), "uid": .int(Int(request.connection.peer?.uid ?? 0))]
                },
                "Hold": .responding { request, responder in held.add(responder, for: request.call) },
            ])
        service = VarlinkService(
            info: VarlinkServiceInfo(vendor: "Test", product: "test", version: "0", url: "https://example.org"),
            implementations: [implementation], connectionErrors: connectionErrors)
    }
}

/// The test service on a temporary socket.
struct TestServer {
    let test: TestService
    let server: VarlinkServer
    let path: String
    let directory: String

    var cancelled: TestService.Counter { test.cancelled }
    var sleepsStarted: TestService.Counter { test.sleepsStarted }

    static func start(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        connectionErrors: VarlinkConnectionErrors = TestService.connectionErrors,
        _ configure: (inout VarlinkServer.Configuration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = NSTemporaryDirectory() + "varlink-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/test.sock"
        let test = TestService(connectionErrors: connectionErrors)
        var configuration = VarlinkServer.Configuration()
        configuration.shutdownGracePeriod = .seconds(3)
        configure(&configuration)
        let server = VarlinkServer(service: test.service, configuration: configuration, group: group)
        try await server.bind(unixPath: path)
        return TestServer(test: test, server: server, path: path, directory: directory)
    }

    func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func raw() throws -> RawConnection { try RawConnection(path: path) }
}

/// Runs `body` with the test service on a temporary socket, and stops the server when it
/// returns or throws — awaited, so no test leaves a server behind for the next.
func withServer(
    group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    connectionErrors: VarlinkConnectionErrors = TestService.connectionErrors,
    _ configure: (inout VarlinkServer.Configuration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Void
) async throws {
    let server = try await TestServer.start(group: group, connectionErrors: connectionErrors, configure)
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// How a test's client reaches the test service.
enum Transport: String, CaseIterable, Sendable {
    case unixSocket, inProcess
}

/// Runs `body` with a client of the test service over `transport`, and closes the client
/// (and stops the server) when it returns or throws.
func withClient(over transport: Transport, _ body: (VarlinkClient, TestService) async throws -> Void) async throws {
    func run(_ client: VarlinkClient, _ test: TestService) async throws {
        do {
            try await body(client, test)
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    }
    switch transport {
    case .unixSocket:
        try await withServer { server in
            try await run(try await VarlinkClient.connect(unixPath: server.path), server.test)
        }
    case .inProcess:
        let test = TestService()
        try await run(VarlinkClient.inProcess(test.service), test)
    }
}

/// Waits for `condition`, which is expected to come true: the bound only keeps a broken
/// server from hanging the test, and is generous so a loaded machine never reaches it.
func waitUntil(_ condition: () -> Bool, timeout: Duration = .seconds(30 * RawConnection.slowdown)) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
