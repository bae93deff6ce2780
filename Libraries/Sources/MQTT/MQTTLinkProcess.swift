import CMosquitto
import Foundation
import Glibc
import SelfWake
import SpawnDescriptors
import Synchronization

/// MQTT sessions whose libmosquitto clients run in a link process (`MQTTLinkChild`), so that
/// what a broker sends is allocated there, under that process's memory limit, and never in
/// this one: what comes back is read in frames this side bounds (`frameLimit`).
///
/// The process is started with the first session's `start()` and started again, with the
/// backoff, whenever it ends (a broker's oversized packet ends only a connection, but anything
/// else, a crash included, ends the process); each start opens every session again with its
/// subscriptions. It is `executable` with `arguments`, given the socket as descriptor 3 and
/// the socket of the messages' dones as descriptor 4 (`MQTTLinkChild`) — for the daemon, its
/// own executable (`/proc/self/exe`) with a hidden option, never a fork without exec of a
/// process with threads.
///
/// Sessions close together, with the process (the last `shutdown`).
public final class MQTTLinkProcess: Sendable {
    /// The largest frame the link process takes from this side: a publish of feedback, a
    /// session's configuration.
    public static let commandLimit = 1 << 20

    let executable: String
    let arguments: [String]
    /// The largest frame this side reads.
    let frameLimit: Int
    let log: @Sendable (String) -> Void
    private let state: Mutex<State>
    /// What goes to the current process, nil between processes.
    private let outbox = Mutex<Outbox?>(nil)
    /// The dones of its messages, on a socket of their own, which the process reads only
    /// when a session wants a place in its window: no thread of it wakes for a done.
    private let doneOutbox = Mutex<Outbox?>(nil)
    /// Frames waiting for the link process, at most, and dones waiting apart: feedback beyond
    /// is dropped (and logged by the caller), and so are dones (see `messageDone`). Each is small
    /// (a feedback message is under 1 KiB), and a process that reads what it is sent never
    /// leaves this many: the pushes the daemon takes at once bound them, and the socket's
    /// buffer holds them.
    public static let outboxLimit = 8192
    /// Wakes the thread that waits between processes: stop.
    private let wakePipe: WakePipe
    /// Where the process's frames are read, when not on the supervising thread.
    private let reader: (any MQTTLinkReader)?

    struct SessionState {
        let session: Session
        var wanted: [String] = []
        var opened = false
        var connected = false
        /// The node of the configuration's list the link process last connected to.
        var broker: MQTTBrokerAddress?
    }

    struct State {
        var sessions: [String: SessionState] = [:]
        var order: [String] = []
        var started = false
        var stopping = false
        var finished = false
        var schedule: ReconnectSchedule
        var pid: pid_t = 0
        /// This side of the current process's socket, -1 between processes.
        var descriptor: Int32 = -1
    }

    /// The supervising thread's end, which `shutdown` waits for.
    private let supervisorEnd = ThreadEnd()

    /// - Parameters:
    ///   - frameLimit: the largest frame read from the link process; a larger one ends it.
    ///   - reader: where the process's frames are read and handed to the sessions' handlers;
    ///     nil: on the thread that supervises the process.
    ///   - log: what to tell about the process (it ended, and why).
    public init(
        executable: String, arguments: [String], frameLimit: Int, backoff: ReconnectBackoff = ReconnectBackoff(),
        reader: (any MQTTLinkReader)? = nil, log: @escaping @Sendable (String) -> Void
    ) throws(MQTTError) {
        self.executable = executable
        self.reader = reader
        self.arguments = arguments
        self.frameLimit = frameLimit
        self.log = log
        state = Mutex(State(schedule: ReconnectSchedule(backoff: backoff)))
        do {
            wakePipe = try WakePipe()
        } catch {
            throw .invalidConfiguration("\(error)")
        }
    }

