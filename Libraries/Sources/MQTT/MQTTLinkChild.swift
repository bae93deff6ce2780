import Foundation
import Glibc
import SelfWake
import Synchronization

/// The link process: libmosquitto's clients, away from the daemon, under a memory limit of
/// their own.
///
/// libmosquitto (2.0.11) allocates every packet the broker sends whole, as large as its header
/// says (up to 256 MiB), before anyone can look at it, and copies its payload once more; no
/// option bounds it on the client's side, and MQTT 5's Maximum Packet Size binds only a broker
/// that honours it. So the clients run here, in a process whose data is limited
/// (`RLIMIT_DATA`): a larger packet makes malloc fail, libmosquitto gives up the connection
/// (`MOSQ_ERR_NOMEM`), the client says so (`MQTTConnectionEvent.packetTooLarge`) and
/// reconnects with its backoff — and discards its session at the broker when the broker sends
/// the packet again; the daemon's memory never sees it. The limit is what the process holds when it starts, `perSession` for each session,
/// and `headroom`. The daemon reads what comes from here in frames it bounds itself (`MQTTLinkFrame`).
///
/// It serves the socket `descriptor` (one end of a socket pair; the daemon holds the other),
/// and exits when the daemon closes it or goes away. The daemon says which messages are done
/// on a socket of their own, `doneDescriptor`, read by a session's network thread when it
/// wants a place in the window (`DoneFedWindow`): a message costs this process the wake-up of
/// its network thread and no other.
public enum MQTTLinkChild {
    /// What the link process may allocate beyond what it holds when it starts and what its
    /// sessions need (`perSession` each): the largest packet it can take in, and more than the
    /// largest one the daemon asks for (256 KiB), twice over.
    public static let defaultHeadroom = 32 << 20
    /// A session's share of the limit: its thread's stack (1 MiB), libmosquitto's and TLS's state.
    public static let perSession = 2 << 20

    /// Runs the link process; never returns. `headroom` nil: no limit (under a sanitizer, whose
    /// shadow memory no such limit allows).
    /// `window`: how many messages the daemon holds at once, and how its sessions share them
    /// (`MQTTLinkFrame.done` frees a slot).
    public static func run(descriptor: Int32, doneDescriptor: Int32, headroom: Int?, window: MessageWindow = .pushes) -> Never {
        signal(SIGPIPE, SIG_IGN)
        let doneFed: DoneFedWindow
        do {
            doneFed = try DoneFedWindow(window, descriptor: doneDescriptor)
        } catch {
            complain("\(error)")
            exit(1)
        }
        let link = Link(descriptor: descriptor, headroom: headroom, baseline: dataInUse(), window: doneFed)
        link.limit(sessions: 0)
        link.serve()
    }

