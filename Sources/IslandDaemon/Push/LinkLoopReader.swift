import MQTT
import NIOCore
import NIOPosix

/// Reads the MQTT link process's frames on the engine's event loop (`MQTTLinkReader`): the
/// loop wakes for the link's socket itself and hands each push to the gateway where it runs,
/// where a reader thread of its own woke, read the frame and woke the loop — two hand-offs
/// a message, on a fan-out's every device.
///
/// The loop never waits: the daemon's bound on pushes in it (`PushService.window`) holds by
/// not reading. Once `window` is full, the frames already read stay here and nothing more is
/// read from the socket until a push is done; the link process then waits (its own window,
/// then its writes), and the broker holds what comes next. What is held is bounded by one
/// frame (`limit`) and one read.
final class LinkLoopReader: MQTTLinkReader {
    let loop: any EventLoop
    let window: LoopWindow

    /// Nil when `loop` is not one a socket can be read on (an embedded loop in tests).
    init?(loop: any EventLoop, window: LoopWindow) {
        guard ClientBootstrap(validatingGroup: loop) != nil else { return nil }
        self.loop = loop
        self.window = window
    }

    func read(
        _ descriptor: Int32, limit: Int, frame: @escaping @Sendable (MQTTLinkFrame) -> String?,
        ended: @escaping @Sendable (String?) -> Void
    ) {
        let window = window
        let channel = ClientBootstrap(validatingGroup: loop)!
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        FrameHandler(limit: limit, window: window, frame: frame, ended: ended))
                }
            }
            .withConnectedSocket(descriptor)
        // The descriptor is not closed here: the channel may have taken it before it failed.
        // The socket ends all the same, with the link process's `reap`.
        channel.whenFailure { error in
            ended("cannot read the MQTT link process's socket on the event loop: \(error)")
        }
    }

    /// The frames of one link process, on the loop.
    private final class FrameHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        let limit: Int
        let window: LoopWindow
        let frame: @Sendable (MQTTLinkFrame) -> String?
        let ended: @Sendable (String?) -> Void
        /// Read and not yet handed on: part of a frame, or frames held while the window is full.
        private var pending: ByteBuffer?
        /// Why the stream was ended from this side, once it was.
        private var failure: String?
        /// The socket's stream ended: what is pending is still handed on, as room is made.
        private var inputEnded = false
        private var finished = false

        init(
            limit: Int, window: LoopWindow, frame: @escaping @Sendable (MQTTLinkFrame) -> String?,
            ended: @escaping @Sendable (String?) -> Void
        ) {
            self.limit = limit
            self.window = window
            self.frame = frame
            self.ended = ended
        }

        func channelActive(context: ChannelHandlerContext) {
            context.read()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if pending == nil {
                pending = bytes
            } else {
                pending!.writeBuffer(&bytes)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            handOn(context: context)
        }

        func channelInactive(context: ChannelHandlerContext) {
            inputEnded = true
            handOn(context: context)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail("\(error)", context: context)
        }

        /// Hands on every whole frame read while the window has room, then reads on, or waits
        /// for room; once the stream has ended and all it brought is handed on, ends.
        private func handOn(context: ChannelHandlerContext) {
            guard !finished else { return }
            while failure == nil, !window.isFull, let next = nextFrame() {
                if let refusal = frame(next) { fail(refusal, context: context) }
            }
            if failure != nil {
                if inputEnded { finish() } else { context.close(promise: nil) }
            } else if inputEnded && pending == nil {
                finish()
            } else if window.isFull {
                window.whenRoom { [self] in handOn(context: context) }
            } else if inputEnded {
                // What is left is part of a frame the stream ended within.
                failure = "invalid link frame: the stream ended within a frame"
                finish()
            } else {
                context.read()
            }
        }

        /// The next whole frame of `pending`, or nil; fails the stream on a frame that breaks
        /// `MQTTLinkFrame.read`'s rules.
        private func nextFrame() -> MQTTLinkFrame? {
            guard var bytes = pending, let count = bytes.getInteger(at: bytes.readerIndex, as: UInt32.self).map(Int.init) else { return nil }
            guard count <= limit else {
                failure = "invalid link frame: a frame of \(count) bytes, over the limit of \(limit)"
                return nil
            }
            guard count > 0 else {
                failure = "invalid link frame: an empty frame"
                return nil
            }
            guard bytes.readableBytes >= MQTTLinkFrame.headerBytes + count else { return nil }
            // Parsed where it lies in the buffer, not copied into an array first.
            let parsed = bytes.withUnsafeReadableBytes { readable in
                let body = UnsafeRawBufferPointer(rebasing: readable[MQTTLinkFrame.headerBytes..<MQTTLinkFrame.headerBytes + count])
                return Result { () throws(MQTTLinkFrame.Invalid) in try MQTTLinkFrame(body: body) }
            }
            bytes.moveReaderIndex(forwardBy: MQTTLinkFrame.headerBytes + count)
            // Nothing held once all is read: the buffer of a large frame is not kept.
            pending = bytes.readableBytes == 0 ? nil : bytes
            switch parsed {
            case .success(let frame):
                return frame
            case .failure(let error):
                failure = "\(error)"
                return nil
            }
        }

        private func fail(_ reason: String, context: ChannelHandlerContext) {
            failure = failure ?? reason
            if inputEnded { finish() } else { context.close(promise: nil) }
        }

        private func finish() {
            guard !finished else { return }
            finished = true
            pending = nil
            ended(failure)
        }
    }
}

/// The daemon's bound on pushes handed to the engine and not yet done, kept on the engine's
/// loop: the loop counts them as it hands them over and frees them as they are done, and the
/// reader of the link's frames waits for room (`whenRoom`) instead of a thread waiting on a
/// semaphore.
final class LoopWindow: @unchecked Sendable {
    // @unchecked: every member is touched on `loop` only (`enter`, `isFull`, `whenRoom`), and
    // `leave` goes there first.
    let loop: any EventLoop
    let capacity: Int
    private var inside = 0
    private var waiting: (() -> Void)?

    init(loop: any EventLoop, capacity: Int) {
        self.loop = loop
        self.capacity = capacity
    }

    var isFull: Bool {
        loop.assertInEventLoop()
        return inside >= capacity
    }

    /// A push is handed over.
    func enter() {
        loop.assertInEventLoop()
        inside += 1
    }

    /// A push is done: its place is free, and a reader waiting for one reads on.
    func leave() {
        guard loop.inEventLoop else {
            loop.execute { self.leave() }
            return
        }
        inside -= 1
        guard inside < capacity, let resume = waiting else { return }
        waiting = nil
        resume()
    }

    /// Runs `resume` once a place is free.
    func whenRoom(_ resume: @escaping () -> Void) {
        loop.assertInEventLoop()
        waiting = resume
    }
}
