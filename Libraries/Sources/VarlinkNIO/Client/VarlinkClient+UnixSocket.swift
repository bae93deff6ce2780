#if canImport(Glibc)
import Glibc
#endif
public import NIOCore
public import NIOPosix
public import VarlinkCore

extension VarlinkClient {
    /// Connects to the socket at `path`.
    ///
    /// The connection is closed on `exec`: a program the client's process starts does not get
    /// it. A service knows a peer by the credentials of the process that connected, so a
    /// program holding an inherited connection could call as that process.
    public static func connect(
        unixPath path: String,
        maximumMessageSize: Int = 16 * 1024 * 1024,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> VarlinkClient {
        // SwiftNIO makes its sockets without close-on-exec, so the socket is made and
        // connected here, with it, and handed to NIO connected.
        let descriptor = try connectedUnixSocket(path)
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .withConnectedSocket(descriptor).get()
        let handler = try await channel.eventLoop.submit {
            let handler = ClientConnectionHandler()
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: maximumMessageSize)), handler,
            ])
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }.get()
        return VarlinkClient(transport: ChannelClientTransport(channel: channel, handler: handler))
    }
}

/// A stream socket connected to `path`, non-blocking and closed on `exec`. A connection a
/// Unix socket's full backlog refuses (`EAGAIN`) is an error like any refusal: the caller's
/// retry decides when to try again, as for a service that is not there.
private func connectedUnixSocket(_ path: String) throws -> CInt {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    // An empty path would name an abstract address of zeros, not a file.
    guard !bytes.isEmpty else { throw IOError(errnoCode: ENOENT, reason: "connect to an empty path") }
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw IOError(errnoCode: ENAMETOOLONG, reason: "connect to \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
    // A Unix socket's connect completes or fails at once, also non-blocking.
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let code = errno
        close(descriptor)
        throw IOError(errnoCode: code, reason: "connect to \(path)")
    }
    return descriptor
}

/// A client's calls on a channel: written in order on its event loop, where the handler
/// matches the replies to them.
private struct ChannelClientTransport: VarlinkClientTransport {
    let channel: any Channel
    let handler: NIOLoopBound<ClientConnectionHandler>

    func send(_ message: [UInt8], awaiting: PendingReplies.Awaiting?, written: CheckedContinuation<Void, any Error>?) {
        channel.eventLoop.execute { [channel, handler] in
            guard channel.isActive else {
                awaiting?.fail(VarlinkClientError.connectionClosed)
                written?.resume(throwing: VarlinkClientError.connectionClosed)
                return
            }
            if let awaiting { handler.value.replies.expect(awaiting) }
            var frame = channel.allocator.buffer(capacity: message.count + 1)
            frame.writeBytes(message)
            frame.writeInteger(UInt8(0))
            let promise = written.map { written in
                let promise = channel.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { written.resume(with: $0.mapError(ClientConnectionHandler.asClosing)) }
                return promise
            }
            channel.writeAndFlush(frame, promise: promise)
        }
    }

    func close() async {
        try? await channel.close()
    }
}

final class ClientConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = NULFrameDecoder.Frame

    var replies = PendingReplies()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        do {
            try replies.receive(unwrapInboundIn(data).bytes)
        } catch {
            replies.failAll(error)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        replies.failAll(Self.asClosing(error))
        context.close(promise: nil)
    }

    /// A connection the server closed is `connectionClosed` however the client learns of it: a
    /// frame cut short, or, when the server closed with our call still unread (it stopped while
    /// the call was on its way), a reset on the next read or write.
    static func asClosing(_ error: any Error) -> any Error {
        if error is NULFrameDecoder.TruncatedMessage { return VarlinkClientError.connectionClosed }
        if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
            return VarlinkClientError.connectionClosed
        }
        return error
    }

    func channelInactive(context: ChannelHandlerContext) {
        replies.failAll(VarlinkClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            replies.failAll(VarlinkClientError.connectionClosed)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