    /// A line on standard error, the daemon's log. Foundation's non-throwing
    /// `FileHandle.write(_:)` traps on a failed write (a log reader that is gone: EPIPE, SIGPIPE
    /// being ignored here); with the throwing one a line that cannot be written is lost instead.
    static func complain(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data("islandd mqtt link: \(text)\n".utf8))
    }

    /// VmData: the private writable memory the process holds, what `RLIMIT_DATA` limits.
    static func dataInUse() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmData:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    private final class Link: Sendable {
        let descriptor: Int32
        let headroom: Int?
        let baseline: Int
        /// One writer at a time: every session's network thread writes here.
        let writing = Mutex(())
        let sessions = Mutex<[String: MQTTClient]>([:])
        /// The messages sent to the daemon and not yet done, by session. A session's network
        /// thread waits here, not in a write: a write that waits holds up every session behind
        /// it in the one socket, a wait here holds up only its own session (whose broker then
        /// keeps what comes next). A new link process starts with an empty window: the dones of
        /// messages from before it may free slots early, which the daemon's own bound absorbs.
        let window: DoneFedWindow

        init(descriptor: Int32, headroom: Int?, baseline: Int, window: DoneFedWindow) {
            self.descriptor = descriptor
            self.headroom = headroom
            self.baseline = baseline
            self.window = window
        }

        /// Sets the data limit for `sessions` sessions: what the process held at its start, its
        /// sessions' share, and the headroom. Bounded by the apps holding tokens.
        func limit(sessions: Int) {
            guard let headroom else { return }
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_DATA.rawValue), &limit)
            let wanted = rlim_t(baseline + headroom + sessions * MQTTLinkChild.perSession)
            limit.rlim_cur = min(wanted, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_DATA.rawValue), &limit) != 0 {
                complain("setrlimit: \(String(cString: strerror(errno)))")
                exit(1)
            }
        }

        func serve() -> Never {
            // The sessions' threads write every message to this socket: waiting in `read`
            // here, this thread woke for each as the daemon read it.
            var stream = BufferedStreamReader(descriptor: descriptor, waitsWithPoll: true)
            while true {
                let frame: MQTTLinkFrame?
                do {
                    frame = try MQTTLinkFrame.read(limit: MQTTLinkProcess.commandLimit) { stream.fill($0) }
                } catch {
                    complain("\(error)")
                    stop(status: 1)
                }
                guard let frame else { stop(status: 0) }
                handle(frame)
            }
        }

        private func handle(_ frame: MQTTLinkFrame) {
            switch frame {
            case .open(let name, let bytes):
                guard sessions.withLock({ $0[name] == nil }) else { return }
                limit(sessions: sessions.withLock { $0.count } + 1)
                do {
                    let configuration = try JSONDecoder().decode(MQTTConfiguration.self, from: Data(bytes))
                    // The client passes on at most the largest packet the daemon takes: it
                    // refuses what is over its limit by size, which those bytes show as well.
                    let client = try MQTTClient(
                        configuration,
                        onBytes: { [self] topic, payload in
                            window.enter(name)
                            // From libmosquitto's bytes into the frame, copied once.
                            send(bytes: MQTTLinkFrame.encodedMessage(session: name, topic: topic, payload: payload))
                        },
                        onConnection: { [self] event in
                            switch event {
                            case .connected(let broker, let present):
                                let index = configuration.brokers.firstIndex(of: broker) ?? 0
                                send(.connected(session: name, broker: index, sessionPresent: present))
                            case .disconnected(let reason, let retryIn): send(.disconnected(session: name, reason: reason, retryIn: retryIn))
                            case .takenOver(let retryIn): send(.takenOver(session: name, retryIn: retryIn))
                            case .packetTooLarge(let retryIn, let discarding):
                                send(.packetTooLarge(session: name, retryIn: retryIn, discardingSession: discarding))
                            }
                        },
                        onSubscription: { [self] event in send(.subscription(session: name, event: event)) })
                    sessions.withLock { $0[name] = client }
                    client.start()
                } catch {
                    send(.disconnected(session: name, reason: "\(error)", retryIn: 60))
                }
            case .subscribe(let name, let topic):
                try? client(name)?.subscribe(topic)
            case .unsubscribe(let name, let topic):
                try? client(name)?.unsubscribe(topic)
            case .publish(let name, let topic, let payload, let retain):
                // Lost, as in the daemon's own client, while the broker is away or slow.
                try? client(name)?.publish(topic, payload: payload, qos: 1, retain: retain)
            case .done(let name):
                window.leave(name)
            case .message, .connected, .disconnected, .takenOver, .packetTooLarge, .subscription:
                complain("the daemon sent a frame only the link sends")
            }
        }

        private func client(_ name: String) -> MQTTClient? {
            sessions.withLock { $0[name] }
        }

        /// Blocks while the daemon does not read: the broker, not this process, then holds
        /// what comes next.
        private func send(_ frame: MQTTLinkFrame) {
            send(bytes: frame.encoded)
        }

        private func send(bytes: [UInt8]) {
            let written = writing.withLock { _ in
                bytes.withUnsafeBytes { writeFully(descriptor, $0) }
            }
            // The daemon is gone.
            if !written { stop(status: 0) }
        }

        /// Disconnects every session cleanly (bounded) and exits.
        private func stop(status: Int32) -> Never {
            let clients = sessions.withLock { Array($0.values) }
            let done = DispatchSemaphore(value: 0)
            Task {
                await withTaskGroup(of: Void.self) { group in
                    for client in clients { group.addTask { await client.shutdown(timeout: .seconds(2)) } }
                }
                done.signal()
            }
            _ = done.wait(timeout: .now() + 3)
            exit(status)
        }

        func complain(_ text: String) {
            MQTTLinkChild.complain(text)
        }
    }
}

