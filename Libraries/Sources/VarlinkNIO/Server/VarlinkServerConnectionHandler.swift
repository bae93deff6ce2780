import Logging
import NIOCore
import Synchronization
import VarlinkCore

/// Serves one Varlink connection on a channel: carries out the steps of its
/// `ServerConnectionStateMachine` (which decides the order of calls and replies), and adds
/// what is the channel's own — backpressure from its writability, the loop's turns
/// (`TurnBudget`), coalesced flushes (`FlushCoalescer`), the bound on unread output, and the
/// reserve's probation timer. Reads bytes, which it splits into calls itself (`NULFrameDecoder`,
/// without a `ByteToMessageHandler`: its per-frame hand-over through the pipeline cost a tenth
/// of what the loop spends on a call outside the service), and writes replies as bytes.
final class VarlinkServerConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: VarlinkService
    private let connection: VarlinkConnectionContext
    /// Reply bytes the peer may leave unread before the connection is closed.
    private let maximumOutputBytes: Int
    private let logger: Logger
    private let loopTurn: LoopTurn
    /// How long a connection in the reserve has to keep to its terms.
    private let probationTime: TimeAmount?
    /// What time it is, for the turn budget and the flush coalescer: the loop's clock, or a
    /// test's own (one that moves only when the test says so).
    private let clock: () -> NIODeadline

    // The state below is touched only on the channel's event loop, and never while a mutation
    // of it is under way: the state machine, the budget and the coalescer are values that
    // return what to do rather than call out. Swift still checks every access to a class's
    // stored property at run time; here the checks could never fire, and they cost 3% of the
    // loop's instructions per update with 8 presenters (Benchmarks/profile.py).
    @exclusivity(unchecked) private var machine: ServerConnectionStateMachine
    @exclusivity(unchecked) private var budget = TurnBudget()
    @exclusivity(unchecked) private var flushes: FlushCoalescer
    /// Replies written since the last flush, framed back to back: a burst of them (a
    /// producer's pipelined calls, a presenter's deltas) goes down the pipeline, and to the
    /// socket, as one buffer instead of one per reply.
    @exclusivity(unchecked) private var output: ByteBuffer?
    /// The last buffer handed to the channel, kept to gather the next replies in: once the
    /// channel has written it and let it go, `clear()` finds it uniquely held and reuses its
    /// memory, where a new buffer cost an allocation and, once written, a free — ~700
    /// instructions for a lone delta (Benchmarks/profile.py --paced). While the channel still
    /// holds it, `clear()` allocates a new one, as before: it is a value, and its bytes
    /// handed over are never written again.
    @exclusivity(unchecked) private var spare: ByteBuffer?
    /// A handler called from `advance` is running on the loop: what it causes is taken up by
    /// that same loop rather than started again from inside it.
    fileprivate private(set) var isDispatching = false
    private var budgetRefill: Scheduled<Void>?
    private var probation: Scheduled<Void>?

    /// Read by every reply written (set as the handler is added and removed): unchecked too.
    @exclusivity(unchecked) private var context: ChannelHandlerContext?
    private var channel: (any Channel)?
    /// Replies handed to the loop with `execute` and not yet delivered, from any thread.
    fileprivate let handOffs = HandOffCount()
    /// What the sinks of this connection's calls share (`ReplyTarget`), kept while the handler
    /// is in the pipeline. It holds the handler: removed, the handler lets it go, and a call
    /// started after that (a gone peer's queued calls) gets one of its own.
    @exclusivity(unchecked) private var replyTarget: ReplyTarget?
    @exclusivity(unchecked) private var framer: NULFrameDecoder
    /// The start of a call a read ended in, until the rest of it comes.
    @exclusivity(unchecked) private var unframed: ByteBuffer?
    /// The input broke (a call over the limit): nothing more of it is read.
    private var inputBroken = false
    /// Bytes were read since the last read completed. NIO also completes the read that found
    /// only the end of the input (see `channelReadComplete`).
    private var readSinceCompletion = false

    /// - Parameter reserve: for a connection admitted in the server's reserve, the limit it is
    ///   over; it must keep to the reserve's terms (`VarlinkServer.Configuration`).
    init(
        service: VarlinkService, connection: VarlinkConnectionContext, configuration: VarlinkServer.Configuration,
        loopTurn: LoopTurn, reserve overLimit: VarlinkConnectionErrors.Condition? = nil,
        flushes: FlushCoalescer = FlushCoalescer(), logger: Logger, clock: @escaping () -> NIODeadline = { .now() }
    ) {
        self.service = service
        self.clock = clock
        self.connection = connection
        self.maximumOutputBytes = configuration.maximumOutputBytes
        self.loopTurn = loopTurn
        self.probationTime = overLimit == nil ? nil : configuration.reserveProbation
        self.flushes = flushes
        self.logger = logger
        self.framer = NULFrameDecoder(maximumMessageSize: configuration.maximumMessageSize)
        self.machine = ServerConnectionStateMachine(
            maximumQueuedCalls: configuration.maximumQueuedCalls, maximumQueuedBytes: configuration.maximumQueuedBytes,
            errors: service.connectionErrors, callReader: service.callReader,
            reserve: overLimit.map { ($0, configuration.reservedInterfaces) })
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.channel = context.channel
        if let probationTime {
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            probation = context.eventLoop.scheduleTask(in: probationTime) {
                handler.value.machine.probationExpired()
                handler.value.advance()
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.spare = nil
        self.replyTarget = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readSinceCompletion = true
        guard !inputBroken else { return }
        var buffer = unwrapInboundIn(data)
        if var unframed = unframed.take() {
            unframed.writeBuffer(&buffer)
            buffer = unframed
        }
        flushes.readStarted()
        do {
            while let frame = try framer.nextFrame(in: &buffer) {
                machine.frameReceived(frame.bytes, moreBuffered: frame.moreBuffered)
                advance()
            }
        } catch let tooLarge as NULFrameDecoder.MessageTooLarge {
            inputBroken = true
            machine.inputFailed(.messageTooLarge(limit: tooLarge.limit))
            advance()
            return
        } catch {
            preconditionFailure("framing throws nothing else: \(error)")
        }
        if buffer.readableBytes > 0 { unframed = buffer }
    }

    /// The input ended (the peer closed or half-closed): a call it ended inside of is refused.
    private func inputEnded() {
        guard !inputBroken, let unframed = unframed.take(), unframed.readableBytes > 0 else { return }
        inputBroken = true
        machine.inputFailed(
            .invalidMessage(
                reason: "the connection ended inside a message (\(unframed.readableBytes) bytes without a NUL)"))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard readSinceCompletion else {
            // The read that found the end of the input: NIO half-closes the channel once this
            // returns. A flush from here whose write fails (the peer is gone) would close the
            // channel first, inside NIO's handling of the end, and SwiftNIO (2.101) asserts
            // that a channel it half-closes is still registered: a debug build stops there.
            // What the completion does waits for the end of the tick, after the half-close.
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute { handler.value.readCompleted() }
            return
        }
        readSinceCompletion = false
        readCompleted()
    }

    /// A read is over: its calls' replies are flushed, and a spent turn budget comes back.
    private func readCompleted() {
        flushes.readCompleted()
        if budget.readCompleted() {
            budgetRefill?.cancel()
            budgetRefill = nil
            advance()
        }
        flush(at: clock())
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The socket itself failed (reset, broken pipe): nobody is left to answer.
        guard machine.lifecycle != .closed else { return }
        logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as ChannelEvent where event == .inputClosed:
            // The peer half-closed after its last call: answer everything, then close.
            inputEnded()
            machine.inputClosed()
            advance()
        case is ChannelShouldQuiesceEvent:
            // The server is shutting down (see `VarlinkServer.shutdown`).
            for callback in machine.quiesce() { callback() }
            advance()
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inputEnded()
        budgetRefill?.cancel()
        budgetRefill = nil
        probation?.cancel()
        probation = nil
        for callback in machine.peerClosed() { callback() }
        connection.markClosed()
        advance()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Calls wait while the peer is not reading; it may be reading again.
        advance()
        context.fireChannelWritabilityChanged()
    }

    // MARK: Outbound

    func read(context: ChannelHandlerContext) {
        if machine.readRequested(peerKeepsUp: context.channel.isWritable) { context.read() }
    }

    // MARK: Steps

    /// Carries out the state machine's steps until it waits, then flushes what they wrote, or
    /// has it flushed soon.
    private func advance() {
        guard !isDispatching else { return }
        isDispatching = true
        defer {
            isDispatching = false
            requestFlush()
        }
        while true {
            switch machine.nextStep(budgetLeft: budget.hasCalls, peerKeepsUp: context?.channel.isWritable ?? false) {
            case .start(let call, let serial, let callsFollow):
                if machine.lifecycle != .peerGone { spendBudget() }
                let outer = loopTurn.callsFollow
                loopTurn.callsFollow = callsFollow
                service.dispatch(call, connection: connection, sink: ChannelReplySink(target: replies, serial: serial))
                loopTurn.callsFollow = outer
            case .write(let reply):
                write(reply)
            case .closeWhenWritten:
                closeWhenWritten()
                return
            case .read:
                context?.read()
                return
            case .wait:
                return
            }
        }
    }

    /// The target of a call's replies: the one kept, or while the handler is in the pipeline
    /// one made and kept.
    private var replies: ReplyTarget {
        if let replyTarget { return replyTarget }
        let target = ReplyTarget(handler: self, channel: channel!, handOffs: handOffs)
        if context != nil { replyTarget = target }
        return target
    }

    private func spendBudget() {
        guard let pause = budget.spend(now: clock()), let context else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        budgetRefill = context.eventLoop.scheduleTask(in: pause) {
            handler.value.budgetRefill = nil
            handler.value.budget.refill()
            handler.value.advance()
        }
    }

    /// A reply from a handler, on the event loop.
    fileprivate func deliver(_ reply: VarlinkReply, final: Bool, serial: UInt64) {
        if machine.replyArrived(reply, final: final, serial: serial) { write(reply) }
        guard !isDispatching else { return }
        if final {
            advance()
        } else {
            // A stream's reply starts nothing and frees nothing: it only needs to go out.
            requestFlush()
        }
    }

    /// The handler of `serial` has made its decision: the next call may start.
    fileprivate func release(serial: UInt64) {
        if machine.release(serial: serial), !isDispatching { advance() }
    }

    fileprivate func onCancel(serial: UInt64, _ callback: @escaping @Sendable () -> Void) {
        if !machine.onCancel(serial: serial, callback) { callback() }
    }

    /// A handler ends the connection (a stream that could not keep within its bounds): what
    /// was written goes out, nothing more is read or started.
    fileprivate func closeAfterWrites() {
        guard let callbacks = machine.closeAfterWrites() else { return }
        for callback in callbacks { callback() }
        closeWhenWritten()
    }

    // MARK: Output

    /// Room for a burst of replies (64 pipelined replies of an update are ~45 KiB): a reply
    /// that does not fit sends what is gathered to the channel first, so that its count of
    /// unwritten bytes (the output limit) sees them. Starting smaller and growing cost more in
    /// copies than it saved in memory.
    private static let outputCapacity = 16 * 1024
    /// What a reply's encoded parameters go between.
    private static let replyHead: StaticString = #"{"parameters":"#
    private static func replyTail(continues: Bool) -> StaticString {
        continues ? ",\"continues\":true}\0" : "}\0"
    }
    private static func raw(_ string: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: string.utf8Start, count: string.utf8CodeUnitCount)
    }

    private func write(_ reply: VarlinkReply) {
        guard let context else { return }
        let encoded = reply.encodedParameters
        if let encoded, encoded.isShared {
            // Too large to copy for every connection it goes to: sent from the shared buffer.
            pushOutput(context)
            let allocator = context.channel.allocator
            context.write(wrapOutboundOut(allocator.buffer(staticString: Self.replyHead)), promise: nil)
            context.write(wrapOutboundOut(encoded.shared(as: { ByteBuffer(bytes: $0) })), promise: nil)
            context.write(wrapOutboundOut(allocator.buffer(staticString: Self.replyTail(continues: reply.continues))), promise: nil)
            flushes.wrote()
            closeIfOverLimit(context)
            return
        }
        if let encoded {
            // Head, parameters and tail copied into room made once: each `writeBytes` checks
            // the buffer's capacity and slices its source again, which cost a reply more than
            // its copies (Benchmarks/profile.py), and a delta is written once per presenter.
            let head = Self.raw(Self.replyHead)
            let tail = Self.raw(Self.replyTail(continues: reply.continues))
            encoded.bytes.withUnsafeBytes { parameters in
                let count = head.count + parameters.count + tail.count
                guard var out = outputBuffer(room: count, context) else { return }
                out.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { room in
                    room.copyMemory(from: head)
                    UnsafeMutableRawBufferPointer(rebasing: room[head.count...]).copyMemory(from: parameters)
                    UnsafeMutableRawBufferPointer(rebasing: room[(head.count + parameters.count)...]).copyMemory(from: tail)
                    return count
                }
                output = out
            }
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(128)
            reply.encode(into: &bytes)
            bytes.append(0)
            guard var out = outputBuffer(room: bytes.count, context) else { return }
            out.writeBytes(bytes)
            output = out
        }
        // No buffer: the connection was closed for being over its output limit.
        guard let gathered = output?.readableBytes else { return }
        flushes.wrote()
        if gathered >= Self.outputCapacity {
            pushOutput(context)
            closeIfOverLimit(context)
        }
    }

    /// The buffer the replies gather in, taken out of `output` (written through a local and
    /// put back, so that it stays uniquely held and the property is accessed twice rather
    /// than at every write), with room for `room` bytes more. When they do not fit, what is
    /// gathered goes to the channel first and a new buffer takes the reply: growing the
    /// buffer moved it, ~16 KiB copied and ~20,000 instructions for every reply that found
    /// it almost full (one update in twenty, Benchmarks/profile.py). Nil when the connection
    /// was closed for being over its output limit as that went.
    private func outputBuffer(room: Int, _ context: ChannelHandlerContext) -> ByteBuffer? {
        if let out = output.take() {
            if out.writableBytes >= room || out.readableBytes == 0 { return out }
            context.write(wrapOutboundOut(out), promise: nil)
            closeIfOverLimit(context)
            guard machine.lifecycle != .closed else { return nil }
        }
        if var buffer = spare.take(), buffer.capacity >= room {
            buffer.clear()
            return buffer
        }
        return context.channel.allocator.buffer(capacity: max(Self.outputCapacity, room))
    }

    /// Hands the replies gathered so far to the channel, which counts them against its
    /// high-water mark from then on.
    private func pushOutput(_ context: ChannelHandlerContext) {
        guard let buffer = takeOutput() else { return }
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// The replies gathered, to hand to the channel; their buffer is kept as the spare.
    private func takeOutput() -> ByteBuffer? {
        guard let buffer = output.take() else { return nil }
        // Only a buffer of the usual size is kept: one made for a larger reply is let go.
        if buffer.capacity <= Self.outputCapacity { spare = buffer }
        return buffer
    }

    private func closeIfOverLimit(_ context: ChannelHandlerContext) {
        // NIO counts what waits for the socket and turns the channel unwritable past its
        // high-water mark, far below the limit: only then is the count worth asking for.
        guard !context.channel.isWritable,
            let buffered = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes),
            buffered > maximumOutputBytes
        else { return }
        // The peer stopped reading; keeping its replies would let it hold our memory.
        logger.notice(
            "closing a connection whose unread replies exceed the limit",
            metadata: [
                "limit": "\(maximumOutputBytes)", "peer_pid": "\(connection.peer?.pid ?? 0)",
            ])
        (output, spare) = (nil, nil)
        for callback in machine.close() { callback() }
        context.close(promise: nil)
    }

    /// Flushes at once after a pause, otherwise once the loop has run the tasks queued so far
    /// (see `FlushCoalescer`). Reads flush on completion.
    private func requestFlush() {
        guard let context else { return }
        switch flushes.repliesMade(callsFollow: loopTurn.callsFollow, now: clock()) {
        case .none:
            break
        case .now:
            writeOut(context)
        case .atEndOfTick:
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute {
                handler.value.flushes.endOfTick()
                handler.value.flush(at: handler.value.clock())
            }
        }
    }

    private func flush(at now: @autoclosure () -> NIODeadline) {
        guard let context, flushes.flush(at: now()) else { return }
        writeOut(context)
    }

    private func writeOut(_ context: ChannelHandlerContext) {
        guard machine.lifecycle != .closed else {
            // Closed: handed over, never flushed.
            pushOutput(context)
            closeIfOverLimit(context)
            return
        }
        guard let buffer = takeOutput() else {
            closeIfOverLimit(context)
            guard machine.lifecycle != .closed else { return }
            context.flush()
            return
        }
        // Written and flushed in one pass down the pipeline, where a write and then a flush
        // went down it twice (a lone delta's, ~150 instructions). The output limit is checked
        // after: what the flush could not write is what counts against it.
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        closeIfOverLimit(context)
    }

    private func closeWhenWritten() {
        guard let context else { return }
        _ = flushes.flush(at: clock())
        pushOutput(context)
        // Writes complete in order: once this empty one has, everything before it is written.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: written)
        let channel = context.channel
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}

/// How many of a connection's replies wait in the loop's task queue.
final class HandOffCount: Sendable {
    private let count = Atomic<Int>(0)
    var isZero: Bool { count.load(ordering: .acquiring) == 0 }
    func add() { count.add(1, ordering: .releasing) }
    func remove() { count.subtract(1, ordering: .releasing) }
}

/// What the connections sharing an event loop know of each other; touched only on that loop.
final class LoopTurn {
    /// The call being started has more calls of its connection right behind it: the replies it
    /// makes to other connections (presenters' deltas) wait to share a write with theirs.
    var callsFollow = false
}

/// What the reply sinks of one connection's calls share: its handler, bound to the channel's
/// loop, the channel, and the count of replies handed over. A sink is then this and its
/// call's serial, two words, which an existential holds inline: a sink holding all four was
/// boxed (an allocation) for every call, and its four references retained and released one
/// by one, on every update (Benchmarks/profile.py).
private final class ReplyTarget: Sendable {
    let handler: NIOLoopBound<VarlinkServerConnectionHandler>
    let channel: any Channel
    let handOffs: HandOffCount

    init(handler: VarlinkServerConnectionHandler, channel: any Channel, handOffs: HandOffCount) {
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.channel = channel
        self.handOffs = handOffs
    }
}

/// Routes a handler's replies, from whatever thread it runs on, to its connection's loop.
private struct ChannelReplySink: VarlinkReplySink {
    let target: ReplyTarget
    let serial: UInt64
    private var handler: NIOLoopBound<VarlinkServerConnectionHandler> { target.handler }
    private var handOffs: HandOffCount { target.handOffs }
    /// The channel's loop, as the handler's binding keeps it: asking the channel is a call
    /// through `Channel`, made for every reply.
    var eventLoop: any EventLoop { target.handler.eventLoop }

    /// `Channel.isWritable` is safe to read from any thread.
    var isWritable: Bool { target.channel.isWritable && target.channel.isActive }

    func send(_ reply: VarlinkReply, final: Bool) {
        if let handler = handlerTakingRepliesNow {
            handler.deliver(reply, final: final, serial: serial)
        } else {
            handOff { [serial] handler in handler.deliver(reply, final: final, serial: serial) }
        }
    }

    func send(continuing replies: [VarlinkReply]) {
        deliverInOrder { [serial] handler in
            for reply in replies { handler.deliver(reply, final: false, serial: serial) }
        }
    }

    /// Replies of one call must reach the handler in the order they were sent. On the loop,
    /// with none of the connection's replies waiting in the loop's queue, a reply is first in
    /// line and is delivered at once — a presenter's delta while a producer's call is decided,
    /// a producer's reply as its commit completes — saving a task per reply. Anything else
    /// queues behind the replies already handed over with `execute`.
    private func deliverInOrder(_ body: @escaping @Sendable (VarlinkServerConnectionHandler) -> Void) {
        if let handler = handlerTakingRepliesNow {
            body(handler)
        } else {
            handOff(body)
        }
    }

    /// The handler, if a reply can be delivered to it at once (see `deliverInOrder`). Taken
    /// out of its binding once: each `value` checks again that this is the loop.
    private var handlerTakingRepliesNow: VarlinkServerConnectionHandler? {
        guard eventLoop.inEventLoop else { return nil }
        let handler = handler.value
        return handler.isDispatching || handOffs.isZero ? handler : nil
    }

    private func handOff(_ body: @escaping @Sendable (VarlinkServerConnectionHandler) -> Void) {
        handOffs.add()
        eventLoop.execute { [handler, handOffs] in
            body(handler.value)
            handOffs.remove()
        }
    }

    func onCancel(_ callback: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop {
            handler.value.onCancel(serial: serial, callback)
        } else {
            eventLoop.execute { [handler, serial] in handler.value.onCancel(serial: serial, callback) }
        }
    }

    func closeConnection() {
        // After the replies already handed over, which it must not overtake.
        deliverInOrder { handler in handler.closeAfterWrites() }
    }

    func releaseConnection() {
        if eventLoop.inEventLoop {
            handler.value.release(serial: serial)
        } else {
            eventLoop.execute { [handler, serial] in handler.value.release(serial: serial) }
        }
    }
}
