import Foundation
import OrderedJSON
import NIOCore
import NIOPosix
import OrderedCollections
import Testing
import VarlinkCore
import VarlinkNIO

/// The server on a real socket, against hand-written frames: every bad input ends in a named
/// error or a clean close, and the server keeps serving.
@Suite(.timeLimit(.minutes(1))) struct ServerTests {
    func error(_ reply: [String: Any]?) -> String? { reply?["error"] as? String }
    func parameters(_ reply: [String: Any]?) -> [String: Any] { reply?["parameters"] as? [String: Any] ?? [:] }

    /// A fresh connection still gets answers.
    func assertServing(_ server: TestServer) async throws {
        let c = try server.raw()
        try c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"still here"}}"#)
        #expect(parameters(try await c.readReply())["text"] as? String == "still here")
    }

    @Test func moreRepliesContinueUntilTheLast() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.example.test.Count","parameters":{"n":3},"more":true}"#)
            for i in 0..<3 {
                let reply = try await c.readReply()
                #expect(parameters(reply)["i"] as? Int == i)
                #expect((reply?["continues"] as? Bool ?? false) == (i < 2))
            }
            try await assertServing(server)
        }
    }

    @Test func pipelinedCallsAreAnsweredInOrder() async throws {
        try await withServer { server in
            let c = try server.raw()
            // Slow calls before fast ones, in one write: a server answering as work completes
            // would reorder them. 200 calls are over three turns' worth of the loop.
            var batch: [UInt8] = []
            for i in 0..<200 {
                let frame =
                    i % 20 == 0
                    ? #"{"method":"org.example.test.Sleep","parameters":{"ms":\#(20 - i / 20)}}"#
                    : #"{"method":"org.example.test.Echo","parameters":{"text":"\#(i)"}}"#
                batch += Array(frame.utf8) + [0]
            }
            try c.send(batch)
            for i in 0..<200 {
                let reply = parameters(try await c.readReply())
                if i % 20 == 0 {
                    #expect(reply["slept"] as? Int == 20 - i / 20)
                } else {
                    #expect(reply["text"] as? String == "\(i)")
                }
            }
        }
    }

    @Test func releasedCallsOverlapButAreAnsweredInOrder() async throws {
        try await withServer { server in
            let c = try server.raw()
            // Each releases the connection at once, so all three run together; once all have
            // started the first sleeps longest, yet the replies come back in call order.
            var batch: [UInt8] = []
            for ms in [300, 100, 10] {
                batch += Array(#"{"method":"org.example.test.Overlap","parameters":{"ms":\#(ms),"of":3}}"#.utf8) + [0]
            }
            batch += Array(#"{"method":"org.example.test.Echo","parameters":{"text":"after"}}"#.utf8) + [0]
            try c.send(batch)
            for ms in [300, 100, 10] {
                let reply = parameters(try await c.readReply())
                #expect(reply["ms"] as? Int == ms)
                #expect(reply["started"] as? Int == 3, "every call started before any replied")
            }
            #expect(parameters(try await c.readReply())["text"] as? String == "after")
        }
    }

    @Test func onewayCallsOutliveTheirSenderClosing() async throws {
        try await withServer { server in
            // A call in progress, three oneway calls behind it, and the sender gone before any
            // of them ran: the oneway calls are still made (a call that wanted a reply is not).
            // The calls start one after another, in order, so the oneway call at the end (2 ms)
            // starting means the one before it (3 ms) had its turn.
            var batch: [UInt8] = []
            batch += Array(#"{"method":"org.example.test.Sleep","parameters":{"ms":100}}"#.utf8) + [0]
            for _ in 0..<3 {
                batch += Array(#"{"method":"org.example.test.Sleep","parameters":{"ms":1},"oneway":true}"#.utf8) + [0]
            }
            batch += Array(#"{"method":"org.example.test.Sleep","parameters":{"ms":3}}"#.utf8) + [0]
            batch += Array(#"{"method":"org.example.test.Sleep","parameters":{"ms":2},"oneway":true}"#.utf8) + [0]
            do {
                let c = try server.raw()
                try c.send(batch)
            }
            try await waitUntil { server.test.sleeps.all.contains(2) }
            #expect(server.test.sleeps.all == [100, 1, 1, 1, 2])
        }
    }

    @Test func halfCloseStillGetsEveryReply() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.example.test.Sleep","parameters":{"ms":50}}"#)
            try c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"last"}}"#)
            c.shutdownWrite()
            #expect(parameters(try await c.readReply())["slept"] as? Int == 50)
            #expect(parameters(try await c.readReply())["text"] as? String == "last")
            #expect(try await c.readMessage() == nil, "the server closes after answering")
        }
    }

    @Test(arguments: [
        ("{not json}", "invalid JSON"),
        ("[1,2,3]", "not a JSON object"),
        (#"{"parameters":{}}"#, "no \"method\""),
        (#"{"method":7}"#, "no \"method\""),
        (#"{"method":"a.B","parameters":[]}"#, "\"parameters\" is not an object"),
        (#"{"method":"a.B","more":"yes"}"#, "\"more\" is not a boolean"),
        (String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000), "nesting too deep"),
    ])
    func malformedMessagesEndTheConnectionWithANamedError(frame: String, reason: String) async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"before"}}"#)
            try c.send(frame)
            // The server may already have closed the connection, so this send may fail.
            try? c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"after"}}"#)
            #expect(parameters(try await c.readReply())["text"] as? String == "before", "calls before the bad one are answered")
            let reply = try await c.readReply()
            #expect(error(reply) == "org.example.connection.InvalidMessage")
            #expect((parameters(reply)["reason"] as? String)?.contains(reason) == true, "\(String(describing: reply))")
            #expect(try await c.readMessage() == nil)
            try await assertServing(server)
        }
    }

    /// A malformed message behind a call that has released its connection but not replied
    /// yet: the call's reply comes first, then the refusal.
    @Test func aMalformedMessageWaitsForTheReplyOfAReleasedCall() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(
                Array(#"{"method":"org.example.test.Overlap","parameters":{"ms":200,"of":1}}"#.utf8) + [0]
                    + Array("{not json}".utf8) + [0])
            #expect(parameters(try await c.readReply())["ms"] as? Int == 200)
            #expect(error(try await c.readReply()) == "org.example.connection.InvalidMessage")
            #expect(try await c.readMessage() == nil)
        }
    }

    @Test func invalidUTF8IsRefused() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(Array(#"{"method":"org.example.test.Echo","parameters":{"text":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8) + [0])
            let reply = try await c.readReply()
            #expect(error(reply) == "org.example.connection.InvalidMessage")
            #expect((parameters(reply)["reason"] as? String)?.contains("UTF-8") == true)
            try await assertServing(server)
        }
    }

    @Test func oversizedMessageIsRefusedAndTheConnectionClosed() async throws {
        try await withServer({ $0.maximumMessageSize = 4096 }) { server in
            let c = try server.raw()
            let text = String(repeating: "a", count: 10_000)
            try? c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"\#(text)"}}"#)
            let reply = try await c.readReply()
            #expect(error(reply) == "org.example.connection.MessageTooLarge")
            #expect(parameters(reply)["limit"] as? Int == 4096)
            #expect(try await c.isClosedByPeer())
            try await assertServing(server)
        }
    }

    @Test func truncatedMessageAtEndOfStream() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.example.test.Echo","param"#, terminated: false)
            c.shutdownWrite()
            let reply = try await c.readReply()
            #expect(error(reply) == "org.example.connection.InvalidMessage")
            #expect(try await c.readMessage() == nil)
            try await assertServing(server)
        }
    }

    /// A service that declares no connection errors ends a connection without a word, and
    /// serves no interface for them.
    @Test func aServiceWithoutConnectionErrorsClosesWithoutAWord() async throws {
        try await withServer(connectionErrors: .silent, { $0.maximumConnectionsPerUser = 1 }) { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            #expect(parameters(try await c.readReply())["interfaces"] as? [String] == ["org.varlink.service", "org.example.test"])
            let refused = try server.raw()
            #expect(try await refused.readMessage() == nil, "over the limit: closed, nothing said")
            try c.send(#"{"method":"org.example.test.Echo","parameters":{"text":"before"}}"#)
            try c.send("{not json}")
            #expect(parameters(try await c.readReply())["text"] as? String == "before")
            #expect(try await c.readMessage() == nil)
        }
    }

    @Test func peerCredentialsComeFromTheKernel() async throws {
        try await withServer { server in
            let c = try server.raw()
            try c.send(#"{"method":"org.example.test.Who"}"#)
            let who = parameters(try await c.readReply())
            #expect(who["pid"] as? Int == Int(getpid()))
            #expect(who["uid"] as? Int == Int(getuid()))
        }
    }

    @Test func connectionsPerUserAreLimited() async throws {
        try await withServer({ $0.maximumConnectionsPerUser = 2 }) { server in
            let first = try server.raw()
            var second: RawConnection? = try server.raw()
            // Each connection is admitted on its own event loop, so the order they were accepted
            // in is not the order they are admitted in: both must be in before the third tries.
            for connection in [first, second!] {
                try connection.send(#"{"method":"org.example.test.Echo","parameters":{"text":"1"}}"#)
                _ = try await connection.readReply()
            }
            let third = try server.raw()
            let refusal = try await third.readReply()
            #expect(error(refusal) == "org.example.connection.TooManyConnections")
            #expect(parameters(refusal)["scope"] as? String == "user")
            #expect(try await third.readMessage() == nil)
            // Closing one makes room again.
            second = nil
            try await waitUntil { server.server.connectionCount == 1 }
            let fourth = try server.raw()
            try fourth.send(#"{"method":"org.example.test.Echo","parameters":{"text":"4"}}"#)
            #expect(parameters(try await fourth.readReply())["text"] as? String == "4")
            withExtendedLifetime((first, second)) {}
        }
    }

    /// Connections beyond the limits are kept for the peers the server says may use them, on
    /// its terms: their first call must be to a reserved interface (after asking for its
    /// description, if they like), within the probation; otherwise they get the refusal of the
    /// limit they are over. So whoever holds every ordinary connection, those peers get in.
    @Test func theReserveLetsInOnlyWhatItIsKeptFor() async throws {
        // Long enough for a loaded machine to send a first call within it (at 300 ms a
        // sanitized run on a busy machine did not), short enough to wait out twice.
        let probation = TimeAmount.seconds(Int64(RawConnection.slowdown))
        // One loop, whose timers fire in order (below).
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await withServer(
            group: group,
            {
                $0.maximumConnectionsPerUser = 1
                $0.reservedConnections = 1
                $0.reservedInterfaces = ["org.example.test"]
                $0.mayUseReserve = { _ in true }
                $0.reserveProbation = probation
            }
        ) { server in
            let echo = #"{"method":"org.example.test.Echo","parameters":{"text":"in"}}"#
            let holder = try server.raw()
            try holder.send(echo)
            #expect(parameters(try await holder.readReply())["text"] as? String == "in")

            // In the reserve: the description of a reserved interface, then a call to it, both
            // within the probation. The server cannot tell a peer this test's thread stalled
            // past the probation (a loaded machine) from one that broke the terms, so only an
            // attempt that made both calls in time by this test's own clock, which started
            // before the server's, decides the verdict; a late one is made again.
            var entered: RawConnection?
            for _ in 0..<5 where entered == nil {
                let started = ContinuousClock.now
                let attempt = try server.raw()
                let asked =
                    (try? attempt.send(
                        #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"org.example.test"}}"#)) != nil
                let described = asked ? try? await attempt.readReply() : nil
                let called = described != nil && (try? attempt.send(echo)) != nil
                guard called, ContinuousClock.now - started < .seconds(RawConnection.slowdown) else {
                    attempt.shutdownWrite()
                    _ = try? await attempt.readMessage()
                    try await waitUntil { server.server.connectionCount == 1 }
                    continue
                }
                #expect(error(described!) == nil)
                #expect(parameters(try await attempt.readReply())["text"] as? String == "in")
                entered = attempt
            }
            let reserved = try #require(entered, "no attempt made its calls within the probation")
            // The reserve is full: refused at once.
            let over = try server.raw()
            let refusal = try await over.readReply()
            #expect(error(refusal) == "org.example.connection.TooManyConnections")
            #expect(parameters(refusal)["scope"] as? String == "user")
            #expect(try await over.readMessage() == nil)
            // Having kept to the terms, it stays past the probation. The loop runs its timers
            // in the order of their deadlines: once a timer set on it now for the probation has
            // fired, so has the connection's (set when it was accepted, before).
            try await group.next().scheduleTask(in: probation) {}.futureResult.get()
            try reserved.send(echo)
            #expect(parameters(try await reserved.readReply())["text"] as? String == "in")
            // Its peer leaves: the server closes it once everything is answered.
            reserved.shutdownWrite()
            #expect(try await reserved.readMessage() == nil)
            try await waitUntil { server.server.connectionCount == 1 }

            // Another call first: the refusal, and the connection closes.
            let other = try server.raw()
            // Sent late (a stalled thread), it finds the connection refused for the probation
            // instead: the same refusal, and the send may fail on the closed socket.
            try? other.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            #expect(error(try await other.readReply()) == "org.example.connection.TooManyConnections")
            #expect(try await other.readMessage() == nil)
            try await waitUntil { server.server.connectionCount == 1 }
            // No call at all: the refusal once the probation is over, and the reserve is free again.
            let idle = try server.raw()
            #expect(error(try await idle.readReply()) == "org.example.connection.TooManyConnections")
            #expect(try await idle.readMessage() == nil)
            try await waitUntil { server.server.connectionCount == 1 }
            let again = try server.raw()
            try again.send(echo)
            #expect(parameters(try await again.readReply())["text"] as? String == "in")
            withExtendedLifetime(holder) {}
        }
        try await group.shutdownGracefully()
    }

    @Test func theReserveIsNotForPeersItIsNotKeptFor() async throws {
        try await withServer({
            $0.maximumConnectionsPerUser = 1
            $0.reservedInterfaces = ["org.example.test"]
            $0.mayUseReserve = { _ in false }
        }) { server in
            let holder = try server.raw()
            try holder.send(#"{"method":"org.example.test.Echo","parameters":{"text":"in"}}"#)
            _ = try await holder.readReply()
            let refused = try server.raw()
            #expect(error(try await refused.readReply()) == "org.example.connection.TooManyConnections")
            #expect(try await refused.readMessage() == nil)
            withExtendedLifetime(holder) {}
        }
    }

    @Test func aReaderThatNeverReadsIsCutOffAndOthersAreServed() async throws {
        try await withServer({ $0.maximumOutputBytes = 256 * 1024 }) { server in
            let stuck = try server.raw()
            try stuck.send(#"{"method":"org.example.test.Flood","parameters":{"n":20000},"more":true}"#)
            try await assertServing(server)
            try await waitUntil { server.server.connectionCount <= 1 }
            #expect(try await stuck.isClosedByPeer())
        }
    }

    /// A reply a call makes for another connection (a presenter's delta) goes out at once when
    /// that call came alone, rather than when the loop's turn ends; when the caller had sent
    /// more calls behind it, it waits to share a write with theirs. `Tell` with `hold` holds the
    /// loop after telling until the test lets it go: what went out at once is in the listener's
    /// socket while the loop is held, and what waits for the end of the turn is not.
    @Test func aLoneCallsReplyToAnotherConnectionGoesOutAtOnceAndABurstsWaits() async throws {
        // One loop, as islandd has: the connections must share it.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await withServer(group: group) { server in
            let hold = server.test.tellHold
            // A test that fails while the loop is held must not leave the server stuck.
            defer { hold.releaseAll() }
            let listener = try server.raw()
            try listener.send(#"{"method":"org.example.test.Listen","more":true}"#)
            try await waitUntil { server.test.listeners.count == 1 }
            let teller = try server.raw()

            try teller.send(#"{"method":"org.example.test.Tell","parameters":{"text":"lone","hold":true}}"#)
            await hold.begun()
            // Heard while the loop is still held: it was written before the turn ended.
            #expect(try await listener.readMessage()?.contains("lone") == true)
            #expect(try !teller.hasBytesWaiting(), "the teller's own reply comes after the hold")
            hold.release()
            let told = try await teller.readReply()
            #expect(told != nil && error(told) == nil)

            // The listener's last write is long enough ago that the quiet spell cannot be what
            // holds the burst's first back: only the call behind it can. (A lower bound: a
            // loaded machine only makes the spell longer.)
            try await Task.sleep(for: .milliseconds(50))
            try teller.send(
                Array(#"{"method":"org.example.test.Tell","parameters":{"text":"first","hold":true}}"#.utf8) + [0]
                    + Array(#"{"method":"org.example.test.Tell","parameters":{"text":"second","hold":false}}"#.utf8) + [0])
            await hold.begun()
            #expect(try !listener.hasBytesWaiting(), "the first of a burst waits while the loop is held")
            hold.release()
            #expect(try await listener.readMessage()?.contains("first") == true)
            #expect(try await listener.readMessage()?.contains("second") == true)
            for _ in 0..<2 {
                let told = try await teller.readReply()
                #expect(told != nil && error(told) == nil)
            }
        }
        try await group.shutdownGracefully()
    }

    @Test func shutdownDrainsCallsInProgressAndClosesEveryConnection() async throws {
        try await withServer { server in
            let idle = try server.raw()
            let busy = try server.raw()
            let streaming = try server.raw()
            try idle.send(#"{"method":"org.example.test.Echo","parameters":{"text":"x"}}"#)
            _ = try await idle.readReply()
            try streaming.send(#"{"method":"org.example.test.Forever","more":true}"#)
            _ = try await streaming.readReply()
            // One write, so the server reads both calls before it is told to stop; the first
            // is in progress until the test answers it, once the shutdown has reached the
            // connection.
            try busy.send(
                Array(#"{"method":"org.example.test.Hold","parameters":{"id":"busy"}}"#.utf8) + [0]
                    + Array(#"{"method":"org.example.test.Echo","parameters":{"text":"queued"}}"#.utf8) + [0])
            try await waitUntil { server.test.held.count == 1 }

            let stopping = Task { await server.stop() }
            // The server tells each connection (on its loop) before it stops listening: once
            // it refuses new connections, the answer below queues on the busy connection's
            // loop behind the news.
            try await waitUntil { (try? server.raw()) == nil }
            server.test.held.all[0].reply(["id": "busy"])
            await stopping.value

            let answered = try await busy.readReply()
            #expect(parameters(answered)["id"] as? String == "busy", "the call in progress is answered: \(String(describing: answered))")
            #expect(error(try await busy.readReply()) == "org.example.connection.ShuttingDown", "the queued one is refused")
            #expect(try await busy.readMessage() == nil)
            #expect(try await idle.readMessage() == nil)
            var last: String?
            while let message = try await streaming.readMessage() { last = message }
            #expect(last?.contains("org.example.connection.ShuttingDown") == true, "a stream learns why it ends: \(last ?? "nothing")")
            #expect(server.cancelled.count == 1, "the streaming handler learns its call ended")
            #expect(server.server.connectionCount == 0)
            #expect(throws: (any Error).self) { try RawConnection(path: server.path).send("{}") }
        }
    }
}
