public import Logging
public import NIOCore
public import NIOPosix
import Synchronization
public import VarlinkCore

#if canImport(Glibc)
import Glibc
#endif

/// Serves a `VarlinkService` on Unix stream sockets with SwiftNIO.
public final class VarlinkServer: Sendable {
    public struct Configuration: Sendable {
        /// The largest message accepted, in bytes without the NUL. A larger one ends the
        /// connection, with the service's `MessageTooLarge` (`VarlinkConnectionErrors`).
        public var maximumMessageSize = 256 * 1024
        /// Calls read but not yet started on one connection; past it, reading pauses.
        public var maximumQueuedCalls = 64
        /// Bytes of calls read but not yet started on one connection; past it, reading pauses.
        public var maximumQueuedBytes = 1024 * 1024
        /// Reply bytes one connection may leave unread before it is closed.
        public var maximumOutputBytes = 16 * 1024 * 1024
        public var maximumConnections = 4096
        public var maximumConnectionsPerUser = 1024
        /// Connections kept beyond both limits for the peers `mayUseReserve` accepts, on the
        /// condition that they use `reservedInterfaces`: however many connections others hold,
        /// those peers (presenters, admins) still get in.
        public var reservedConnections = 16
        public var reservedInterfaces: Set<String> = []
        public var mayUseReserve: @Sendable (PeerCredentials) -> Bool = { _ in false }
        /// How long a connection in the reserve may take to make its first call there.
        public var reserveProbation: TimeAmount = .seconds(5)
        /// Permissions of a socket file the server creates itself.
        public var socketMode: mode_t = 0o600
        /// How long a graceful shutdown waits for calls in progress before closing anyway.
        public var shutdownGracePeriod: Duration = .seconds(5)

        public init() {}
    }

    private struct State {
        var listeners: [any Channel] = []
        var connections: [ObjectIdentifier: any Channel] = [:]
        var perUser: [UInt32: Int] = [:]
        /// Connections admitted in the reserve, still open.
        var reserved = 0
        /// One per event loop serving connections.
        var loopTurns: [ObjectIdentifier: NIOLoopBound<LoopTurn>] = [:]
        var nextConnectionID: UInt64 = 0
        var shuttingDown = false
    }

