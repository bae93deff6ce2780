import DequeModule
import IslandJSON
import NIOCore
import NIOPosix

/// Why a client call did not get an answer.
public enum VarlinkClientError: Error, Sendable, Equatable {
    /// The connection closed before the call's final reply.
    case connectionClosed
    /// The server sent something that is not a Varlink reply.
    case invalidReply(String)
}

/// A Varlink client on one Unix-socket connection. Calls may be issued concurrently; they
/// are pipelined on the connection and their replies matched in order.
public final class VarlinkClient: Sendable {
    private let channel: Channel
    private let handler: NIOLoopBound<VarlinkClientHandler>

    private init(channel: Channel, handler: NIOLoopBound<VarlinkClientHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Connects to the socket at `path`.
    public static func connect(
        unixPath path: String,
        maximumMessageSize: Int = 16 * 1024 * 1024,
        group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> VarlinkClient {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path).get()
        let handler = try await channel.eventLoop.submit {
            let handler = VarlinkClientHandler()
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: maximumMessageSize)), handler,
            ])
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }.get()
        return VarlinkClient(channel: channel, handler: handler)
    }

    /// Calls `method` and returns the parameters of its reply; an error reply throws
    /// `VarlinkError`.
    public func call(_ method: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        let call = VarlinkCall(method: method, parameters: parameters)
        let promise = channel.eventLoop.makePromise(of: VarlinkReply.self)
        send(call, awaiting: .single(promise))
        let reply = try await promise.futureResult.get()
        if let error = reply.error { throw VarlinkError(error, reply.parameters) }
        return reply.parameters
    }

    /// Calls `method` with `more` and yields each reply's parameters until one arrives
    /// without `continues`; an error reply ends the stream by throwing `VarlinkError`.
    public func stream(_ method: String, _ parameters: JSONObject = [:]) -> AsyncThrowingStream<JSONObject, Error> {
        let (stream, continuation) = AsyncThrowingStream<JSONObject, Error>.makeStream()
        send(VarlinkCall(method: method, parameters: parameters, more: true), awaiting: .stream(continuation))
        return stream
    }

    /// Sends a `oneway` call; the server answers nothing. Returns once it is written.
    public func oneway(_ method: String, _ parameters: JSONObject = [:]) async throws {
        let call = VarlinkCall(method: method, parameters: parameters, oneway: true)
        let written = channel.eventLoop.makePromise(of: Void.self)
        send(call, awaiting: nil, written: written)
        try await written.futureResult.get()
    }

    /// Sends a raw call, for callers that need its flags exactly as given.
    public func send(raw call: VarlinkCall) async throws -> JSONObject {
        let promise = channel.eventLoop.makePromise(of: VarlinkReply.self)
        send(call, awaiting: call.oneway ? nil : .single(promise))
        if call.oneway { return [:] }
        let reply = try await promise.futureResult.get()
        if let error = reply.error { throw VarlinkError(error, reply.parameters) }
        return reply.parameters
    }

    public func close() async {
        try? await channel.close()
    }

    private func send(_ call: VarlinkCall, awaiting pending: VarlinkClientHandler.Pending?, written: EventLoopPromise<Void>? = nil) {
        let frame = call.encoded() + [0]
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute {
            guard channel.isActive else {
                pending?.fail(VarlinkClientError.connectionClosed)
                written?.fail(VarlinkClientError.connectionClosed)
                return
            }
            if let pending { handler.value.pending.append(pending) }
            channel.writeAndFlush(ByteBuffer(bytes: frame), promise: written)
        }
    }
}

final class VarlinkClientHandler: ChannelInboundHandler {
    typealias InboundIn = NULFrameDecoder.Frame

    enum Pending {
        case single(EventLoopPromise<VarlinkReply>)
        case stream(AsyncThrowingStream<JSONObject, Error>.Continuation)

        func fail(_ error: Error) {
            switch self {
            case .single(let promise): promise.fail(error)
            case .stream(let continuation): continuation.finish(throwing: error)
            }
        }
    }

    var pending = Deque<Pending>()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data).bytes
        let reply: VarlinkReply
        do {
            reply = try VarlinkReply(frame: frame.readableBytesView)
        } catch {
            failAll(VarlinkClientError.invalidReply(error.reason))
            context.close(promise: nil)
            return
        }
        guard let head = pending.first else {
            failAll(VarlinkClientError.invalidReply("a reply arrived for no call"))
            context.close(promise: nil)
            return
        }
        switch head {
        case .single(let promise):
            pending.removeFirst()
            promise.succeed(reply)
        case .stream(let continuation):
            if let error = reply.error {
                pending.removeFirst()
                continuation.finish(throwing: VarlinkError(error, reply.parameters))
            } else {
                continuation.yield(reply.parameters)
                if !reply.continues {
                    pending.removeFirst()
                    continuation.finish()
                }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        failAll(error is NULFrameDecoder.TruncatedMessage ? VarlinkClientError.connectionClosed : error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(VarlinkClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            failAll(VarlinkClientError.connectionClosed)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func failAll(_ error: Error) {
        while let next = pending.popFirst() { next.fail(error) }
    }
}