    /// The largest frame the daemon needs to read for sessions of `configuration`: a message
    /// of its largest packet, with its topic and the session's name.
    public static func frameLimit(for configuration: MQTTConfiguration) -> Int {
        Int(configuration.maximumPacketSize) + 2 * Int(UInt16.max) + 64
    }

    /// A session of this process, as `configuration` says; nothing is sent until its `start()`.
    public func session(
        _ configuration: MQTTConfiguration, onMessage: @escaping MQTTClient.MessageHandler,
        onConnection: @escaping MQTTClient.ConnectionHandler = { _ in }, onSubscription: @escaping MQTTClient.SubscriptionHandler = { _ in }
    ) throws(MQTTError) -> Session {
        let session = Session(
            process: self, configuration: configuration, onMessage: onMessage, onConnection: onConnection, onSubscription: onSubscription)
        let added = state.withLock { state in
            guard state.sessions[configuration.clientID] == nil else { return false }
            state.sessions[configuration.clientID] = SessionState(session: session)
            state.order.append(configuration.clientID)
            return true
        }
        guard added else { throw .invalidConfiguration("a session with client id \(configuration.clientID) exists already") }
        return session
    }

    /// One session in the link process.
    public final class Session: MQTTSession {
        let process: MQTTLinkProcess
        public let configuration: MQTTConfiguration
        let onMessage: MQTTClient.MessageHandler
        let onConnection: MQTTClient.ConnectionHandler
        let onSubscription: MQTTClient.SubscriptionHandler
        /// The session's `done` frame, the same for every message: written once, not each time
        /// a message is done (~730 instructions a message).
        private let doneFrame: [UInt8]

        init(
            process: MQTTLinkProcess, configuration: MQTTConfiguration, onMessage: @escaping MQTTClient.MessageHandler,
            onConnection: @escaping MQTTClient.ConnectionHandler, onSubscription: @escaping MQTTClient.SubscriptionHandler
        ) {
            self.onSubscription = onSubscription
            self.process = process
            self.configuration = configuration
            self.onMessage = onMessage
            self.onConnection = onConnection
            doneFrame = MQTTLinkFrame.done(session: configuration.clientID).encoded
        }

        public var clientID: String { configuration.clientID }
        /// The node the session is connected to, or was last; the list's first before any.
        public var broker: MQTTBrokerAddress {
            process.state.withLock { $0.sessions[clientID]?.broker } ?? configuration.broker
        }
        public var isConnected: Bool { process.state.withLock { $0.sessions[clientID]?.connected ?? false } }

        public func start() { process.open(clientID) }

        /// Closes every session of the process, and the process.
        public func shutdown(timeout: Duration = .seconds(3)) async { await process.shutdown(timeout: timeout) }

        public func subscribe(_ topic: String) throws(MQTTError) {
            try MQTTTopic.checkFilter(topic)
            process.want(clientID, topic, subscribe: true)
        }

        public func unsubscribe(_ topic: String) throws(MQTTError) {
            try MQTTTopic.checkFilter(topic)
            process.want(clientID, topic, subscribe: false)
        }

        /// One message this session handed on is done: the link process hands on another of
        /// the session's in its place (`MessageWindow`). Every message handed on must be done
        /// once, or the session's share of the window stays taken.
        ///
        /// A link process reads the dones whenever its window would refuse a message, so it has
        /// at most a window of them unread, which its socket holds. Dones beyond `outboxLimit` waiting
        /// are for a process that stopped reading them (a broken or a compromised one): they are
        /// dropped rather than held without a bound, and that process's window stays full.
        public func messageDone() {
            _ = process.doneOutbox.withLock { $0 }?.put(doneFrame, droppable: true)
        }

