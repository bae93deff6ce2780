public import NIOCore
public import NIOPosix
public import VarlinkCore

extension VarlinkClient {
    /// Connects to the socket at `path`.
    public static func connect(
        unixPath path: String,
        maximumMessageSize: Int = 16 * 1024 * 1024,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> VarlinkClient {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path).get()
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
