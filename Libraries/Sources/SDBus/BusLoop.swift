import CSystemd
import Dispatch
import Foundation
import Glibc
import SelfWake
import Synchronization

/// An sd-event loop on a thread of its own, and a serial executor that runs on it.
///
/// sd-bus is not thread-safe: a bus, its slots and its messages may only be touched by the
/// thread that dispatches it. So the loop is also an executor: an actor whose
/// `unownedExecutor` is this loop's runs its jobs on the loop thread, between the loop's own
/// dispatches, and every callback sd-bus makes (a match, a reply, a method call) runs there
/// too. Work from other threads (a Varlink reply, a signal handler) reaches the loop by
/// enqueueing a job, which wakes the loop through a pipe.
///
/// The loop sleeps in `epoll_wait` until a descriptor it watches is ready or a timer it holds
/// is due: with no traffic and no timer armed it does not wake at all.
///
/// `@unchecked Sendable` because its one mutable field, `eventLoop`, is written by the loop
/// thread before `started` is signalled and read only on that thread afterwards (and by `init`,
/// after waiting on `started`); everything else is a `let`, a `Mutex` or an `Atomic`.
public final class BusLoop: SerialExecutor, @unchecked Sendable {
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private let pending = Mutex<[Work]>([])
    /// Woken once per batch of jobs; the loop drains it when it runs them.
    private let wake: WakePipe
    /// The loop thread's id, set once before it runs anything.
    private let loopThread = Atomic<UInt>(0)
    /// Set by the loop thread before it signals `started`; read only on the loop thread after.
    private var eventLoop: OpaquePointer?
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the loop thread. `name` is the thread's name (at most 15 bytes are kept).
    public init(name: String = "sd-bus") throws(BusError) {
        do {
            wake = try WakePipe()
        } catch {
            throw BusError(errno: error.errno, doing: "pipe")
        }
        let threadName = String(name.utf8.prefix(15))!
        let thread = Thread { [self] in
            // Named from inside, in the kernel's own file for it: a new thread starts with its
            // creator's name (a Dispatch worker's, when created from async code), and
            // Foundation's `Thread.name` did not always reach the kernel (the bridge benchmark
            // found the loop still called "-qos.overcommit"). pthread_setname_np and prctl do
            // not import into Swift (a GNU extension; variadic).
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = threadName.withCString { write(comm, $0, strlen($0)) }
                close(comm)
            }
            runThread()
        }
        thread.start()
        started.wait()
        if eventLoop == nil {
            finished.wait()
            throw BusError(errno: ENOMEM, doing: "sd_event_new")
        }
    }

    /// The sd-event loop; use only on the loop thread.
    var event: OpaquePointer {
        precondition(isCurrent, "the sd-event loop is used off its thread")
        return eventLoop!
    }

    /// Whether the caller runs on the loop thread.
    public var isCurrent: Bool {
        pthread_equal(pthread_self(), pthread_t(loopThread.load(ordering: .acquiring))) != 0
    }

    /// Ends the loop once the jobs queued before have run, and waits for its thread.
    /// Call it from another thread, after everything using the loop is closed.
    public func shutdown() {
        precondition(!isCurrent, "BusLoop.shutdown() from its own thread would wait for itself")
        execute { [self] in _ = sd_event_exit(event, 0) }
        finished.wait()
    }

    // MARK: SerialExecutor

    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    /// Runs `body` on the loop thread, after what is already queued.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        enqueue(.closure(body))
    }

    private func enqueue(_ work: Work) {
        let wasEmpty = pending.withLock { queue in
            queue.append(work)
            return queue.count == 1
        }
        // One wake-up per batch: the loop drains everything queued when it reads.
        if wasEmpty { wake.wake() }
    }

    public func checkIsolated() {
        precondition(isCurrent, "expected to run on the sd-bus loop thread")
    }

    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }

    // MARK: The loop thread

    private func runThread() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        var loop: OpaquePointer?
        guard sd_event_new(&loop) >= 0, let loop else {
            started.signal()
            finished.signal()
            return
        }
        eventLoop = loop
        var source: OpaquePointer?
        let added = sd_event_add_io(
            loop, &source, wake.readEnd, UInt32(EPOLLIN.rawValue),
            { _, _, _, userdata in
                Unmanaged<BusLoop>.fromOpaque(userdata!).takeUnretainedValue().runPending()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        started.signal()
        if added >= 0 {
            _ = sd_event_loop(loop)
        }
        sd_event_source_unref(source)
        eventLoop = nil
        sd_event_unref(loop)
        finished.signal()
    }

    private func runPending() {
        wake.drain()
        let batch = pending.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        let executor = asUnownedSerialExecutor()
        for work in batch {
            switch work {
            case .job(let job): job.runSynchronously(on: executor)
            case .closure(let body): body()
            }
        }
    }
}