        /// Refused while the session is not connected, and while the link process does not
        /// read (what it has not taken is lost, not queued: a bounded amount either way).
        public func publish(_ topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) throws(MQTTError) {
            try MQTTTopic.checkName(topic)
            guard isConnected else { throw .notConnected }
            guard process.send(.publish(session: clientID, topic: topic, payload: payload, retain: retain), droppable: true) else {
                throw .library(code: -1, message: "the MQTT link process takes nothing more now")
            }
        }
    }

    // MARK: Calls from any thread

    private func open(_ name: String) {
        let (first, send) = state.withLock { state in
            guard state.sessions[name]?.opened == false else { return (false, false) }
            state.sessions[name]?.opened = true
            defer { state.started = true }
            return (!state.started, state.started && !state.stopping)
        }
        if first {
            let thread = Thread { [self] in supervise() }
            thread.name = "mqtt-link"
            thread.stackSize = 1 << 20
            thread.start()
        } else if send {
            // The process running now learns of it here; a later one from `reopen`.
            sendOpen(name)
        }
    }

    private func sendOpen(_ name: String) {
        guard let (configuration, wanted) = state.withLock({ state in state.sessions[name].map { ($0.session.configuration, $0.wanted) } }),
            let json = try? JSONEncoder().encode(configuration)
        else { return }
        _ = send(.open(session: name, configuration: Array(json)), droppable: false)
        for topic in wanted { _ = send(.subscribe(session: name, topic: topic), droppable: false) }
    }

    private func want(_ name: String, _ topic: String, subscribe: Bool) {
        let opened = state.withLock { state -> Bool in
            guard var session = state.sessions[name] else { return false }
            if subscribe {
                guard !session.wanted.contains(topic) else { return false }
                session.wanted.append(topic)
            } else {
                guard let index = session.wanted.firstIndex(of: topic) else { return false }
                session.wanted.remove(at: index)
            }
            state.sessions[name] = session
            return session.opened
        }
        guard opened else { return }
        _ = send(subscribe ? .subscribe(session: name, topic: topic) : .unsubscribe(session: name, topic: topic), droppable: false)
    }

    /// Queues a frame for the link process, never waiting: a `droppable` one is dropped when
    /// `outboxLimit` frames wait already. False when not queued.
    private func send(_ frame: MQTTLinkFrame, droppable: Bool) -> Bool {
        outbox.withLock { $0 }?.put(frame.encoded, droppable: droppable) ?? false
    }

    /// The frames for one link process and the thread that writes them, in order, waiting for
    /// room in the socket as long as it takes (the process reads at once what it is sent).
    ///
    /// A frame put while nothing waits and the thread writes nothing is written at once by the
    /// caller, without waiting (`MSG_DONTWAIT`), and only what the socket did not take is left
    /// to the thread: a push's `done`, one per message, then costs one write and no wake-up of
    /// another thread. The order holds: the caller writes only while the queue is empty and the
    /// thread is not writing, under the lock the thread takes its frames with.
    final class Outbox: Sendable {
        let descriptor: Int32
        private let queue = Mutex<(frames: [[UInt8]], closing: Bool, writing: Bool)>(([], false, false))
        private let ready = DispatchSemaphore(value: 0)
        private let ended = DispatchSemaphore(value: 0)

        init(descriptor: Int32) {
            self.descriptor = descriptor
            let thread = Thread { [self] in run() }
            thread.name = "mqtt-link-out"
            thread.stackSize = 1 << 20
            thread.start()
        }

        /// Frames waiting for the thread to write them.
        var waiting: Int { queue.withLock { $0.frames.count } }

        func put(_ bytes: [UInt8], droppable: Bool) -> Bool {
            let (queued, wake) = queue.withLock { queue -> (Bool, Bool) in
                guard !queue.closing, !droppable || queue.frames.count < MQTTLinkProcess.outboxLimit else { return (false, false) }
                var left = bytes[...]
                if queue.frames.isEmpty, !queue.writing {
                    let written = left.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                    // An error other than a full socket is the thread's to meet: it writes it all.
                    if written > 0 { left = left.dropFirst(written) }
                    if left.isEmpty { return (true, false) }
                }
                queue.frames.append(Array(left))
                return (true, true)
            }
            if wake { ready.signal() }
            return queued
        }

