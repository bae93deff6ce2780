import CLinuxScheduling
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// How the event loop asks for the CPU: a short time slice while the CPUs are contended, the
/// kernel's default while they are not.
///
/// A short slice (EEVDF, Linux 6.12 and later; unprivileged) lets the loop preempt whatever
/// runs on its CPU when it wakes. On a busy machine that is what keeps an update quick: the
/// loop woke and then waited 4–8 ms for a CPU that a compiler held for its whole slice
/// (`perf sched timehist`). On a quiet one it costs the presenter: the loop preempts the very
/// producer whose call woke it, which stays runnable on the loop's CPU, so the wake-up of the
/// presenter is not kept on the loop's CPU (the scheduler keeps a synchronous wake-up there
/// only when the waker runs alone) and goes to the idle one, which takes ~35 µs to leave its
/// halt. With the default slice the presenter ran on the loop's CPU 5 µs after the loop slept
/// in nine updates of ten, and the one-presenter median fell from 76–90 µs to 61
/// (`Benchmarks/anatomy.py`; docs/benchmarks.md, "The loop's time slice").
///
/// So the loop looks, at the end of a turn and at most four times a second (an idle daemon
/// never wakes for it), at how long it waited for a CPU itself and how long the machine's
/// runnable threads did (the kernel's pressure stall information), and asks for the short
/// slice while either says the CPUs are contended (`CPUContention`). Without either file it
/// cannot tell, and keeps the short slice throughout: a quiet machine's median is the smaller
/// loss. Touched only on the loop.
final class EventLoopScheduling: @unchecked Sendable {
    /// The shortest slice the kernel takes: a turn of the loop for one update is a few tens of
    /// microseconds.
    static let shortSlice: UInt64 = 100_000
    /// How often, at most, the loop looks (two reads of a few hundred nanoseconds' work in the
    /// kernel).
    static let sampleInterval: Double = 0.25

    private let pressureFile: String
    private let loopFile: String
    private var pressure: KernelFile?
    private var loopStat: KernelFile?
    private var contention = CPUContention()
    private var sampledAt = -Double.infinity
    /// Seconds on a clock that only goes forward: the wall clock may be set back, and a verdict
    /// held until a time before then would be held for as long.
    private let now: () -> Double
    private let logger: Logger

    init(
        pressureFile: String = "/proc/pressure/cpu", loopFile: String = "/proc/thread-self/schedstat",
        now: @escaping () -> Double = EventLoopScheduling.monotonicSeconds, logger: Logger
    ) {
        self.pressureFile = pressureFile
        self.loopFile = loopFile
        self.now = now
        self.logger = logger
    }

    /// `CLOCK_MONOTONIC_COARSE`: read from the vDSO, no system call, to the kernel's tick.
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Called once on the loop's thread, as it starts (the loop's own file is its thread's).
    func start() {
        let now = now()
        pressure = KernelFile(path: pressureFile) { CPUContention.pressure(in: $0) != nil }
        loopStat = KernelFile(path: loopFile) { CPUContention.loopWaiting(in: $0) != nil }
        guard let sample = sample(at: now) else {
            logger.debug("no CPU pressure or scheduler statistics: the event loop keeps a short time slice")
            request(slice: Self.shortSlice)
            return
        }
        sampledAt = now
        if contention.begin(sample) { decided(contended: true) }
    }

    /// Whether the loop takes the short slice now.
    var isContended: Bool { contention.isContended }

    /// Called on the loop at the end of each turn that decided something.
    func turnEnded() {
        let now = now()
        guard now - sampledAt >= Self.sampleInterval else { return }
        sampledAt = now
        guard let sample = sample(at: now), let contended = contention.sample(sample) else { return }
        decided(contended: contended)
    }

    private func sample(at now: Double) -> CPUContention.Sample? {
        let pressure = self.pressure?.read().flatMap { CPUContention.pressure(in: $0) }
        let loop = loopStat?.read().flatMap { CPUContention.loopWaiting(in: $0) }
        guard pressure != nil || loop != nil else { return nil }
        return CPUContention.Sample(
            at: now, machineWaitedMicroseconds: pressure?.waitedMicroseconds, machineRecentShare: pressure?.recentShare,
            loopWaitedNanoseconds: loop?.waitedNanoseconds, loopRuns: loop?.runs)
    }

    private func decided(contended: Bool) {
        logger.debug(
            contended
                ? "the CPUs are contended: the event loop asks for a short time slice"
                : "the CPUs are calm again: the event loop takes the default time slice")
        // 0 is the kernel's default slice.
        request(slice: contended ? Self.shortSlice : 0)
    }

    private func request(slice: UInt64) {
        if island_request_time_slice(slice) != 0 {
            logger.debug("the scheduler took no time slice for the event loop", metadata: ["errno": "\(errno)"])
        }
    }
}

