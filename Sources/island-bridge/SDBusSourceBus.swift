#if canImport(Glibc)
import Glibc
#endif
import IslandBridge
import Logging
import SDBus
import Systemd

/// The sources' bus (`SourceBus`) on a real connection: `SDBus.Bus` as is, its monitors
/// connected to the same address, and senders identified by the bus's credentials and the
/// process's own facts. One per connection; `close()` lets go of it and its monitors.
final class SDBusSourceBus: SourceBus {
    let bus: Bus
    private let address: String?
    private let logger: Logger
    private var monitors: [Weak<Bus>] = []
    /// Runs what waits for the end of the current dispatch (`afterDispatch`).
    private var nextTurn: LoopTimer?
    private var waiting: [() -> Void] = []

    init(_ bus: Bus, address: String?, logger: Logger) {
        self.bus = bus
        self.address = address
        self.logger = logger
    }

    func close() {
        for monitor in monitors { monitor.value?.close() }
        monitors = []
        nextTurn = nil
        waiting = []
        bus.close()
    }

    func addMatch(_ rule: String, _ handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription {
        try bus.addMatch(rule) { handler($0) }
    }

    func call(
        destination: String, path: String, interface: String, member: String, arguments: [BusValue], timeout: Duration,
        reply: @escaping (Result<any IncomingMessage, BusError>) -> Void
    ) throws(BusError) {
        try bus.call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout
        ) { result in reply(result.map { message -> any IncomingMessage in message }) }
    }

    func export(
        _ interface: ExportedInterface, at path: String,
        handler: @escaping (any IncomingMessage) -> MethodResult
    ) throws(BusError) -> BusSubscription {
        try bus.export(interface, at: path) { handler($0) }
    }

    func requestName(
        _ name: String, allowReplacement: Bool, queue: Bool,
        completion: @escaping (Result<Bus.NameOwnership, BusError>) -> Void
    ) throws(BusError) {
        try bus.requestName(name, allowReplacement: allowReplacement, queue: queue, completion: completion)
    }

    func emitSignal(path: String, interface: String, member: String) throws(BusError) {
        try bus.emitSignal(path: path, interface: interface, member: member)
    }

    func track(_ name: String, whenGone: @escaping () -> Void) throws(BusError) -> BusSubscription {
        try bus.track([name], whenGone: whenGone)
    }

    func monitor(rules: [String], handler: @escaping (any IncomingMessage) -> Void) throws(BusError) -> BusSubscription {
        let monitor = try Bus.monitor(
            address: address, rules: rules, loop: bus.loop, description: "island-bridge-monitor",
            handler: { handler($0) },
            onDisconnect: { [logger] in
                // The main connection notices the same loss and reconnects both.
                logger.debug("the monitor connection closed")
            })
        monitors.append(Weak(monitor))
        return monitor
    }

    func afterDispatch(_ body: @escaping () -> Void) {
        waiting.append(body)
        if nextTurn == nil {
            do {
                nextTurn = try LoopTimer(loop: bus.loop) { [weak self] in self?.runWaiting() }
            } catch {
                // No timer: the loop cannot arm anything, and what waits stays held until
                // the connection goes, which is later than asked but never too early.
                logger.warning("cannot arm a timer on the bus loop", metadata: ["error": "\(error)"])
                return
            }
        }
        nextTurn?.arm(after: .zero)
    }

    private func runWaiting() {
        let due = waiting
        waiting = []
        for body in due { body() }
    }

    // MARK: Who a sender is

    /// What the bus and the process's own facts establish about `sender`, by islandd's own
    /// facts (`Systemd`'s `ProcessIdentity`), looked up for the very connection that sent
    /// something.
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
    func identify(_ sender: String, answer: @escaping (SenderIdentity) -> Void) {
        do {
            try callDriver("GetConnectionCredentials", [.string(sender)]) { [weak self] result in
                guard case .success(let reply) = result, let credentials = (try? reply.arguments())?.first?.dictionary,
                    let pid = credentials["ProcessID"]?.integer.flatMap(Int32.init(exactly:)), pid > 0,
                    let uid = credentials["UnixUserID"]?.integer, uid == Int64(getuid())
                else { return answer(.unknown) }
                let handle = ProcessHandle(pid: pid)
                if handle.isGone { return answer(.unknown) }
                do {
                    try self?.callDriver("NameHasOwner", [.string(sender)]) { result in
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

    /// The facts islandd identifies a peer by. Roots of processes in user namespaces of their
    /// own are not read (a FUSE root could stall the bridge): a Flatpak is known by its
    /// `app-flatpak-<id>-<n>.scope`, which its sandbox cannot leave.
    static func facts(pid: Int32) -> SenderIdentity {
        let unit = ProcessIdentity.userUnit(pid: pid) ?? ProcessIdentity.systemUnit(pid: pid)
        let unitAppID = unit.flatMap(ProcessIdentity.appID(fromUnit:))
        let confinement: SenderIdentity.Confinement =
            switch ProcessIdentity.sandbox(pid: pid, readingForeignRoots: false) {
            case .none: .none
            case .flatpak(let app?, _): .flatpak(appID: app)
            case .snap(let name): .snap(name: name)
            default: .other
            }
        return SenderIdentity(
            confinement: confinement, unitAppID: unitAppID,
            executable: confinement == .none ? ProcessIdentity.executablePath(pid: pid) : nil)
    }
}

/// A monitor the sources hold, which `close()` closes should they not have let go of it yet.
private struct Weak<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
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
