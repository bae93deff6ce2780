#if canImport(Glibc)
import Glibc
#endif
import IslandBridge
import Logging
import SDBus
import Systemd

/// Who is behind a bus connection, by islandd's own facts (`Systemd`'s `ProcessIdentity`),
/// looked up for the very connection that sent something.
///
/// The steps, each closing a race:
/// 1. `GetConnectionCredentials(unique name)`: the bus's own record (`SO_PEERCRED`) of the
///    process that opened *that* connection. Unique names are never reused on a bus, so the
///    answer cannot be about a later connection. A `UnixUserID` other than ours verifies
///    nothing (its processes are not the user's apps).
/// 2. `pidfd_open(pid)`: a handle on the process with that pid now.
/// 3. `NameHasOwner(unique name)` after that: the connection is still there, so (short of its
///    socket having been handed to another process) the process that opened it has not
///    exited, and the pid, hence the pidfd, is still that process's.
/// 4. The facts (unit, sandbox, executable) by pid, then the pidfd polled: a process that
///    exited meanwhile may have had its pid reused, so the facts count for nothing.
/// dbus-daemon 1.14 (Debian 12) gives no `ProcessFD` in the credentials, and SDBus does not
/// read file descriptors out of messages; with either, step 2 and 3 would be one.
extension Bridge {
    /// Calls `body` with what the bridge can establish about `sender`, at once if known.
    func identify(_ sender: String, then body: @escaping (SenderIdentity) -> Void) {
        if let known = identities.known(sender) {
            body(known)
            return
        }
        guard identities.wait(for: sender, body) else { return }
        let bus = "org.freedesktop.DBus"
        // Answers about a previous bus are dropped: a restarted dbus-daemon hands out the same
        // unique names again.
        let generation = identities.generation
        let answer = { [self] (identity: SenderIdentity) in
            guard identities.generation == generation else { return }
            identified(sender, identity)
        }
        do {
            guard let connection = self.bus else { return answer(.unknown) }
            try connection.call(destination: bus, path: "/org/freedesktop/DBus", interface: bus, member: "GetConnectionCredentials",
                                arguments: [.string(sender)]) { [self] result in
                guard case .success(let reply) = result, let credentials = (try? reply.arguments())?.first?.dictionary,
                      let pid = credentials["ProcessID"]?.integer.flatMap(Int32.init(exactly:)), pid > 0,
                      let uid = credentials["UnixUserID"]?.integer, uid == Int64(getuid())
                else { return answer(.unknown) }
                let handle = ProcessHandle(pid: pid)
                if handle.isGone { return answer(.unknown) }
                do {
                    try self.bus?.call(destination: bus, path: "/org/freedesktop/DBus", interface: bus, member: "NameHasOwner",
                                       arguments: [.string(sender)]) { result in
                        guard case .success(let reply) = result, (try? reply.arguments())?.first?.bool == true else {
                            return answer(.unknown)
                        }
                        let identity = Self.facts(pid: pid)
                        answer(handle.isGone ? .unknown : identity)
                    }
                } catch {
                    answer(.unknown)
                }
            }
        } catch {
            answer(.unknown)
        }
    }

    /// A new bus: what was established about the old one's senders is forgotten, and whoever
    /// still waits for an answer about one gets `unknown`.
    func forgetSenders() {
        let waiting = identities.reset()
        for body in waiting { body(.unknown) }
    }

    private func identified(_ sender: String, _ identity: SenderIdentity) {
        if identity == .unknown {
            logger.debug("a sender is not identified as any app", metadata: ["sender": "\(sender)"])
        }
        for body in identities.resolve(sender, identity) { body(identity) }
    }

    /// The facts islandd identifies a peer by. Roots of processes in user namespaces of their
    /// own are not read (a FUSE root could stall the bridge): a Flatpak is known by its
    /// `app-flatpak-<id>-<n>.scope`, which its sandbox cannot leave.
    static func facts(pid: Int32) -> SenderIdentity {
        let unit = ProcessIdentity.userUnit(pid: pid) ?? ProcessIdentity.systemUnit(pid: pid)
        let unitAppID = unit.flatMap(ProcessIdentity.appID(fromUnit:))
        let confinement: SenderIdentity.Confinement = switch ProcessIdentity.sandbox(pid: pid, readingForeignRoots: false) {
        case .none: .none
        case .flatpak(let app?, _): .flatpak(appID: app)
        case .snap(let name): .snap(name: name)
        default: .other
        }
        return SenderIdentity(confinement: confinement, unitAppID: unitAppID,
                              executable: confinement == .none ? ProcessIdentity.executablePath(pid: pid) : nil)
    }
}

/// What the bridge established about the senders it met on the current bus, and who waits
/// for a lookup under way. Bounded: the oldest answers are forgotten (and looked up again
/// should their sender come back).
struct SenderIdentities {
    /// Which bus the answers are about.
    private(set) var generation = 0
    private var answers: [String: SenderIdentity] = [:]
    private var order: [String] = []
    private var waiting: [String: [(SenderIdentity) -> Void]] = [:]
    static let maximumKnown = 256

    func known(_ sender: String) -> SenderIdentity? { answers[sender] }

    /// Whether a lookup for `sender` is under way.
    func isPending(_ sender: String) -> Bool { waiting[sender] != nil }

    /// Queues `body` for `sender`'s answer; true when a lookup must start.
    mutating func wait(for sender: String, _ body: @escaping (SenderIdentity) -> Void) -> Bool {
        if waiting[sender] != nil {
            waiting[sender]?.append(body)
            return false
        }
        waiting[sender] = [body]
        return true
    }

    /// Forgets everything (a new bus); the callbacks that were waiting.
    mutating func reset() -> [(SenderIdentity) -> Void] {
        defer {
            generation += 1
            answers = [:]
            order = []
            waiting = [:]
        }
        return waiting.keys.sorted().flatMap { waiting[$0] ?? [] }
    }

    /// Records the answer; the callbacks that waited for it.
    mutating func resolve(_ sender: String, _ identity: SenderIdentity) -> [(SenderIdentity) -> Void] {
        if answers.updateValue(identity, forKey: sender) == nil {
            order.append(sender)
            if order.count > Self.maximumKnown { answers[order.removeFirst()] = nil }
        }
        return waiting.removeValue(forKey: sender) ?? []
    }
}

/// A pidfd on a process, to tell whether the process a pid named has exited since.
final class ProcessHandle {
    private let descriptor: Int32?

    init(pid: Int32) {
        // pidfd_open(2) (Linux 5.3, glibc 2.36), found at run time: where it is missing, only
        // the connection's presence vouches for the pid.
        typealias PidfdOpen = @convention(c) (Int32, UInt32) -> Int32
        if let symbol = dlsym(nil, "pidfd_open") {
            let fd = unsafeBitCast(symbol, to: PidfdOpen.self)(pid, 0)
            descriptor = fd >= 0 ? fd : (errno == ESRCH ? -1 : nil)
        } else {
            descriptor = nil
        }
    }

    /// The process exited (a pidfd turns readable), or was already gone when opened.
    var isGone: Bool {
        guard let descriptor else { return false }
        guard descriptor >= 0 else { return true }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    deinit {
        if let descriptor, descriptor >= 0 { close(descriptor) }
    }
}
