import DequeModule
import Synchronization
import VarlinkCore

/// Both ends of one connection, in memory. What touches its state runs as a job, one at a
/// time and in the order submitted (`run`): the counterpart of a channel's event loop, so a
/// handler's replies, from whatever thread, reach the state machine in the order they were
/// sent, and a reply made while a call is being started is taken up after it.
final class InProcessConnection: VarlinkClientTransport, @unchecked Sendable {
    private let service: VarlinkService
    private let context: VarlinkConnectionContext
    private let jobs = Mutex(Jobs())

    // Touched only by jobs, which never overlap (hence `@unchecked Sendable`).
    private var machine: ServerConnectionStateMachine
    private var replies = PendingReplies()
    private var isOpen = true

    private struct Jobs {
        var queue = Deque<@Sendable () -> Void>()
        var running = false
    }

    init(service: VarlinkService, context: VarlinkConnectionContext) {
        self.service = service
        self.context = context
        // As many calls at once as a socket's connection starts by default; no bound on bytes,
        // as nothing is read ahead that the client did not send.
        self.machine = ServerConnectionStateMachine(
            maximumQueuedCalls: 64, maximumQueuedBytes: .max,
            errors: service.connectionErrors, callReader: service.callReader)
    }

    // MARK: The client's end

    func send(_ message: [UInt8], awaiting: PendingReplies.Awaiting?, written: CheckedContinuation<Void, any Error>?) {
        run { [self] in
            guard isOpen else {
                awaiting?.fail(VarlinkClientError.connectionClosed)
                written?.resume(throwing: VarlinkClientError.connectionClosed)
                return
            }
            if let awaiting { replies.expect(awaiting) }
            written?.resume()
            machine.frameReceived(message, moreBuffered: false)
            advance()
        }
    }

    func close() async {
        run { [self] in
            guard isOpen else { return }
            isOpen = false
            replies.failAll(VarlinkClientError.connectionClosed)
            for callback in machine.peerClosed() { callback() }
            context.markClosed()
            // Oneway calls still run after their sender leaves.
            advance()
        }
    }

    // MARK: The server's end

    private func advance() {
        while true {
            switch machine.nextStep(budgetLeft: true, peerKeepsUp: true) {
            case .start(let call, let serial, _):
                service.dispatch(call, connection: context, sink: InProcessReplySink(connection: self, serial: serial))
            case .write(let reply):
                write(reply)
            case .closeWhenWritten:
                serverClosed()
                return
            case .read, .wait:
                return
            }
        }
    }

    private func write(_ reply: VarlinkReply) {
        guard isOpen else { return }
        do {
            try replies.receive(reply.encoded())
        } catch {
            replies.failAll(error)
            for callback in machine.close() { callback() }
            serverClosed()
        }
    }

    private func serverClosed() {
        guard isOpen else { return }
        isOpen = false
        replies.failAll(VarlinkClientError.connectionClosed)
        for callback in machine.peerClosed() { callback() }
        context.markClosed()
    }

    /// What a handler does with its call; each comes as a job.
    fileprivate enum HandlerEvent {
        case reply(VarlinkReply, final: Bool)
        case continuing([VarlinkReply])
        case release
        case onCancel(@Sendable () -> Void)
        case closeConnection
    }

    fileprivate func handle(_ event: HandlerEvent, of serial: UInt64) {
        switch event {
        case .reply(let reply, let final):
            deliver(reply, final: final, serial: serial)
        case .continuing(let replies):
            for reply in replies { deliver(reply, final: false, serial: serial) }
        case .release:
            if machine.release(serial: serial) { advance() }
        case .onCancel(let callback):
            if !machine.onCancel(serial: serial, callback) { callback() }
        case .closeConnection:
            guard let callbacks = machine.closeAfterWrites() else { return }
            for callback in callbacks { callback() }
            serverClosed()
        }
    }

    private func deliver(_ reply: VarlinkReply, final: Bool, serial: UInt64) {
        if machine.replyArrived(reply, final: final, serial: serial) { write(reply) }
        if final { advance() }
    }

    /// Runs `job` after every job submitted before it: here and now if none is running, else
    /// on the thread running them, once it gets to it.
    fileprivate func run(_ job: @escaping @Sendable () -> Void) {
        let first = jobs.withLock { jobs in
            jobs.queue.append(job)
            guard !jobs.running else { return false }
            jobs.running = true
            return true
        }
        guard first else { return }
        while let next = jobs.withLock({ jobs in
            let next = jobs.queue.popFirst()
            if next == nil { jobs.running = false }
            return next
        }) {
            next()
        }
    }
}

/// Hands what a handler does, from whatever thread, to its connection as jobs.
private struct InProcessReplySink: VarlinkReplySink {
    let connection: InProcessConnection
    let serial: UInt64

    /// Memory keeps up with any reader.
    var isWritable: Bool { true }

    func send(_ reply: VarlinkReply, final: Bool) {
        handle(.reply(reply, final: final))
    }

    func send(continuing replies: [VarlinkReply]) {
        handle(.continuing(replies))
    }

    func onCancel(_ callback: @escaping @Sendable () -> Void) {
        handle(.onCancel(callback))
    }

    func releaseConnection() {
        handle(.release)
    }

    func closeConnection() {
        handle(.closeConnection)
    }

    private func handle(_ event: InProcessConnection.HandlerEvent) {
        connection.run { [connection, serial] in connection.handle(event, of: serial) }
    }
}