        /// Writes what is queued, then ends the stream (the process then exits) and the thread.
        func finish() {
            queue.withLock { $0.closing = true }
            ready.signal()
        }

        /// Waits for the thread to end (after `finish`, or a failed write).
        func join() { ended.wait() }

        private func run() {
            defer { ended.signal() }
            while true {
                ready.wait()
                let (frames, closing) = queue.withLock { queue in
                    defer {
                        queue.frames = []
                        queue.writing = true
                    }
                    return (queue.frames, queue.closing)
                }
                for bytes in frames {
                    guard bytes.withUnsafeBytes({ writeFully(descriptor, $0) }) else {
                        queue.withLock { $0.closing = true }
                        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
                        return
                    }
                }
                queue.withLock { $0.writing = false }
                if closing {
                    Glibc.shutdown(descriptor, Int32(SHUT_WR))
                    return
                }
            }
        }
    }

    /// Ends the process: it is told to disconnect cleanly and exit, and waited for up to
    /// `timeout`; one still there then is ended by force, within `reapingGrace` more.
    func shutdown(timeout: Duration) async {
        let running = state.withLock { state in
            state.stopping = true
            return state.started && !state.finished
        }
        guard running else { return }
        // The link process reads the end of its stream, disconnects cleanly and exits.
        outbox.withLock { $0 }?.finish()
        wakePipe.wake()
        guard await !supervisorEnd.wait(timeout: timeout) else { return }
        // A process that has not ended by now (stuck, or taken over through a broker's packets)
        // is not waited for: its socket is shut down, which ends the reading, and the
        // supervising thread reaps it — killed if it is still there after `reap`'s grace.
        state.withLock { state in
            if state.descriptor >= 0 { Glibc.shutdown(state.descriptor, Int32(SHUT_RDWR)) }
        }
        _ = await supervisorEnd.wait(timeout: Self.reapingGrace + .seconds(2))
    }

    /// The pid of the link process now, 0 between processes.
    public var pid: Int32 { state.withLock { $0.pid } }

    /// Dones waiting to be written to the current process; nil between processes.
    var donesWaiting: Int? { doneOutbox.withLock { $0 }?.waiting }

    // MARK: The supervising thread

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func supervise() {
        while !stopping {
            let reason: String
            switch spawn() {
            case .failure(let error):
                reason = "cannot start the MQTT link process: \(error)"
            case .success(let (pid, descriptor, doneDescriptor)):
                state.withLock { state in
                    state.pid = pid
                    state.descriptor = descriptor
                    state.schedule.connected(at: MQTTClient.monotonicSeconds())
                }
                let box = Outbox(descriptor: descriptor)
                let doneBox = Outbox(descriptor: doneDescriptor)
                outbox.withLock { $0 = box }
                doneOutbox.withLock { $0 = doneBox }
                let names = state.withLock { state in state.order.filter { state.sessions[$0]?.opened == true } }
                for name in names { sendOpen(name) }
                if stopping { box.finish() }
                let ended = reader.map { readFrames(descriptor, through: $0) } ?? serve(descriptor)
                outbox.withLock { $0 = nil }
                doneOutbox.withLock { $0 = nil }
                box.finish()
                doneBox.finish()
                Glibc.shutdown(doneDescriptor, Int32(SHUT_RDWR))
                let status = reap(pid, descriptor)
                box.join()
                doneBox.join()
                // Forgotten before it is closed, so that `shutdown` never shuts a descriptor
                // the number has been given to since.
                state.withLock { state in
                    state.pid = 0
                    state.descriptor = -1
                }
                close(descriptor)
                close(doneDescriptor)
                reason = ended.map { "\($0); the MQTT link process \(status)" } ?? "the MQTT link process \(status)"
            }
            let now = MQTTClient.monotonicSeconds()
            let (stop, delay, lost) = state.withLock { state in
                let delay = state.schedule.ended(at: now, random: Double.random(in: 0...1))
                var lost: [Session] = []
                for name in state.order where state.sessions[name]?.connected == true {
                    state.sessions[name]?.connected = false
                    lost.append(state.sessions[name]!.session)
                }
                return (state.stopping, delay, lost)
            }
            if stop { break }
            log("\(reason); starting it again in \(Int((delay * 1000).rounded())) ms")
            for session in lost { session.onConnection(.disconnected(reason: reason, retryIn: delay)) }
            waitForWake(seconds: delay)
        }
        state.withLock { $0.finished = true }
        supervisorEnd.end()
    }