/// Whether the CPUs are contended, from two running totals sampled together: the time in which
/// at least one runnable thread of the machine waited for a CPU (`some` in /proc/pressure/cpu,
/// µs), and the time the loop's own thread waited to run, over how many times it ran (its
/// `schedstat`). Contended when, between two samples, the machine's threads waited 40% of the
/// time (three threads that never sleep on two CPUs wait half of it; the daemon's own
/// benchmark, ten processes on two CPUs, 12–13%), or the loop waited 200 µs a run on average (a
/// burst of work on every CPU, such as fifty daemons taking one broadcast, which the machine's
/// share over a quarter second hides: 4–6%). Calm again only once the machine's share is below
/// 20%, the loop's wait below 50 µs, and nothing was contended for `hold` seconds, so that a
/// short slice, which shortens the loop's own waits, does not flip back at once.
struct CPUContention {
    static let machineContendedFrom = 0.4
    static let machineCalmBelow = 0.2
    static let loopContendedFrom = 200e-6
    static let loopCalmBelow = 50e-6
    static let hold: Double = 10

    struct Sample {
        var at: Double
        var machineWaitedMicroseconds: UInt64?
        /// The kernel's own average share of the last ten seconds (`avg10`, as a fraction).
        var machineRecentShare: Double? = nil
        var loopWaitedNanoseconds: UInt64?
        var loopRuns: UInt64?
    }

    private(set) var isContended = false
    private var contendedAt = -Double.infinity
    private var last: Sample?

    init() {}

    /// The first sample, whose `machineRecentShare` gives a verdict until the next. Returns
    /// whether the CPUs are contended.
    mutating func begin(_ sample: Sample) -> Bool {
        last = sample
        isContended = (sample.machineRecentShare ?? 0) >= Self.machineContendedFrom
        if isContended { contendedAt = sample.at }
        return isContended
    }

    /// Takes a sample and returns the new verdict when it changes. A first sample, a clock that
    /// went back and totals that fell (no such kernel) give no verdict.
    mutating func sample(_ sample: Sample) -> Bool? {
        defer { last = sample }
        guard let last, sample.at > last.at else { return nil }
        let seconds = sample.at - last.at
        var machineShare = 0.0
        if let now = sample.machineWaitedMicroseconds, let then = last.machineWaitedMicroseconds {
            guard now >= then else { return nil }
            machineShare = Double(now - then) / 1_000_000 / seconds
        }
        var loopWait = 0.0
        if let waited = sample.loopWaitedNanoseconds, let runs = sample.loopRuns,
            let waitedBefore = last.loopWaitedNanoseconds, let runsBefore = last.loopRuns
        {
            guard waited >= waitedBefore, runs >= runsBefore else { return nil }
            if runs > runsBefore { loopWait = Double(waited - waitedBefore) / 1e9 / Double(runs - runsBefore) }
        }
        if machineShare >= Self.machineContendedFrom || loopWait >= Self.loopContendedFrom {
            contendedAt = sample.at
            guard !isContended else { return nil }
            isContended = true
            return true
        }
        guard isContended, machineShare < Self.machineCalmBelow, loopWait < Self.loopCalmBelow,
            sample.at - contendedAt >= Self.hold
        else { return nil }
        isContended = false
        return false
    }

    /// /proc/pressure/cpu's first line, "some avg10=1.50 avg60=0.20 avg300=0.05 total=123456":
    /// the share of the last ten seconds in which a runnable thread waited (`avg10`, as a
    /// fraction), and the running total of such waiting in microseconds.
    static func pressure(in text: [UInt8]) -> (recentShare: Double, waitedMicroseconds: UInt64)? {
        guard text.starts(with: "some ".utf8) else { return nil }
        var fields: [Substring: Substring] = [:]
        for field in firstLine(text).split(separator: " ").dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { return nil }
            fields[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let average = fields["avg10"].flatMap({ Double($0) }), average >= 0, average <= 100,
            let total = fields["total"].flatMap({ UInt64($0) })
        else { return nil }
        return (average / 100, total)
    }

    /// A thread's `schedstat`, "run_ns wait_ns runs": the time it waited to run, in
    /// nanoseconds, and how many times it ran.
    static func loopWaiting(in text: [UInt8]) -> (waitedNanoseconds: UInt64, runs: UInt64)? {
        let fields = firstLine(text).split(separator: " ")
        guard fields.count == 3, UInt64(fields[0]) != nil, let waited = UInt64(fields[1]), let runs = UInt64(fields[2]) else {
            return nil
        }
        return (waited, runs)
    }

    private static func firstLine(_ text: [UInt8]) -> String {
        String(decoding: text.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}

/// A file of the kernel's (/proc), kept open and read from its start each time.
final class KernelFile {
    private let fd: Int32

    /// Nil when the file cannot be opened (not following a symbolic link at its end, not
    /// waiting on a FIFO), or `reads` says its first read is not what the kernel writes.
    init?(path: String, reads: ([UInt8]) -> Bool) {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        // A failed initializer of a class whose properties are set still runs `deinit`.
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let text = read(), reads(text) else { return nil }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Up to 256 bytes from the start, or nil when nothing could be read.
    func read() -> [UInt8]? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            let count = pread(fd, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            return Array(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }
}
