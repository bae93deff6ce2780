import IslandJSON
import Testing
@testable import Varlink

@Suite(.timeLimit(.minutes(1))) struct ClientTests {
    @Test func callsStreamsOnewayAndErrors() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let client = try await VarlinkClient.connect(unixPath: server.path)
        #expect(try await client.call("org.example.test.Echo", ["text": "hi"]) == ["text": "hi"])

        var seen: [JSON] = []
        for try await reply in client.stream("org.example.test.Count", ["n": 4]) { seen.append(reply["i"]!) }
        #expect(seen == [0, 1, 2, 3])

        try await client.oneway("org.example.test.Echo", ["text": "quiet"])
        await #expect(throws: VarlinkError("org.example.test.Boom", ["why": "no"])) {
            try await client.call("org.example.test.Fail", ["why": "no"])
        }
        await #expect(throws: VarlinkError.invalidParameter("text")) {
            try await client.call("org.example.test.Echo", ["text": 1])
        }
        await client.close()
    }

    @Test func concurrentCallsArePipelinedAndMatched() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let client = try await VarlinkClient.connect(unixPath: server.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let reply = try await client.call("org.example.test.Echo", ["text": .string("\(i)")])
                    #expect(reply["text"] == .string("\(i)"))
                }
            }
            try await group.waitForAll()
        }
        await client.close()
    }

    @Test func streamsEndWithShuttingDownAndLaterCallsFail() async throws {
        let server = try await TestServer.start()
        let client = try await VarlinkClient.connect(unixPath: server.path)
        let stream = client.stream("org.example.test.Forever")
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        await server.stop()
        await #expect(throws: VarlinkError.shuttingDown) {
            while try await iterator.next() != nil {}
        }
        await #expect(throws: VarlinkClientError.connectionClosed) {
            try await client.call("org.example.test.Echo", ["text": "late"])
        }
    }
}
