import DequeModule
import OrderedJSON
import OrderedCollections

/// The calls of one server connection, as a value: the transport reports what happens (a
/// call read, a reply made, the peer gone) and carries out the steps it gets back (start this
/// call, write that reply, read, close). No I/O and no clock, so every sequence is tested
/// without a channel; VarlinkNIO's connection handler and VarlinkInProcess both drive it.
///
/// Ordering is structural: the next call starts only after the previous one has had its
/// final reply — or, for a handler that says its decision is made (`release`), right after
/// that, with its replies held back until the calls before it are answered. So pipelined
/// calls are always answered in order, and a handler that only waits for durability does not
/// make the calls behind it wait too. Backpressure is structural too: calls wait while the
/// peer is not reading its replies, and reads stop while too many calls wait to start.
package struct ServerConnectionStateMachine {
    /// The terms of a connection admitted in the server's reserve, beyond its limits: its
    /// first call must be to one of `interfaces` (it may ask for their descriptions first),
    /// in time (`probationExpired`); otherwise it is told `refusal`, the limit it is over, and
    /// is closed.
    package typealias Reserve = (refusal: VarlinkConnectionErrors.Condition, interfaces: Set<String>)

    package enum Lifecycle: Sendable, Equatable {
        /// Reading calls and answering them.
        case open
        /// The peer shut its side of the connection after its last call: every call read is
        /// answered, then the connection closes.
        case inputClosed
        /// The server is shutting down: calls in progress finish, streams end with
        /// `ShuttingDown`, calls not yet started are refused with it; then the connection closes.
        case quiescing
        /// Input that ends the connection came (a malformed message, a broken term of the
        /// reserve): nothing more starts, and once the calls before it are answered the
        /// connection closes after saying why.
        case ending
        /// The peer closed the connection: no reply can reach it, but the oneway calls it sent
        /// are still made, in order — their sender did not wait for an answer and must not lose
        /// them to having closed right after sending.
        case peerGone
        /// Nothing more is started or written.
        case closed
    }

    /// What the transport does next (`nextStep`).
    package enum Step {
        /// Hand `call` to the service; its replies come back as those of `serial`.
        /// `callsFollow`: the peer had already sent more calls behind it.
        case start(VarlinkCall, serial: UInt64, callsFollow: Bool)
        /// Write a reply now due (its call is the first unanswered one), then ask again.
        case write(VarlinkReply)
        /// Close once everything written has gone out.
        case closeWhenWritten
        /// Read again: a read was held back, and there is room now.
        case read
        /// Nothing until the next event.
        case wait
    }

    private enum Queued {
        /// `moreBuffered`: the peer had sent more behind this call by the time it was read.
        case call([UInt8], moreBuffered: Bool)
        /// Input that ends the connection once every call before it is answered.
        case fatal(VarlinkConnectionErrors.Condition)
    }

    /// A call that has started and not yet been answered in full, or a refusal waiting for
    /// its turn to be written.
    private struct Call {
        /// 0 for a refusal, which no handler answers.
        let serial: UInt64
        let isStream: Bool
        let isOneway: Bool
        var cancellation: [@Sendable () -> Void] = []
        /// Replies that arrived while calls before this one were still unanswered.
        var held = Deque<VarlinkReply>()
        var progress = Progress.running
    }

    private enum Progress {
        /// Its handler is deciding: the calls behind it wait.
        case running
        /// Its handler has decided (`release`): the next call may start before its reply.
        case released
        /// Its final reply has come; what is held for it waits for its turn.
        case finished
    }

    package private(set) var lifecycle = Lifecycle.open
    /// Calls read but not yet started, and calls started but not yet answered: past either,
    /// reading or starting pauses.
    private let maximumQueuedCalls: Int
    /// Reads stop while this many bytes of calls wait to start: calls queued behind a stream
    /// may be large, and 64 of them could otherwise pin 16 MiB per connection.
    private let maximumQueuedBytes: Int
    private let errors: VarlinkConnectionErrors
    private let callReader: VarlinkCallReader
    /// Set while the connection is in the reserve and has not kept to its terms yet.
    private var reserve: Reserve?
    private var queue = Deque<Queued>()
    private var queuedBytes = 0
    /// Started calls and refusals in arrival order; only the first may write.
    private var calls = Deque<Call>()
    private var lastSerial: UInt64 = 0
    /// The transport asked to read while there was no room: `nextStep` says when there is.
    private var readHeld = false

    /// - Parameter callReader: `VarlinkService.callReader`, for decoding calls.
    package init(
        maximumQueuedCalls: Int, maximumQueuedBytes: Int, errors: VarlinkConnectionErrors, callReader: VarlinkCallReader,
        reserve: Reserve? = nil
    ) {
        self.maximumQueuedCalls = maximumQueuedCalls
        self.maximumQueuedBytes = maximumQueuedBytes
        self.errors = errors
        self.callReader = callReader
        self.reserve = reserve
    }

    // MARK: Input

    /// A message arrived: its bytes without the NUL, and whether more had arrived behind it.
    package mutating func frameReceived(_ frame: [UInt8], moreBuffered: Bool) {
        guard readsCalls else { return }
        queuedBytes += frame.count
        queue.append(.call(frame, moreBuffered: moreBuffered))
    }

    /// The input broke in a way that ends the connection; the peer is told once the calls
    /// read before are answered.
    package mutating func inputFailed(_ condition: VarlinkConnectionErrors.Condition) {
        guard readsCalls else { return }
        queue.append(.fatal(condition))
    }

    /// The peer will send nothing more (it half-closed the connection).
    package mutating func inputClosed() {
        if lifecycle == .open { lifecycle = .inputClosed }
    }

    /// The transport would read more input. Returns whether it may now; if not, `nextStep`
    /// returns `read` once it may. `peerKeepsUp`: the peer reads its replies.
    package mutating func readRequested(peerKeepsUp: Bool) -> Bool {
        guard !isQueueFull, peerKeepsUp else {
            readHeld = true
            return false
        }
        return true
    }

    // MARK: Replies

    /// A reply of call `serial`. Returns whether to write it now, its call being the first
    /// unanswered one; a later call's replies are held until their turn (`nextStep`). A
    /// `final` reply ends the call: `nextStep` may then have more to do.
    package mutating func replyArrived(_ reply: VarlinkReply, final: Bool, serial: UInt64) -> Bool {
        guard let index = index(of: serial), calls[index].progress != .finished else { return false }
        let delivered = !calls[index].isOneway && lifecycle != .peerGone
        if index == 0 {
            if final { calls.removeFirst() }
            return delivered
        }
        if delivered { calls[index].held.append(reply) }
        if final { calls[index].progress = .finished }
        return false
    }

    /// The handler of `serial` has made its decision. Returns whether the next call may start
    /// sooner for it (then `nextStep`).
    package mutating func release(serial: UInt64) -> Bool {
        guard let index = index(of: serial) else { return false }
        // A stream has no decision point: it holds its connection until it ends.
        guard !calls[index].isStream, calls[index].progress == .running else { return false }
        calls[index].progress = .released
        return true
    }

    /// Keeps `callback` to run if call `serial` ends without its final reply. Returns false
    /// when it already has (the caller runs `callback` at once).
    package mutating func onCancel(serial: UInt64, _ callback: @escaping @Sendable () -> Void) -> Bool {
        guard let index = index(of: serial) else { return false }
        if calls[index].progress != .finished { calls[index].cancellation.append(callback) }
        return true
    }

    // MARK: Steps

    /// The next thing to do: a reply now due, a call to start, or how the connection ends;
    /// `wait` once there is nothing until the next event. `budgetLeft`: the transport lets this
    /// connection start more calls now. `peerKeepsUp`: the peer reads its replies — one that
    /// does not gets no more work done for it (its calls wait, and reads stop), so however many
    /// calls it pipelines, the replies held for it stay bounded.
    package mutating func nextStep(budgetLeft: Bool, peerKeepsUp: Bool) -> Step {
        while true {
            if let due = nextDueReply() { return .write(due) }
            guard lifecycle == .peerGone || (budgetLeft && peerKeepsUp), canStartNext, let next = queue.popFirst() else { break }
            switch next {
            case .fatal(let condition):
                end(with: condition)
            case .call(let frame, let moreBuffered):
                queuedBytes -= frame.count
                if let start = start(frame, callsFollow: moreBuffered || !queue.isEmpty) { return start }
            }
        }
        switch lifecycle {
        case .open:
            break
        case .inputClosed, .quiescing, .ending:
            guard calls.isEmpty, queue.isEmpty else { break }
            lifecycle = .closed
            return .closeWhenWritten
        case .peerGone:
            if calls.isEmpty, queue.isEmpty { lifecycle = .closed }
            return .wait
        case .closed:
            return .wait
        }
        guard readHeld, !isQueueFull, peerKeepsUp else { return .wait }
        readHeld = false
        return .read
    }

    // MARK: Ending

    /// The server is shutting down. Returns the cancellation callbacks of the streams it ends.
    package mutating func quiesce() -> [@Sendable () -> Void] {
        guard lifecycle == .open || lifecycle == .inputClosed else { return [] }
        lifecycle = .quiescing
        // A call that streams has no natural end: it is told why it ends (so its client can
        // reconnect), in its turn. A call computing its one reply is left to finish it.
        let shuttingDown = reply(for: .shuttingDown)
        var callbacks: [@Sendable () -> Void] = []
        for index in calls.indices where calls[index].isStream && calls[index].progress != .finished {
            callbacks += calls[index].cancellation
            calls[index].cancellation = []
            if let shuttingDown, !calls[index].isOneway { calls[index].held.append(shuttingDown) }
            calls[index].progress = .finished
        }
        return callbacks
    }

    /// The peer closed the connection. Returns the cancellation callbacks to run: those of the
    /// streams, which end with their peer, or of every call if the connection was closing.
    package mutating func peerClosed() -> [@Sendable () -> Void] {
        switch lifecycle {
        case .peerGone:
            return []
        case .ending, .closed:
            return close()
        case .open, .inputClosed, .quiescing:
            // While shutting down, nothing queued would start, oneway or not.
            if lifecycle == .quiescing { dropQueue() }
            lifecycle = .peerGone
            // Calls computing a reply run to completion, so the oneway calls queued behind
            // them still start in order; replies waiting for their turn have nowhere to go.
            var callbacks: [@Sendable () -> Void] = []
            calls.removeAll { call in
                guard call.isStream || call.progress == .finished else { return false }
                callbacks += call.cancellation
                return true
            }
            for index in calls.indices { calls[index].held.removeAll() }
            return callbacks
        }
    }

    /// The connection in the reserve did not keep to its terms in time: it is told so once the
    /// calls in progress are answered, and closed.
    package mutating func probationExpired() {
        guard let reserve, readsCalls else { return }
        end(with: reserve.refusal)
    }

    /// A handler ends the connection (a stream that could not keep within its bounds): what
    /// was written goes out, nothing more starts. Returns the cancellation callbacks of the
    /// calls it cuts off, or nil when there is no connection left to end.
    package mutating func closeAfterWrites() -> [@Sendable () -> Void]? {
        guard lifecycle != .closed, lifecycle != .peerGone else { return nil }
        return close()
    }

    /// Ends the connection now: nothing queued starts and no call in progress is answered.
    /// Returns the cancellation callbacks of the calls it cuts off.
    package mutating func close() -> [@Sendable () -> Void] {
        lifecycle = .closed
        dropQueue()
        let callbacks = calls.flatMap(\.cancellation)
        calls.removeAll()
        return callbacks
    }

    // MARK: Internals

    /// Calls are read (to be answered, or refused while shutting down).
    private var readsCalls: Bool {
        lifecycle == .open || lifecycle == .inputClosed || lifecycle == .quiescing
    }

    private var isQueueFull: Bool {
        queue.count >= maximumQueuedCalls || queuedBytes >= maximumQueuedBytes
    }

    /// The last call started has released the connection, and not too many are unanswered.
    private var canStartNext: Bool {
        calls.isEmpty || (calls[calls.count - 1].progress != .running && calls.count < maximumQueuedCalls)
    }

    /// Where call `serial` is among those not yet answered in full; nil once it is, and for
    /// every call once the connection is closed (`close` forgets them all).
    private func index(of serial: UInt64) -> Int? {
        // Usually the reply is the first call's: a stream's, or the call answered in turn.
        if !calls.isEmpty, calls[0].serial == serial { return 0 }
        return calls.firstIndex { $0.serial == serial }
    }

    private func reply(for condition: VarlinkConnectionErrors.Condition) -> VarlinkReply? {
        errors.error(for: condition).map(VarlinkReply.init(error:))
    }

    /// Decodes and starts a call, or refuses it, or ends the connection over it.
    private mutating func start(_ frame: [UInt8], callsFollow: Bool) -> Step? {
        let call: VarlinkCall
        do {
            call = try callReader.call(frame: frame)
        } catch {
            end(with: .invalidMessage(reason: error.reason))
            return nil
        }
        switch lifecycle {
        case .peerGone where !call.oneway:
            // Its sender left without waiting for the answer.
            return nil
        case .quiescing:
            if !call.oneway, let refusal = reply(for: .shuttingDown) { answerInTurn(refusal) }
            return nil
        default:
            break
        }
        if let reserve, !keepsTerms(call, of: reserve) {
            end(with: reserve.refusal)
            return nil
        }
        lastSerial &+= 1
        calls.append(Call(serial: lastSerial, isStream: call.more, isOneway: call.oneway))
        return .start(call, serial: lastSerial, callsFollow: callsFollow)
    }

    /// Whether a call of a connection in the reserve keeps to its terms; a call to one of its
    /// interfaces ends the probation.
    private mutating func keepsTerms(_ call: VarlinkCall, of reserve: Reserve) -> Bool {
        if reserve.interfaces.contains(String(call.interfaceName)) {
            self.reserve = nil
            return true
        }
        return call.method == "org.varlink.service.GetInterfaceDescription"
            && reserve.interfaces.contains(call.parameters["interface"]?.stringValue ?? "")
    }

    /// Nothing after this starts; the peer is told why once the calls before are answered.
    /// After a peer has gone, nothing after a malformed message would have run anyway.
    private mutating func end(with condition: VarlinkConnectionErrors.Condition) {
        dropQueue()
        guard lifecycle != .peerGone else { return }
        lifecycle = .ending
        if let reply = reply(for: condition) { answerInTurn(reply) }
    }

    /// Queues a reply that answers no running call, to be written after the calls before it.
    private mutating func answerInTurn(_ reply: VarlinkReply) {
        calls.append(Call(serial: 0, isStream: false, isOneway: false, held: [reply], progress: .finished))
    }

    /// The next reply held for the call now first in line; drops the calls it finishes.
    private mutating func nextDueReply() -> VarlinkReply? {
        while !calls.isEmpty {
            if let reply = calls[0].held.popFirst() { return reply }
            guard calls[0].progress == .finished else { return nil }
            calls.removeFirst()
        }
        return nil
    }

    /// Forgets the calls that have not started, and the bytes they held against the limit.
    private mutating func dropQueue() {
        queue.removeAll()
        queuedBytes = 0
    }
}