    public let service: VarlinkService
    public let configuration: Configuration
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())

    public init(
        service: VarlinkService, configuration: Configuration = Configuration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger = Logger(label: "varlink")
    ) {
        self.service = service
        self.configuration = configuration
        self.group = group
        self.logger = logger
    }

    /// Creates the socket at `path` (replacing a stale one) and serves it.
    public func bind(unixPath path: String) async throws {
        let channel = try await bootstrap().bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        guard chmod(path, configuration.socketMode) == 0 else {
            let error = errno
            try? await channel.close()
            throw IOError(errnoCode: error, reason: "chmod \(path)")
        }
        addListener(channel)
    }

    /// Serves an already listening socket, such as one passed by systemd socket activation.
    public func adopt(listeningSocket fd: Int32) async throws {
        let channel = try await bootstrap().withBoundSocket(fd).get()
        addListener(channel)
    }

    /// Connections currently open.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Stops accepting, lets every connection finish its call in progress (streaming calls
    /// are ended), answers queued calls with `ShuttingDown`, and closes everything. Calls
    /// still running after the grace period are cut off.
    public func shutdown() async {
        let (listeners, connections) = state.withLock { state in
            state.shuttingDown = true
            return (state.listeners, Array(state.connections.values))
        }
        // Connections hear of it first: `shuttingDown` already turns new ones away, and a call
        // queued behind one in progress must be refused, not started while listeners close.
        for connection in connections {
            connection.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        for listener in listeners { try? await listener.close() }
        let deadline = ContinuousClock.now + configuration.shutdownGracePeriod
        for connection in connections {
            let closed = connection.closeFuture
            let remaining = deadline - ContinuousClock.now
            if remaining > .zero {
                let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
                let timeout = connection.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                    connection.close(promise: nil)
                }
                try? await closed.get()
                timeout.cancel()
            } else {
                try? await connection.close()
            }
        }
    }

    private func addListener(_ channel: any Channel) {
        let accepted = state.withLock { state in
            guard !state.shuttingDown else { return false }
            state.listeners.append(channel)
            return true
        }
        if !accepted { channel.close(promise: nil) }
    }

    private func bootstrap() -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelInitializer { [logger] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPause(logger: logger))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { [self] channel in
                initialize(channel)
            }
    }

    private func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        Self.peerCredentials(of: channel).flatMap { [self] peer in initialize(channel, peer: peer) }
    }

    /// What a connection is let in as: within the limits, in the reserve (on the terms of
    /// the limit it is over), or not at all.
    private enum Admission {
        case admitted(UInt64)
        case reserved(UInt64, over: VarlinkConnectionErrors.Condition)
        case refused(VarlinkConnectionErrors.Condition)
    }

    private func admit(_ channel: any Channel, peer: PeerCredentials?) -> Admission {
        let first: Admission = state.withLock { state in
            if state.shuttingDown { return .refused(.shuttingDown) }
            if let condition = limitReached(in: state, peer: peer) { return .refused(condition) }
            state.nextConnectionID += 1
            add(channel, peer: peer, to: &state)
            return .admitted(state.nextConnectionID)
        }
        // Whether the peer may use the reserve is asked outside the lock: it may read /proc.
        guard case .refused(let overLimit) = first, overLimit != .shuttingDown, let peer,
            state.withLock({ $0.reserved < configuration.reservedConnections }),
            configuration.mayUseReserve(peer)
        else { return first }
        return state.withLock { state in
            guard state.reserved < configuration.reservedConnections else { return .refused(overLimit) }
            state.reserved += 1
            state.nextConnectionID += 1
            add(channel, peer: peer, to: &state)
            return .reserved(state.nextConnectionID, over: overLimit)
        }
    }

    private func limitReached(in state: State, peer: PeerCredentials?) -> VarlinkConnectionErrors.Condition? {
        if state.connections.count >= configuration.maximumConnections {
            return .tooManyConnections(limit: configuration.maximumConnections, scope: .total)
        }
        if let uid = peer?.uid, state.perUser[uid, default: 0] >= configuration.maximumConnectionsPerUser {
            return .tooManyConnections(limit: configuration.maximumConnectionsPerUser, scope: .user)
        }
        return nil
    }

    private func add(_ channel: any Channel, peer: PeerCredentials?, to state: inout State) {
        state.connections[ObjectIdentifier(channel)] = channel
        if let uid = peer?.uid { state.perUser[uid, default: 0] += 1 }
    }

    private func initialize(_ channel: any Channel, peer: PeerCredentials?) -> EventLoopFuture<Void> {
        let id: UInt64
        var overLimit: VarlinkConnectionErrors.Condition?
        switch admit(channel, peer: peer) {
        case .refused(let condition):
            logger.warning("refusing a connection", metadata: ["reason": "\(condition)", "peer_uid": "\(peer?.uid ?? 0)"])
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusingHandler(error: service.connectionErrors.error(for: condition)))
            }
        case .admitted(let value):
            id = value
        case .reserved(let value, let condition):
            id = value
            overLimit = condition
        }

        channel.closeFuture.whenComplete { [self, reserved = overLimit != nil] _ in
            state.withLock { state in
                state.connections[ObjectIdentifier(channel)] = nil
                if reserved { state.reserved -= 1 }
                if let uid = peer?.uid {
                    let count = state.perUser[uid, default: 1] - 1
                    state.perUser[uid] = count > 0 ? count : nil
                }
            }
        }

        let connection = VarlinkConnectionContext(id: id, peer: peer)
        let loop = channel.eventLoop
        let loopTurn = state.withLock { state in
            if let turn = state.loopTurns[ObjectIdentifier(loop)] { return turn }
            let turn = NIOLoopBound(LoopTurn(), eventLoop: loop)
            state.loopTurns[ObjectIdentifier(loop)] = turn
            return turn
        }
        return loop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                VarlinkServerConnectionHandler(
                    service: service, connection: connection, configuration: configuration,
                    loopTurn: loopTurn.value, reserve: overLimit, logger: logger))
        }
    }

    private struct UCred { var pid: Int32; var uid: UInt32; var gid: UInt32 }

    /// Reads `SO_PEERCRED`: the identity the kernel recorded when the peer connected.
    static func peerCredentials(of channel: any Channel) -> EventLoopFuture<PeerCredentials?> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        let future: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return future.map { Optional(PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid)) }.recover { _ in nil }
    }
}

/// Stops accepting for a while when `accept` fails for want of resources (EMFILE, ENFILE,
/// ENOBUFS, ENOMEM). The pending connection stays in the backlog and the socket stays
/// readable, and NIO, whose read of the listening socket is still pending after a failed
/// accept, retries at once: the loop would spin at full CPU while starving everyone else.
/// (NIO's AcceptBackoffHandler cannot stop that: it only delays the next read it is asked
/// for, and a failed first accept asks for none.) Pausing `autoRead` takes the socket out of
/// the loop's poll set until the pause is over.
private final class AcceptPause: ChannelInboundHandler {
    typealias InboundIn = Channel

    static let pause: TimeAmount = .seconds(1)
    private let logger: Logger
    private var paused = false

    init(logger: Logger) { self.logger = logger }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard !paused, let options = context.channel.syncOptions else { return }
        paused = true
        logger.warning(
            "cannot accept connections (out of descriptors or memory); pausing",
            metadata: [
                "error": "\(error)", "pause": "\(Self.pause)",
            ])
        try? options.setOption(.autoRead, value: false)
        let channel = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.pause) {
            handler.value.paused = false
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }
}

/// Tells a connection the server will not serve it (if the service names the reason), then
/// closes it.
private final class RefusingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let error: VarlinkError?

    init(error: VarlinkError?) { self.error = error }

    func channelActive(context: ChannelHandlerContext) {
        guard let error else {
            context.close(promise: nil)
            return
        }
        let frame = VarlinkReply(error: error).encoded() + [0]
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: frame))).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
