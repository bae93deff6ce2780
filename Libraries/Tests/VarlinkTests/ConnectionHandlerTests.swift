import OrderedJSON
import Logging
import NIOCore
import NIOEmbedded
import OrderedCollections
import Testing
import VarlinkCore
@testable import VarlinkNIO

/// The connection handler on an `EmbeddedChannel`: what it reads, writes and flushes, and
/// when it reads, for the steps its state machine takes.
@Suite struct ConnectionHandlerTests {
    /// The test service behind a handler on an embedded channel, with the channel's outbound
    /// events counted at the head of the pipeline.
    struct Connection {
        let channel = EmbeddedChannel()
        let events = OutboundEventCounter()
        let test = TestService()

        init(maximumMessageSize: Int = 1024, flushes: FlushCoalescer = FlushCoalescer()) throws {
            var configuration = VarlinkServer.Configuration()
            configuration.maximumMessageSize = maximumMessageSize
            // The loop's clock moves only when a test says so: the turn budget (5 ms) and the
            // quiet spell before an immediate flush never depend on how fast the machine is.
            // It starts well past the last flush a new connection counts from, as a real one does.
            let loop = channel.embeddedEventLoop
            loop.advanceTime(by: .seconds(1))
            let handler = VarlinkServerConnectionHandler(
                service: test.service, connection: VarlinkConnectionContext(id: 1, peer: nil), configuration: configuration,
                loopTurn: LoopTurn(), flushes: flushes, logger: Logger(label: "test"), clock: { loop.now })
            try channel.pipeline.syncOperations.addHandlers([events, handler])
            try channel.connect(to: SocketAddress(unixDomainSocketPath: "/varlink-test")).wait()
        }

        /// Calls from the peer, in one read.
        func receive(_ calls: String...) throws {
            try channel.writeInbound(ByteBuffer(bytes: calls.flatMap { Array($0.utf8) + [0] }))
        }

        /// What reached the socket since the last look: one element per buffer written, each
        /// split into its replies.
        func written() throws -> [[String]] {
            var buffers: [[String]] = []
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                guard !bytes.isEmpty else { continue }
                buffers.append(bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
            }
            return buffers
        }
    }

    /// Counts the flushes and reads that reach the head of the pipeline, the socket's side.
    /// An embedded channel runs on the test's thread, so plain counters do.
    final class OutboundEventCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        private(set) var flushCalls = 0
        private(set) var readCalls = 0

        func flush(context: ChannelHandlerContext) {
            flushCalls += 1
            context.flush()
        }

