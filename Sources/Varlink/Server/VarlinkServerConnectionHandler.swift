import DequeModule
import IslandJSON
import Logging
import NIOCore
import Synchronization

/// Serves one Varlink connection: takes NUL-split frames, runs their calls one at a time
/// in arrival order, and writes the replies.
///
/// Ordering is structural: the next call starts only after the previous one has had its
/// final reply — or, for a handler that says its decision is made (`releaseConnection`),
/// right after that, with its replies held back until the calls before it are answered. So
/// pipelined calls are always answered in order, and a handler that only waits for
/// durability does not make the calls behind it wait too. Backpressure is structural: reads stop
/// while too many calls are queued or while the peer is not reading its replies, and a
/// connection whose unread replies outgrow `maximumOutputBytes` is closed.
final class VarlinkServerConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = NULFrameDecoder.Frame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Limits {
        var maximumMessageSize: Int
        var maximumQueuedCalls: Int
        /// Reads stop while this many bytes of calls wait to start: calls queued behind a
        /// stream may be large, and 64 of them could otherwise pin 16 MiB per connection.
        var maximumQueuedBytes: Int
        var maximumOutputBytes: Int
    }

    /// Sent down the pipeline by the server to start a graceful shutdown.
    struct ShutdownEvent {}

    /// The terms of a connection admitted in the server's reserve, beyond its limits: its
    /// first call must be to one of `interfaces` (it may ask for their descriptions first),
    /// within `probation`; otherwise it gets `refusal`, the limit it is over, and is closed.
    struct Reserve {
        var refusal: VarlinkError
        var interfaces: Set<String>
        var probation: TimeAmount
    }

    private enum Queued {
        /// `moreBuffered`: the peer had sent more behind this call by the time it was read.
        case call(ByteBuffer, moreBuffered: Bool)
        /// Input that ends the connection once every call before it is answered.
        case fatal(VarlinkError)
    }

    private let service: VarlinkService
    private let connection: VarlinkConnectionContext
    private let limits: Limits
    private let logger: Logger
    private let loopTurn: LoopTurn
    /// Set while the connection is in the reserve and has not kept to its terms yet.
    private var reserve: Reserve?
    private var probation: Scheduled<Void>?

    private var context: ChannelHandlerContext?
    private var channel: Channel?
    /// Replies handed to the loop with `execute` and not yet delivered, from any thread.
    fileprivate let handOffs = HandOffCount()
    /// The peer closed the connection: no reply can reach it, but the oneway calls it sent
    /// are still made, in order — their sender did not wait for an answer and must not lose
    /// them to having closed right after sending.
    private var peerGone = false
    private var queue = Deque<Queued>()
    private var queuedBytes = 0
    /// A call that has started and not yet been answered in full.
    private struct ActiveCall {
        let serial: UInt64
        let call: VarlinkCall
        var cancellation: [@Sendable () -> Void] = []
        /// Replies that arrived while calls before this one were still unanswered.
        var buffered: [VarlinkReply] = []
        var finished = false
        /// The next call may start (the handler released the connection, or finished).
        var released = false
    }

    /// Started calls in arrival order; only the first may write.
    private var active = Deque<ActiveCall>()
    private var serial: UInt64 = 0
    private var processing = false
    /// A handler called from `dispatch` is running on the loop, inside `processQueue`.
    fileprivate var isDispatching: Bool { processing }
    private var inputClosed = false
    private var shuttingDown = false
    private var closing = false
    private var readHeld = false
    private var unflushed = false
    /// A flush is queued on the loop: replies handed over from other threads meanwhile go out
    /// with it, in one write, instead of one write(2) each.
    private var flushQueued = false
    private var lastFlush = NIODeadline.uptimeNanoseconds(0)
    /// A connection that has flushed nothing for this long flushes a reply at once, unless
    /// the call that made it has more calls right behind it: a lone reply (a presenter's delta
    /// at 2,000 updates/s) would otherwise wait for the rest of the loop's turn, a quarter of
    /// its latency as measured. Replies in a burst still share one write(2).
    static let idleBeforeImmediateFlush: TimeAmount = .microseconds(200)
    /// Inside `channelRead`…`channelReadComplete`, which flushes for the whole read.
    private var reading = false
    /// Calls this connection may still start before the loop attends to other connections.
    /// A peer that pipelines cheap calls and reads its replies as fast as they come would
    /// otherwise keep the loop in this handler (each flush makes it writable again, which
    /// starts more calls) while every other connection on the loop waits.
    private var turnBudget = VarlinkServerConnectionHandler.callsPerTurn
    private var budgetRefill: Scheduled<Void>?
    /// When the first call of the current budget started.
    private var budgetStarted: NIODeadline?
    /// The budget ran out of time rather than calls: it comes back after its pause only, not
    /// with the next read, or a peer whose calls are each expensive would keep the loop.
    private var budgetOverTime = false
    static let callsPerTurn = 64
    /// How long one connection's calls may keep the loop before others get a turn: once it has
    /// passed, the call being started is the turn's last.
    static let timePerTurn: TimeAmount = .milliseconds(5)

    init(service: VarlinkService, connection: VarlinkConnectionContext, limits: Limits, loopTurn: LoopTurn,
         reserve: Reserve? = nil, logger: Logger) {
        self.service = service
        self.connection = connection
        self.limits = limits
        self.loopTurn = loopTurn
        self.reserve = reserve
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.channel = context.channel
        if let reserve {
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            probation = context.eventLoop.scheduleTask(in: reserve.probation) {
                guard let refusal = handler.value.reserve?.refusal else { return }
                handler.value.closeAfter(reply: VarlinkReply(error: refusal))
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        reading = true
        let frame = unwrapInboundIn(data)
        queuedBytes += frame.bytes.readableBytes
        queue.append(.call(frame.bytes, moreBuffered: frame.moreBuffered))
        processQueue()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        reading = false
        if turnBudget < Self.callsPerTurn, !budgetOverTime {
            refillTurnBudget()
            processQueue()
        }
        flushIfNeeded()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !closing else { return }
        switch error {
        case let tooLarge as NULFrameDecoder.MessageTooLarge:
            enqueueFatal(.messageTooLarge(limit: tooLarge.limit))
        case let truncated as NULFrameDecoder.TruncatedMessage:
            enqueueFatal(.invalidMessage("the connection ended inside a message (\(truncated.bytes) bytes without a NUL)"))
        default:
            // The socket itself failed (reset, broken pipe): nobody is left to answer.
            logger.debug("connection error", metadata: ["error": "\(error)"])
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The peer half-closed after its last call: answer everything, then close.
            inputClosed = true
            processQueue()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        budgetRefill?.cancel()
        budgetRefill = nil
        probation?.cancel()
        probation = nil
        if closing {
            dropQueuedCalls()
            cancelActive()
        } else {
            // Streams end with their peer; calls computing a reply run to completion, so the
            // oneway calls queued behind them still start in order.
            peerGone = true
            let streams = active.filter(\.call.more)
            active.removeAll(where: \.call.more)
            for stream in streams { for callback in stream.cancellation { callback() } }
        }
        connection.markClosed()
        processQueue()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Calls wait while the peer is not reading; it is reading again.
        processQueue()
        context.fireChannelWritabilityChanged()
    }

    // MARK: Outbound

    func read(context: ChannelHandlerContext) {
        if isQueueFull || !context.channel.isWritable {
            readHeld = true
        } else {
            context.read()
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is ShutdownEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed()
        beginShutdown()
    }

    // MARK: Calls

    private func enqueueFatal(_ error: VarlinkError) {
        queue.append(.fatal(error))
        processQueue()
    }

    private func processQueue() {
        guard !processing, context != nil || peerGone else { return }
        processing = true
        defer {
            processing = false
            scheduleFlush()
        }
        while canStartNext, !closing, let next = queue.popFirst() {
            switch next {
            case .fatal(let error):
                if peerGone {
                    // Nothing after a malformed message would have run anyway.
                    dropQueuedCalls()
                    break
                }
                closeAfter(reply: VarlinkReply(error: error))
                return
            case .call(let frame, let moreBuffered):
                queuedBytes -= frame.readableBytes
                let outer = loopTurn.callsFollow
                loopTurn.callsFollow = moreBuffered || !queue.isEmpty
                start(frame: frame)
                loopTurn.callsFollow = outer
            }
        }
        if peerGone {
            if active.isEmpty, queue.isEmpty { closing = true }
            return
        }
        if active.isEmpty, queue.isEmpty, inputClosed || shuttingDown, !closing {
            closeWhenFlushed()
            return
        }
        resumeReadingIfPossible()
    }

    /// The next call may start: the one before it released the connection, and the peer is
    /// reading its replies — a peer that is not gets no more work done for it (its calls wait,
    /// and reads stop), so however many calls it pipelines, the replies held for it stay
    /// around the channel's high-water mark and other connections keep their share of the loop.
    private var canStartNext: Bool {
        guard peerGone || (turnBudget > 0 && context?.channel.isWritable ?? false) else { return false }
        guard let last = active.last else { return true }
        return last.released && active.count < limits.maximumQueuedCalls
    }

    private var isQueueFull: Bool {
        queue.count >= limits.maximumQueuedCalls || queuedBytes >= limits.maximumQueuedBytes
    }

    private func start(frame: ByteBuffer) {
        let call: VarlinkCall
        do {
            call = try VarlinkCall(frame: frame.readableBytesView, canonicalTextAt: service.canonicalTextPath)
        } catch {
            if peerGone {
                dropQueuedCalls()
            } else {
                closeAfter(reply: VarlinkReply(error: .invalidMessage(error.reason)))
            }
            return
        }
        if peerGone, !call.oneway {
            // Its sender left without waiting for the answer.
            return
        }
        if shuttingDown {
            if !call.oneway { write(VarlinkReply(error: .shuttingDown)) }
            return
        }
        if let reserve, !keepsTerms(call, of: reserve) {
            closeAfter(reply: VarlinkReply(error: reserve.refusal))
            return
        }
        serial &+= 1
        spendTurnBudget()
        active.append(ActiveCall(serial: serial, call: call))
        service.dispatch(call, connection: connection, sink: ChannelReplySink(handler: self, serial: serial, channel: channel!, handOffs: handOffs))
    }

    /// Whether a call of a connection in the reserve keeps to its terms; a call to one of its
    /// interfaces ends the probation.
    private func keepsTerms(_ call: VarlinkCall, of reserve: Reserve) -> Bool {
        if reserve.interfaces.contains(String(call.interfaceName)) {
            self.reserve = nil
            probation?.cancel()
            probation = nil
            return true
        }
        return call.method == "org.varlink.service.GetInterfaceDescription"
            && reserve.interfaces.contains(call.parameters["interface"]?.stringValue ?? "")
    }

    /// A reply from a handler, on the event loop.
    fileprivate func deliver(_ reply: VarlinkReply, final: Bool, serial: UInt64) {
        // Usually the reply is the first call's, a stream's or the call answered in turn.
        guard !closing, let index = active.first?.serial == serial ? 0 : active.firstIndex(where: { $0.serial == serial })
        else { return }
        if index == 0 {
            if !active[0].call.oneway { write(reply) }
            // The write may have closed the connection (the peer left too much unread).
            guard !closing else { return }
            if final {
                active.removeFirst()
                writeFinishedHeads()
            }
        } else {
            if !active[index].call.oneway { active[index].buffered.append(reply) }
            if final {
                active[index].finished = true
                active[index].released = true
            }
        }
        guard !processing else { return }
        if final {
            processQueue()
        } else {
            // A stream's reply starts nothing and frees nothing: it only needs to go out.
            scheduleFlush()
        }
    }

    /// Writes what the calls now at the front had buffered, dropping those already finished.
    private func writeFinishedHeads() {
        while !active.isEmpty {
            for reply in active[0].buffered {
                write(reply)
                guard !closing else { return }
            }
            active[0].buffered.removeAll()
            guard active[0].finished else { return }
            active.removeFirst()
        }
    }

    /// The handler of `serial` has made its decision: the next call may start.
    fileprivate func release(serial: UInt64) {
        guard !closing, let index = active.firstIndex(where: { $0.serial == serial }) else { return }
        // A stream has no decision point: it holds its connection until it ends.
        guard !active[index].call.more else { return }
        active[index].released = true
        if !processing { processQueue() }
    }

    fileprivate func onCancel(serial: UInt64, _ callback: @escaping @Sendable () -> Void) {
        guard !closing, let index = active.firstIndex(where: { $0.serial == serial }) else {
            callback()
            return
        }
        active[index].cancellation.append(callback)
    }

    /// Forgets the calls that have not started, and the bytes they held against the limit.
    private func dropQueuedCalls() {
        queue.removeAll()
        queuedBytes = 0
    }

    private func cancelActive() {
        let calls = active
        active.removeAll()
        for call in calls { for callback in call.cancellation { callback() } }
    }

    private func write(_ reply: VarlinkReply) {
        guard let context, !peerGone else { return }
        if let encoded = reply.encodedParameters, encoded.buffer.readableBytes >= VarlinkEncodedParameters.sharedSizeThreshold {
            // Too large to copy for every connection it goes to: sent from the shared buffer.
            pushOutput(context)
            let allocator = context.channel.allocator
            context.write(wrapOutboundOut(allocator.buffer(staticString: Self.replyHead)), promise: nil)
            context.write(wrapOutboundOut(encoded.buffer), promise: nil)
            context.write(wrapOutboundOut(allocator.buffer(staticString: Self.replyTail(continues: reply.continues))), promise: nil)
            unflushed = true
            closeIfOverLimit(context)
            return
        }
        // Written through a local, moved out and back, so the buffer stays uniquely held and
        // the property is accessed twice rather than at every write.
        var out = output.take() ?? context.channel.allocator.buffer(capacity: Self.outputCapacity)
        if let encoded = reply.encodedParameters {
            out.writeStaticString(Self.replyHead)
            out.writeImmutableBuffer(encoded.buffer)
            out.writeStaticString(Self.replyTail(continues: reply.continues))
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(128)
            reply.encode(into: &bytes)
            bytes.append(0)
            out.writeBytes(bytes)
        }
        let full = out.readableBytes >= Self.outputCapacity
        output = out
        unflushed = true
        if full {
            pushOutput(context)
            closeIfOverLimit(context)
        }
    }

    /// Replies written since the last flush, framed back to back: a burst of them (a
    /// producer's pipelined calls, a presenter's deltas) goes down the pipeline, and to the
    /// socket, as one buffer instead of one per reply.
    private var output: ByteBuffer?
    /// Room for a burst of replies (64 pipelined replies of an update are ~45 KiB): past it
    /// they go to the channel at once, so that its count of unwritten bytes (the output limit)
    /// sees them. Starting smaller and growing cost more in copies than it saved in memory.
    private static let outputCapacity = 16 * 1024
    /// What a reply's encoded parameters go between.
    private static let replyHead: StaticString = #"{"parameters":"#
    private static func replyTail(continues: Bool) -> StaticString {
        continues ? ",\"continues\":true}\0" : "}\0"
    }

    /// Hands the replies gathered so far to the channel, which counts them against its
    /// high-water mark from then on.
    private func pushOutput(_ context: ChannelHandlerContext) {
        guard let buffer = output else { return }
        output = nil
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func closeIfOverLimit(_ context: ChannelHandlerContext) {
        // NIO counts what waits for the socket and turns the channel unwritable past its
        // high-water mark, far below the limit: only then is the count worth asking for.
        guard !context.channel.isWritable,
              let buffered = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes),
              buffered > limits.maximumOutputBytes else { return }
        // The peer stopped reading; keeping its replies would let it hold our memory.
        logger.notice("closing a connection whose unread replies exceed the limit", metadata: [
            "limit": "\(limits.maximumOutputBytes)", "peer_pid": "\(connection.peer?.pid ?? 0)",
        ])
        closing = true
        output = nil
        dropQueuedCalls()
        cancelActive()
        context.close(promise: nil)
    }

    private func flushIfNeeded(now: NIODeadline = .now()) {
        guard unflushed, let context else { return }
        unflushed = false
        lastFlush = now
        pushOutput(context)
        closeIfOverLimit(context)
        guard !closing else { return }
        context.flush()
    }

    /// Flushes at once after a pause (see `idleBeforeImmediateFlush`), otherwise once the loop
    /// has run the tasks queued so far, so that replies made together — by the calls of a
    /// burst, or handed over from other threads — share one write(2). Reads flush on completion.
    private func scheduleFlush() {
        guard unflushed, !reading, !flushQueued, let context else { return }
        let now = NIODeadline.now()
        if !loopTurn.callsFollow, now - lastFlush >= Self.idleBeforeImmediateFlush {
            flushIfNeeded(now: now)
            return
        }
        flushQueued = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            handler.value.flushQueued = false
            handler.value.flushIfNeeded()
        }
    }

    /// Sends a last reply, then closes once it is written.
    private func closeAfter(reply: VarlinkReply) {
        guard !closing else { return }
        write(reply)
        dropQueuedCalls()
        cancelActive()
        closeWhenFlushed()
    }

    /// A handler ends the connection (a stream that could not keep within its bounds): what
    /// was written goes out, nothing more is read or started.
    fileprivate func closeAfterWrites() {
        guard !closing else { return }
        dropQueuedCalls()
        cancelActive()
        closeWhenFlushed()
    }

    private func closeWhenFlushed() {
        guard let context else { return }
        closing = true
        unflushed = false
        pushOutput(context)
        // Writes complete in order: once this empty one has, everything before it is written.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: written)
        let channel = context.channel
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    private func beginShutdown() {
        guard !shuttingDown, !closing else { return }
        shuttingDown = true
        // A call that streams has no natural end: stop it. A call computing its one reply
        // is given the time the server allows to finish it.
        // Streams are told why they end (so clients can reconnect), in their turn.
        for call in active where call.call.more {
            let callbacks = call.cancellation
            deliver(VarlinkReply(error: .shuttingDown), final: true, serial: call.serial)
            for callback in callbacks { callback() }
        }
        // Calls queued behind it are answered with ShuttingDown, in order, then the
        // connection closes.
        processQueue()
    }

    /// A read is an I/O event, so the loop has been through its selector: a new turn.
    private func refillTurnBudget() {
        budgetRefill?.cancel()
        budgetRefill = nil
        budgetStarted = nil
        budgetOverTime = false
        turnBudget = Self.callsPerTurn
    }

    /// Once the budget is spent — 64 calls without a read in between (the peer only takes
    /// replies), or 5 ms of the loop whatever the reads — refills it after a pause as long as
    /// the spending took: a task due sooner would run in the same tick, after the flushes that
    /// make the peer writable again, and the loop would never get back to its other
    /// connections. So a connection whose calls keep the loop busy gets at most half of it.
    private func spendTurnBudget() {
        guard !peerGone else { return }
        let now = NIODeadline.now()
        let started = budgetStarted ?? now
        budgetStarted = started
        turnBudget -= 1
        if turnBudget > 0, now - started >= Self.timePerTurn {
            turnBudget = 0
            budgetOverTime = true
        }
        guard turnBudget <= 0, budgetRefill == nil, let context else { return }
        let pause = max(.microseconds(100), now - started)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        budgetRefill = context.eventLoop.scheduleTask(in: pause) {
            handler.value.refillTurnBudget()
            handler.value.processQueue()
        }
    }

    private func resumeReadingIfPossible() {
        guard readHeld, let context, !isQueueFull, context.channel.isWritable else { return }
        readHeld = false
        context.read()
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

/// Routes a handler's replies, from whatever thread it runs on, to its connection's loop.
private struct ChannelReplySink: VarlinkReplySink {
    let handler: NIOLoopBound<VarlinkServerConnectionHandler>
    let serial: UInt64
    let channel: Channel
    let handOffs: HandOffCount
    var eventLoop: EventLoop { channel.eventLoop }

    init(handler: VarlinkServerConnectionHandler, serial: UInt64, channel: Channel, handOffs: HandOffCount) {
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.serial = serial
        self.channel = channel
        self.handOffs = handOffs
    }

    /// `Channel.isWritable` is safe to read from any thread.
    var isWritable: Bool { channel.isWritable && channel.isActive }

    func send(_ reply: VarlinkReply, final: Bool) {
        if canDeliverNow {
            handler.value.deliver(reply, final: final, serial: serial)
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
        if canDeliverNow {
            body(handler.value)
        } else {
            handOff(body)
        }
    }

    private var canDeliverNow: Bool {
        eventLoop.inEventLoop && (handler.value.isDispatching || handOffs.isZero)
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
