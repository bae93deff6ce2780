import Glibc
import NIOCore
import NIOEmbedded
import Testing
import VarlinkCore
@testable import VarlinkNIO

@Suite struct FramingTests {
    @Test func splitsAMethodAtItsLastDot() {
        let cases: [(String, Substring, Substring)] = [
            ("org.example.test.Ping", "org.example.test", "Ping"), ("Ping", "", "Ping"), ("a.", "a", ""),
            (".Ping", "", "Ping"), ("caf\u{e9}.\u{301}x.M\u{e9}thod", "caf\u{e9}.\u{301}x", "M\u{e9}thod"),
        ]
        for (method, interface, member) in cases {
            let call = VarlinkCall(method: method)
            #expect(call.interfaceName == interface, "\(method)")
            #expect(call.methodName == member, "\(method)")
        }
    }

    @Test func splitsAcrossArbitraryReadBoundaries() throws {
        let frames = ["{\"method\":\"a.B\"}", "", "{\"x\":\"\u{e9}\"}"]
        let input: [UInt8] = Array(frames.map { Array($0.utf8) + [UInt8(0)] }.joined())
        // Every way of cutting the input into two reads, and one byte per read.
        var splits: [[[UInt8]]] = (0...input.count).map { [Array(input[..<$0]), Array(input[$0...])] }
        splits.append(input.map { [$0] })
        for reads in splits {
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 64)))
            var decoded: [String] = []
            for read in reads {
                try channel.writeInbound(ByteBuffer(bytes: read))
                while let frame = try channel.readInbound(as: NULFrameDecoder.Frame.self) {
                    decoded.append(String(decoding: frame.bytes, as: UTF8.self))
                }
            }
            #expect(decoded == frames, "read sizes: \(reads.map { $0.count })")
            #expect(try channel.finish().isClean)
        }
    }

    @Test func saysWhetherThePeerHadSentMoreBehindAMessage() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 64)))
        try channel.writeInbound(ByteBuffer(bytes: Array("a".utf8) + [0] + Array("b".utf8) + [0] + Array("c".utf8)))
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self) == .init(bytes: Array("a".utf8), moreBuffered: true))
        // The start of the next message counts: its sender is already sending it.
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self) == .init(bytes: Array("b".utf8), moreBuffered: true))
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self) == nil)
        try channel.writeInbound(ByteBuffer(bytes: [0]))
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self) == .init(bytes: Array("c".utf8), moreBuffered: false))
        #expect(try channel.finish().isClean)
    }

    @Test func refusesAMessageOverTheLimitBeforeItEnds() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 8)))
        #expect(throws: NULFrameDecoder.MessageTooLarge(limit: 8)) {
            try channel.writeInbound(ByteBuffer(string: "123456789"))
        }
    }

    @Test func refusesAMessageOverTheLimitThatEndsInTheSameRead() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 8)))
        try channel.writeInbound(ByteBuffer(bytes: Array("12345678".utf8) + [0]))
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self)?.bytes == Array("12345678".utf8))
        #expect(throws: NULFrameDecoder.MessageTooLarge(limit: 8)) {
            try channel.writeInbound(ByteBuffer(bytes: Array("123456789".utf8) + [0]))
        }
    }

    @Test func reportsATruncatedMessageAtEndOfStream() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 64)))
        try channel.writeInbound(ByteBuffer(bytes: Array("{}".utf8) + [0] + Array("{\"meth".utf8)))
        #expect(try channel.readInbound(as: NULFrameDecoder.Frame.self)?.bytes == Array("{}".utf8))
        #expect(throws: NULFrameDecoder.TruncatedMessage(bytes: 6)) { try channel.finish() }
    }
}

/// A server that stops with a client's call still unread resets the connection: whether the
/// client learns of it by a reset or by end of file is a race, and either way the call fails
/// as `connectionClosed` (ClientTests' `streamsEndWithShuttingDownAndLaterCallsFail` met the
/// reset about once in a few hundred runs).
@Suite struct ClientClosingTests {
    @Test(arguments: [ECONNRESET, EPIPE])
    func aResetIsAClosedConnection(errno: Int32) {
        let error = ClientConnectionHandler.asClosing(IOError(errnoCode: errno, reason: "read(descriptor:pointer:size:)"))
        #expect(error as? VarlinkClientError == .connectionClosed)
    }

    @Test func otherErrorsStayThemselves() {
        let error = ClientConnectionHandler.asClosing(IOError(errnoCode: EBADF, reason: "read"))
        #expect((error as? IOError)?.errnoCode == EBADF)
    }
}