        func read(context: ChannelHandlerContext) {
            readCalls += 1
            context.read()
        }
    }

    static func echo(_ text: String) -> String {
        #"{"method":"org.example.test.Echo","parameters":{"text":"\#(text)"}}"#
    }

    static func hold(_ id: String, _ flags: String = "") -> String {
        #"{"method":"org.example.test.Hold","parameters":{"id":"\#(id)"}\#(flags)}"#
    }

    @Test func theRepliesToOneReadGoOutInOrderInOneWrite() throws {
        let connection = try Connection()
        try connection.receive(Self.echo("a"), Self.echo("b"), Self.echo("c"))
        #expect(
            try connection.written() == [
                [
                    #"{"parameters":{"text":"a"}}"#, #"{"parameters":{"text":"b"}}"#, #"{"parameters":{"text":"c"}}"#,
                ]
            ])
        #expect(connection.events.flushCalls == 1)
    }

    /// A reply made outside a read after a quiet spell goes to the socket at once; replies a
    /// later call's were waiting for go with it.
    @Test func aLoneReplyGoesAtOnce() async throws {
        let connection = try Connection()
        try connection.receive(Self.hold("a"))
        connection.test.held.all[0].releaseConnection()
        try connection.receive(Self.hold("b"))
        connection.test.held.all[1].reply(["id": "b"])
        #expect(try connection.written().isEmpty, "b's reply waits for a's")
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))  // a quiet spell
        connection.test.held.all[0].reply(["id": "a"])
        #expect(try connection.written() == [[#"{"parameters":{"id":"a"}}"#, #"{"parameters":{"id":"b"}}"#]])
    }

    /// The handler gathers the next replies in the buffer it last handed to the channel: a
    /// buffer the channel still holds, unwritten, is never written over (its bytes stay those
    /// of the reply it was handed with), and one the channel has let go is used again.
    @Test func theBufferOfRepliesHandedOverIsNotWrittenOver() throws {
        let connection = try Connection()
        try connection.receive(Self.hold("a", #","more":true"#))
        let loop = connection.channel.embeddedEventLoop
        // Each after a quiet spell, so each goes at once, in a buffer of its own. The embedded
        // channel keeps what was written until the test reads it: the first two are held.
        connection.test.held.all[0].reply(["id": "1"], continues: true)
        loop.advanceTime(by: .milliseconds(1))
        connection.test.held.all[0].reply(["id": "2"], continues: true)
        #expect(
            try connection.written() == [
                [#"{"parameters":{"id":"1"},"continues":true}"#], [#"{"parameters":{"id":"2"},"continues":true}"#],
            ])
        // Let go of by the channel now: the next reply may reuse the last one's memory.
        loop.advanceTime(by: .milliseconds(1))
        connection.test.held.all[0].reply(["id": "3"], continues: true)
        loop.advanceTime(by: .milliseconds(1))
        connection.test.held.all[0].reply(["id": "4"])
        #expect(
            try connection.written() == [
                [#"{"parameters":{"id":"3"},"continues":true}"#], [#"{"parameters":{"id":"4"}}"#],
            ])
    }

    /// Replies made outside a read without a quiet spell before wait for the end of the loop's
    /// tick, and go together.
    @Test func repliesInQuickSuccessionShareAFlushAtTheEndOfTheTick() throws {
        let connection = try Connection(flushes: FlushCoalescer(idleBeforeImmediateFlush: .nanoseconds(.max)))
        try connection.receive(Self.hold("a", #","more":true"#))
        connection.test.held.all[0].reply(["id": "1"], continues: true)
        connection.test.held.all[0].reply(["id": "2"], continues: true)
        let flushes = connection.events.flushCalls
        #expect(try connection.written().isEmpty)
        connection.channel.embeddedEventLoop.run()
        #expect(
            try connection.written() == [
                [
                    #"{"parameters":{"id":"1"},"continues":true}"#, #"{"parameters":{"id":"2"},"continues":true}"#,
                ]
            ])
        #expect(connection.events.flushCalls == flushes + 1)
    }

    /// While the peer reads none of its replies, its calls wait and reads stop; once it reads
    /// again, both resume.
    /// NIO completes the read that found the end of the input too, with nothing read, and
    /// half-closes the channel right after. That completion flushes at the end of the tick, not
    /// at once: a flush whose write failed there would close the channel inside NIO's
    /// half-close, which a debug build of SwiftNIO stops on (an assertion).
    @Test func theReadCompletionThatFindsTheEndOfTheInputFlushesAtTheEndOfTheTick() throws {
        let connection = try Connection(flushes: FlushCoalescer(idleBeforeImmediateFlush: .nanoseconds(.max)))
        try connection.receive(Self.hold("a", #","more":true"#))
        connection.test.held.all[0].reply(["id": "1"], continues: true)
        let flushes = connection.events.flushCalls
        connection.channel.pipeline.fireChannelReadComplete()
        #expect(connection.events.flushCalls == flushes, "nothing flushed inside NIO's handling of the end")
        #expect(try connection.written().isEmpty)
        connection.channel.embeddedEventLoop.run()
        #expect(try connection.written() == [[#"{"parameters":{"id":"1"},"continues":true}"#]])
    }

    @Test func aPeerThatDoesNotReadGetsNothingMoreDone() throws {
        let connection = try Connection()
        connection.channel.isWritable = false
        connection.channel.read()
        #expect(connection.events.readCalls == 0, "the read is held")
        try connection.receive(Self.echo("a"))
        #expect(try connection.written().isEmpty)
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try connection.written() == [[#"{"parameters":{"text":"a"}}"#]])
        #expect(connection.events.readCalls == 1, "the held read is passed on")
    }

    @Test func aQuiesceEventEndsStreamsRefusesQueuedCallsAndCloses() throws {
        let connection = try Connection()
        try connection.receive(#"{"method":"org.example.test.Listen","more":true}"#, Self.echo("queued"))
        #expect(try connection.written().isEmpty)
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        let shuttingDown = #"{"error":"org.example.connection.ShuttingDown","parameters":{}}"#
        #expect(try connection.written().flatMap { $0 } == [shuttingDown, shuttingDown])
        #expect(!connection.channel.isActive)
    }

    @Test func afterAHalfCloseEveryCallIsAnsweredThenTheConnectionCloses() throws {
        let connection = try Connection()
        try connection.receive(Self.hold("a"), Self.echo("b"))
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(connection.channel.isActive)
        connection.test.held.all[0].reply(["id": "a"])
        #expect(try connection.written().flatMap { $0 } == [#"{"parameters":{"id":"a"}}"#, #"{"parameters":{"text":"b"}}"#])
        #expect(!connection.channel.isActive)
    }

    @Test func anOversizedMessageIsRefusedAfterTheCallsBeforeIt() throws {
        let connection = try Connection(maximumMessageSize: 64)
        try connection.receive(Self.hold("a"))
        try connection.channel.writeInbound(ByteBuffer(repeating: UInt8(ascii: "x"), count: 100))
        #expect(try connection.written().isEmpty)
        connection.test.held.all[0].reply(["id": "a"])
        #expect(
            try connection.written().flatMap { $0 } == [
                #"{"parameters":{"id":"a"}}"#, #"{"error":"org.example.connection.MessageTooLarge","parameters":{"limit":64}}"#,
            ])
        #expect(!connection.channel.isActive)
    }

    @Test func aHandlerMayEndItsConnection() throws {
        let connection = try Connection()
        try connection.receive(Self.hold("a"))
        connection.test.held.all[0].fail(VarlinkError("org.example.test.Boom", ["why": "enough"]), closingConnection: true)
        #expect(try connection.written().flatMap { $0 } == [#"{"error":"org.example.test.Boom","parameters":{"why":"enough"}}"#])
        #expect(!connection.channel.isActive)
    }

    @Test func thePeerGoneItsOnewayCallsStillStart() throws {
        let connection = try Connection()
        try connection.receive(Self.hold("a"), Self.hold("b"), Self.hold("o", #","oneway":true"#))
        try connection.channel.close().wait()
        connection.test.held.all[0].reply(["id": "a"])
        #expect(connection.test.held.count == 2, "the call that wanted a reply is skipped, the oneway one starts")
        #expect(connection.test.held.calls[1].oneway)
        #expect(try connection.written().isEmpty)
    }
}
