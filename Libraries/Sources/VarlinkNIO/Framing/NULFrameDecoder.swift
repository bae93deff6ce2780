#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import NIOCore

/// Splits a byte stream into NUL-terminated Varlink messages (the NUL is dropped).
public struct NULFrameDecoder: ByteToMessageDecoder {
    /// A message, and whether the peer had already sent more behind it (bytes of the next
    /// message arrived with it): a server can tell a lone call from one of a pipelined burst.
    public struct Frame: Sendable, Equatable {
        /// Copied out of the read buffer: a call may wait in its connection's queue, and
        /// VarlinkCore, which decodes it, knows no `ByteBuffer`.
        public var bytes: [UInt8]
        public var moreBuffered: Bool

        public init(bytes: [UInt8], moreBuffered: Bool) {
            self.bytes = bytes
            self.moreBuffered = moreBuffered
        }
    }

    public typealias InboundOut = Frame

    /// A message grew past the limit before its NUL arrived.
    public struct MessageTooLarge: Error, Equatable { public var limit: Int }
    /// The stream ended in the middle of a message.
    public struct TruncatedMessage: Error, Equatable { public var bytes: Int }

    public let maximumMessageSize: Int
    /// How far the current message has already been searched, so a message arriving in
    /// many small reads is scanned once rather than once per read.
    private var scanned = 0

    public init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try nextFrame(in: &buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    /// Takes the next complete message from `buffer`, or nil when the rest of it is the start
    /// of one. The decoding itself, for a handler that frames what it reads without a
    /// `ByteToMessageHandler` in front of it (the server's connections).
    public mutating func nextFrame(in buffer: inout ByteBuffer) throws -> Frame? {
        // memchr, not a byte at a time: a call is a few hundred bytes, all of them searched.
        let nul: Int? = buffer.withUnsafeReadableBytes { [scanned] bytes in
            guard scanned < bytes.count, let base = bytes.baseAddress,
                let found = memchr(base + scanned, 0, bytes.count - scanned)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
        guard let length = nul else {
            scanned = buffer.readableBytes
            if scanned > maximumMessageSize { throw MessageTooLarge(limit: maximumMessageSize) }
            return nil
        }
        scanned = 0
        guard length <= maximumMessageSize else { throw MessageTooLarge(limit: maximumMessageSize) }
        // Copied from the readable bytes, then read past it and its NUL at once: `readBytes`
        // goes through `getBytes`' checks and a generic copy (~340 instructions a call, where
        // this is ~230; Benchmarks/profile.py).
        let frame = buffer.withUnsafeReadableBytes { Array(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
        buffer.moveReaderIndex(forwardBy: length + 1)
        return Frame(bytes: frame, moreBuffered: buffer.readableBytes > 0)
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            let bytes = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: bytes)
            throw TruncatedMessage(bytes: bytes)
        }
        return .needMoreData
    }
}
