import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing
@testable import Varlink

@Suite struct FramingTests {
    @Test func splitsAcrossArbitraryReadBoundaries() throws {
        let frames = ["{\"method\":\"a.B\"}", "", "{\"x\":\"\u{e9}\"}"]
        var input = ByteBuffer()
        for frame in frames {
            input.writeString(frame)
            input.writeInteger(UInt8(0))
        }
        // The verifier feeds every split of the input, byte by byte and in chunks.
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [(input, frames.map { ByteBuffer(string: $0) })],
            decoderFactory: { NULFrameDecoder(maximumMessageSize: 64) })
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
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "12345678"))
        #expect(throws: NULFrameDecoder.MessageTooLarge(limit: 8)) {
            try channel.writeInbound(ByteBuffer(bytes: Array("123456789".utf8) + [0]))
        }
    }

    @Test func reportsATruncatedMessageAtEndOfStream() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: 64)))
        try channel.writeInbound(ByteBuffer(bytes: Array("{}".utf8) + [0] + Array("{\"meth".utf8)))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "{}"))
        #expect(throws: NULFrameDecoder.TruncatedMessage(bytes: 6)) { try channel.finish() }
    }
}
