import Foundation
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
import VarlinkNIO

/// What a client sees of a service, the same over a socket and in memory: both transports run
/// every call through the same encoding, dispatch and ordering of a connection's calls.
@Suite(.timeLimit(.minutes(1))) struct ClientTests {
    @Test(arguments: Transport.allCases)
    func callsStreamsOnewayAndErrors(over transport: Transport) async throws {
        try await withClient(over: transport) { client, _ in
            #expect(try await client.call("org.example.test.Echo", ["text": "hi"]) == ["text": "hi"])

            var seen: [JSON] = []
            for try await reply in client.stream("org.example.test.Count", ["n": 4]) { seen.append(reply["i"]!) }
            #expect(seen == [0, 1, 2, 3])

            try await client.oneway("org.example.test.Echo", ["text": "quiet"])
            await #expect(throws: VarlinkError("org.example.test.Boom", ["why": "no"])) {
                try await client.call("org.example.test.Fail", ["why": "no"])
            }
            await #expect(throws: VarlinkError.invalidParameter("text", expected: "string")) {
                try await client.call("org.example.test.Echo", ["text": 1])
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func introspection(over transport: Transport) async throws {
        try await withClient(over: transport) { client, _ in
            let info = try await client.call("org.varlink.service.GetInfo")
            #expect(info["vendor"] == "Test")
            #expect(info["interfaces"] == ["org.varlink.service", "org.example.connection", "org.example.test"])
            let description = try await client.call("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.test"])
            #expect(description["description"] == .string(TestService.interfaceText))
            await #expect(throws: VarlinkError.interfaceNotFound("org.nope")) {
                try await client.call("org.varlink.service.GetInterfaceDescription", ["interface": "org.nope"])
            }
        }
    }

    @Test(
        arguments: Transport.allCases,
        [
            (#"{"method":"org.example.test.Nope"}"#, VarlinkError.methodNotFound("org.example.test.Nope")),
            (#"{"method":"org.nope.Echo"}"#, .interfaceNotFound("org.nope")),
            (#"{"method":"Echo"}"#, .interfaceNotFound("")),
            (#"{"method":"org.example.test.Echo"}"#, .invalidParameter("text", expected: "string")),
            (#"{"method":"org.example.test.Echo","parameters":{"text":7}}"#, .invalidParameter("text", expected: "string")),
            (#"{"method":"org.example.test.Echo","parameters":{"text":"a","more":1}}"#, .invalidParameter("more", expected: "no such member")),
            (
                #"{"method":"org.example.test.Items","parameters":{"item":{"name":"a","count":"1"},"tags":[]}}"#,
                .invalidParameter("item.count", expected: "int")
            ),
            (
                #"{"method":"org.example.test.Items","parameters":{"item":{"name":"a","count":1},"tags":["a",null]}}"#,
                .invalidParameter("tags[1]", expected: "string")
            ),
            (#"{"method":"org.example.test.Echo","parameters":{"text":"a"},"upgrade":true}"#, .invalidParameter("upgrade")),
            (#"{"method":"org.example.test.Unimplemented"}"#, .methodNotImplemented("org.example.test.Unimplemented")),
            (#"{"method":"org.example.test.Fail","parameters":{"why":"because"}}"#, VarlinkError("org.example.test.Boom", ["why": "because"])),
            (#"{"method":"org.example.test.Count","parameters":{"n":2}}"#, .expectedMore),
        ])
    func namedErrors(over transport: Transport, refusal: (call: String, error: VarlinkError)) async throws {
        try await withClient(over: transport) { client, _ in
            await #expect(throws: refusal.error) { try await client.send(raw: VarlinkCall(frame: Array(refusal.call.utf8))) }
            // A refused call leaves the connection usable.
            let next = try await client.call("org.example.test.Echo", ["text": "next"])
            #expect(next == ["text": "next"])
        }
    }

    @Test(arguments: Transport.allCases)
    func onewayCallsGetNoReplyAndLeaveTheOrderAlone(over transport: Transport) async throws {
        try await withClient(over: transport) { client, _ in
            try await client.oneway("org.example.test.Echo", ["text": "quiet"])
            try await client.oneway("org.example.test.Fail", ["why": "quiet"])
            #expect(try await client.call("org.example.test.Echo", ["text": "loud"]) == ["text": "loud"])
        }
    }

    /// Calls made at once are pipelined on the connection, and a reply goes to the call it
    /// answers: a server that answered as work completed, or a client that matched replies any
    /// other way than in order, would hand some call another's answer. Every twentieth call
    /// sleeps, longer the earlier it is.
    @Test(arguments: Transport.allCases)
    func concurrentCallsArePipelinedAndMatched(over transport: Transport) async throws {
        try await withClient(over: transport) { client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        if i % 20 == 0 {
                            let reply = try await client.call("org.example.test.Sleep", ["ms": .int(20 - i / 20)])
                            #expect(reply["slept"] == .int(20 - i / 20))
                        } else {
                            let reply = try await client.call("org.example.test.Echo", ["text": .string("\(i)")])
                            #expect(reply["text"] == .string("\(i)"))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func aClosedClientFailsItsCallsAndItsStreamsEndTheirHandlers(over transport: Transport) async throws {
        try await withClient(over: transport) { client, test in
            var ticks = client.stream("org.example.test.Forever").makeAsyncIterator()
            _ = try await ticks.next()
            await client.close()
            try await waitUntil { test.cancelled.count == 1 }
            await #expect(throws: VarlinkClientError.connectionClosed) {
                try await client.call("org.example.test.Echo", ["text": "late"])
            }
            await #expect(throws: VarlinkClientError.connectionClosed) {
                try await client.oneway("org.example.test.Echo", ["text": "late"])
            }
        }
    }

    /// Oneway calls queued behind a call in progress are still made after their sender has
    /// closed the connection; the call that wanted a reply fails on the client's side.
    @Test(arguments: Transport.allCases)
    func onewayCallsStillRunAfterTheirSenderCloses(over transport: Transport) async throws {
        try await withClient(over: transport) { client, test in
            let held = Task { try await client.call("org.example.test.Hold", ["id": "a"]) }
            try await waitUntil { test.held.count == 1 }
            try await client.oneway("org.example.test.Sleep", ["ms": 1])
            try await client.oneway("org.example.test.Sleep", ["ms": 1])
            await client.close()
            #expect(test.sleepsStarted.count == 0, "they wait for the call before them")
            test.held.all[0].reply(["id": "a"])
            try await waitUntil { test.sleepsStarted.count == 2 }
            await #expect(throws: VarlinkClientError.connectionClosed) { try await held.value }
        }
    }

    @Test func streamsEndWithShuttingDownAndLaterCallsFail() async throws {
        try await withServer { server in
            let client = try await VarlinkClient.connect(unixPath: server.path)
            var iterator = client.stream("org.example.test.Forever").makeAsyncIterator()
            _ = try await iterator.next()
            await server.stop()
            await #expect(throws: VarlinkError("org.example.connection.ShuttingDown")) {
                while try await iterator.next() != nil {}
            }
            await #expect(throws: VarlinkClientError.connectionClosed) {
                try await client.call("org.example.test.Echo", ["text": "late"])
            }
        }
    }

    @Test func anInProcessPeerIsThisProcess() async throws {
        try await withClient(over: .inProcess) { client, _ in
            let who = try await client.call("org.example.test.Who")
            #expect(who["pid"] == .int(Int(getpid())))
            #expect(who["uid"] == .int(Int(getuid())))
        }
    }
}

/// A client's connection is not inherited by the programs its process starts: a service knows
/// a peer by the credentials of the process that connected, and a program holding an inherited
/// connection could call as that process.
@Suite struct ClientConnectionDescriptorTests {
    @Test func theConnectionIsClosedOnExec() async throws {
        var template = Array("/tmp/vlclient.XXXXXX".utf8CString)
        let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/listening"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }

        let client = try await VarlinkClient.connect(unixPath: path)
        defer { Task { await client.close() } }
        // The client's socket is the one descriptor of this process whose peer is `path`
        // (other tests' descriptors come and go meanwhile; none is connected there).
        let connected = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
            .filter { peerPath(of: $0) == path }
        try #require(connected.count == 1, "descriptors connected to \(path): \(connected)")
        let flags = fcntl(connected[0], F_GETFD)
        #expect(flags >= 0 && flags & FD_CLOEXEC != 0, "the client's connection is inherited across exec")
    }

    @Test func aMissingSocketIsNamedByItsErrno() async throws {
        await #expect {
            try await VarlinkClient.connect(unixPath: "/nonexistent/island-\(getpid()).sock")
        } throws: { error in
            "\(error)".contains("(errno: \(ENOENT))")
        }
    }

    func listeningSocket(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        return fd
    }

    func peerPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        return withUnsafeBytes(of: address.sun_path) { bytes in
            let used = bytes.prefix(Int(length) - MemoryLayout<sa_family_t>.size)
            return String(decoding: used.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