    /// Reads and dispatches frames until the process's stream ends: nil when it ended
    /// cleanly, otherwise why not.
    private func serve(_ descriptor: Int32) -> String? {
        var stream = BufferedStreamReader(descriptor: descriptor)
        while true {
            let frame: MQTTLinkFrame?
            do {
                frame = try MQTTLinkFrame.read(limit: frameLimit) { stream.fill($0) }
            } catch {
                return "\(error)"
            }
            guard let frame else { return nil }
            if let refusal = dispatch(frame) { return refusal }
        }
    }

    /// Has `reader` read and dispatch the frames until the process's stream ends, and waits
    /// for that: nil when it ended cleanly, otherwise why not. The reader takes a descriptor of
    /// its own on the same socket, which it closes; this one stays for the outbox and `reap`,
    /// whose shutdown of the socket ends the reader's stream too.
    private func readFrames(_ descriptor: Int32, through reader: any MQTTLinkReader) -> String? {
        let own = dup(descriptor)
        guard own >= 0 else { return "dup: \(String(cString: strerror(errno)))" }
        let ended = DispatchSemaphore(value: 0)
        let reason = Mutex<String?>(nil)
        reader.read(own, limit: frameLimit, frame: { [self] frame in dispatch(frame) }) { why in
            reason.withLock { $0 = why }
            ended.signal()
        }
        ended.wait()
        return reason.withLock { $0 }
    }

    /// Hands one frame from the link process to its session: nil, or why the stream must end.
    private func dispatch(_ frame: MQTTLinkFrame) -> String? {
        switch frame {
        case .message(let name, let topic, let payload):
            state.withLock { $0.sessions[name]?.session }?.onMessage(MQTTMessage(topic: topic, payload: payload))
        case .connected(let name, let index, let present):
            let brokers = state.withLock { $0.sessions[name]?.session.configuration.brokers }
            guard let brokers else { return nil }
            guard brokers.indices.contains(index) else { return "the link process named broker \(index) of \(brokers.count)" }
            state.withLock { $0.sessions[name]?.broker = brokers[index] }
            deliver(name, connected: true, .connected(broker: brokers[index], sessionPresent: present))
        case .disconnected(let name, let reason, let retryIn):
            deliver(name, connected: false, .disconnected(reason: reason, retryIn: retryIn))
        case .takenOver(let name, let retryIn):
            deliver(name, connected: false, .takenOver(retryIn: retryIn))
        case .packetTooLarge(let name, let retryIn, let discarding):
            deliver(name, connected: false, .packetTooLarge(retryIn: retryIn, discardingSession: discarding))
        case .subscription(let name, let event):
            state.withLock { $0.sessions[name]?.session }?.onSubscription(event)
        case .open, .subscribe, .unsubscribe, .publish, .done:
            return "the MQTT link process sent a frame only the daemon sends"
        }
        return nil
    }

    private func deliver(_ name: String, connected: Bool, _ event: MQTTConnectionEvent) {
        let session = state.withLock { state -> Session? in
            state.sessions[name]?.connected = connected
            return state.sessions[name]?.session
        }
        session?.onConnection(event)
    }