/// The link process's window (`MessageWindow`), told of the messages done by the daemon's
/// `done` frames on a socket of their own. Nobody waits on that socket while the window has
/// room: a session's network thread reads what dones have come, without waiting, when the
/// window refuses it a place or someone waits for one, and only a thread that still finds
/// none waits on the socket (one at a time; the others on the lock's condition) — so a
/// message done wakes no thread of this process, where a reader of the dones woke for each,
/// and the dones cost a `recv` once every few dozen messages, not one each.
package final class DoneFedWindow: @unchecked Sendable {
    // @unchecked: `window`, `pending`, `polling` and `ended` are only read and changed with
    // `condition` locked; `descriptor` is read by one thread at a time, the one polling or
    // the one holding the lock.
    private let condition = NSCondition()
    private var window: MessageWindow
    let descriptor: Int32
    /// Bytes of the dones' stream read and not yet a whole frame.
    private var pending: [UInt8] = []
    /// A thread waits on the socket.
    private var polling = false
    /// The stream ended (the daemon is gone) or broke its rules: no done comes any more.
    private var ended = false
    /// What one read takes: many dones (each under 300 bytes).
    private var buffer = [UInt8](repeating: 0, count: 4096)
    /// Wakes the thread waiting on the socket when another thread has read the dones it waits
    /// for: they are no longer on the socket to wake it.
    private let wakePipe: WakePipe

    package init(_ window: MessageWindow, descriptor: Int32) throws(MQTTError) {
        self.window = window
        self.descriptor = descriptor
        do {
            wakePipe = try WakePipe()
        } catch {
            throw .invalidConfiguration("\(error)")
        }
    }

    /// Waits until `session` may take a place, and takes it.
    package func enter(_ session: String) {
        condition.lock()
        defer { condition.unlock() }
        // While nobody waits, the dones not read yet can only make the window more willing
        // (fewer held, more free), so a place it grants now it would grant after them too: they
        // are read when a place is refused, once every few dozen messages rather than with a
        // `recv` for each. They are at most a window's worth, which the socket holds. Once
        // someone waits, they decide who is next, and are read first.
        if window.waiting.isEmpty, window.take(session) { return }
        readDones()
        guard !window.take(session) else { return }
        window.wait(session)
        repeat {
            if !polling && !ended {
                polling = true
                condition.unlock()
                var ready = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&ready, 2, -1)
                condition.lock()
                polling = false
                if ready[1].revents != 0 { wakePipe.drain() }
                readDones()
                // Waiters for the places freed, and for someone to wait on the socket.
                condition.broadcast()
            } else {
                condition.wait()
            }
        } while !window.take(session)
        window.stopWaiting(session)
        // Another waiter may take a place now that this one no longer waits.
        condition.broadcast()
    }

    /// A message of `session` is done (a `done` on the link's main socket, as before the dones
    /// had one of their own).
    package func leave(_ session: String) {
        condition.lock()
        window.release(session)
        if polling { wakePipe.wake() }
        condition.broadcast()
        condition.unlock()
    }

    /// Frees a place for each done that has come, without waiting. With `condition` locked.
    private func readDones() {
        guard !ended else { return }
        let held = window.total
        // A thread waits on the socket for what this one read: it must look again.
        defer { if polling && window.total != held { wakePipe.wake() } }
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                pending.append(contentsOf: buffer[0..<count])
                if count < buffer.count { break }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                // Nothing more now (EAGAIN), or the daemon is gone: the main socket says so too.
                if !(count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { ended = true }
                break
            }
        }
        var start = 0
        pending.withUnsafeBufferPointer { bytes in
            // Dones come in runs of one session's (often all of them are one session's): a run
            // is released at once, with one `String` made of its name and one look-up.
            var run: (name: Range<Int>, count: Int)?
            func release() {
                guard let (name, count) = run else { return }
                window.release(String(decoding: UnsafeBufferPointer(rebasing: bytes[name]), as: UTF8.self), count: count)
                run = nil
            }
            while bytes.count - start >= MQTTLinkFrame.headerBytes {
                let length = MQTTLinkFrame.length(header: bytes[start...])
                guard length > 0, length <= MQTTLinkProcess.commandLimit else {
                    ended = true
                    break
                }
                guard bytes.count - start - MQTTLinkFrame.headerBytes >= length else { break }
                let bodyStart = start + MQTTLinkFrame.headerBytes
                start = bodyStart + length
                // Read where it lies, not copied into a frame of its own first.
                guard let relative = MQTTLinkFrame.doneSession(body: UnsafeBufferPointer(rebasing: bytes[bodyStart..<start])) else {
                    ended = true
                    break
                }
                let name = (bodyStart + relative.lowerBound)..<(bodyStart + relative.upperBound)
                if let current = run, current.name.count == name.count,
                    memcmp(bytes.baseAddress! + current.name.lowerBound, bytes.baseAddress! + name.lowerBound, name.count) == 0
                {
                    run!.count += 1
                } else {
                    release()
                    run = (name, 1)
                }
            }
            release()
        }
        if ended || start == pending.count {
            pending.removeAll(keepingCapacity: !ended)
        } else {
            pending.removeFirst(start)
        }
    }
}

/// Reads until `buffer` is full; false at the end of the stream or on an error.
func readFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
    var done = 0
    while done < buffer.count {
        let count = Glibc.read(descriptor, buffer.baseAddress! + done, buffer.count - done)
        if count > 0 {
            done += count
        } else if count < 0 && errno == EINTR {
            continue
        } else {
            return false
        }
    }
    return true
}

/// Writes all of `bytes`, waiting for room; false on an error.
func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var done = 0
    while done < bytes.count {
        let count = send(descriptor, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
        if count > 0 {
            done += count
        } else if count < 0 && errno == EINTR {
            continue
        } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            var descriptor = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&descriptor, 1, -1)
        } else {
            return false
        }
    }
    return true
}