    /// How long `reap` waits for the process to exit once its socket is shut down.
    static let reapingGrace = Duration.seconds(3)

    /// Waits for the process to exit (it does at the end of its stream), for `reapingGrace`,
    /// then kills it; how it ended.
    private func reap(_ pid: pid_t, _ descriptor: Int32) -> String {
        Self.reap(pid, descriptor, grace: Self.reapingGrace)
    }

    /// `reap`, with its grace and the pause between looks given: the grace is a time on the
    /// clock, not a count of pauses, which on a loaded machine each last longer than asked
    /// (300 pauses of 10 ms took over a minute at load 20, while a stopping daemon waited).
    static func reap(
        _ pid: pid_t, _ descriptor: Int32, grace: Duration, pause: () -> Void = { usleep(10_000) }
    ) -> String {
        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        var status: Int32 = 0
        var reaped = false
        let deadline = ContinuousClock.now + grace
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno != EINTR) {
                reaped = result == pid
                break
            }
            guard ContinuousClock.now < deadline else { break }
            pause()
        }
        if !reaped {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        // WIFEXITED and friends are macros Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? "exited with status \((status >> 8) & 0xFF)" : "was killed by signal \(signal)"
    }

    private func waitForWake(seconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var descriptor = pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0)
        while !stopping {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return }
            let milliseconds = Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            if poll(&descriptor, 1, max(1, milliseconds)) > 0 { wakePipe.drain() }
        }
    }

    /// `executable arguments…` with the child's ends of two new socket pairs as descriptors 3
    /// (the frames) and 4 (the dones) and no other descriptor beyond the standard three, the
    /// signals as a new process has them, and this process's environment.
    private func spawn() -> Result<(pid_t, Int32, Int32), MQTTError> {
        var pair: [Int32] = [-1, -1]
        var donePair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(.invalidConfiguration("socketpair: \(String(cString: strerror(errno)))"))
        }
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &donePair) == 0 else {
            let reason = String(cString: strerror(errno))
            close(pair[0])
            close(pair[1])
            return .failure(.invalidConfiguration("socketpair: \(reason)"))
        }
        defer {
            close(pair[1])
            close(donePair[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 3)
        posix_spawn_file_actions_adddup2(&actions, donePair[1], 4)
        // Nothing else of this process: the link process reads what brokers send, and must
        // not hold the daemon's sockets (its listening socket, its clients' connections).
        SpawnDescriptors.closeFrom(5, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            close(pair[0])
            close(donePair[0])
            return .failure(.invalidConfiguration("posix_spawn \(executable): \(String(cString: strerror(rc)))"))
        }
        return .success((pid, pair[0], donePair[0]))
    }
}

/// Reads a link process's frames somewhere other than the thread that supervises it: on the
/// event loop of the process that handles them, which then wakes for the link's socket
/// itself rather than for a reader thread that hands it each frame.
public protocol MQTTLinkReader: Sendable {
    /// Reads `descriptor` (the daemon's end of the link's socket, this reader's own to close)
    /// until its stream ends, frames of at most `limit` bytes (`MQTTLinkFrame.read`'s rules),
    /// and hands each to `frame` in order; stops reading, and closes, when `frame` returns why
    /// the stream must end. Calls `ended` once, after the last frame: nil when the stream ended
    /// cleanly, otherwise why not.
    func read(
        _ descriptor: Int32, limit: Int, frame: @escaping @Sendable (MQTTLinkFrame) -> String?,
        ended: @escaping @Sendable (String?) -> Void)
}

/// libmosquitto's checks of topic names and filters.
enum MQTTTopic {
    static func checkFilter(_ topic: String) throws(MQTTError) {
        guard mosquitto_sub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalidTopic(topic) }
    }

    static func checkName(_ topic: String) throws(MQTTError) {
        guard mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalidTopic(topic) }
    }
}
