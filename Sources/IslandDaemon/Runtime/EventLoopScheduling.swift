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
/// So the loop samples the kernel's pressure stall information at the end of a turn, at most
/// four times a second (an idle daemon never wakes for it), and asks for the short slice while
/// runnable threads have waited for a CPU much of the time (`CPUContention`); as it starts, it
/// goes by the kernel's own average of the last ten seconds. Without that
/// file (a kernel without PSI) it cannot tell, and keeps the short slice throughout: a quiet
/// machine's median is the smaller loss. Touched only on the loop.
final class EventLoopScheduling: @unchecked Sendable {
    /// The shortest slice the kernel takes: a turn of the loop for one update is a few tens of
    /// microseconds.
    static let shortSlice: UInt64 = 100_000
    /// How often, at most, the loop looks at the CPUs' pressure (a read of a few hundred
    /// nanoseconds' work in the kernel).
    static let sampleInterval: Double = 0.25

    private let pressure: PressureStallFile?
    private var contention = CPUContention()
    private var sampledAt = -Double.infinity
    private let logger: Logger

    init(pressureFile: String = "/proc/pressure/cpu", logger: Logger) {
        self.pressure = PressureStallFile(path: pressureFile)
        self.logger = logger
    }

    /// Called once on the loop's thread, as it starts.
    func start(now: Double) {
        guard let pressure, let some = pressure.some() else {
            logger.debug("no CPU pressure information: the event loop keeps a short time slice")
            request(slice: Self.shortSlice)
            return
        }
        sampledAt = now
        if contention.begin(at: now, waitedMicroseconds: some.waitedMicroseconds, recentShare: some.recentShare) {
            decided(contended: true)
        }
    }

    /// Called on the loop at the end of each turn that decided something, with the time.
    func turnEnded(now: Double) {
        guard now - sampledAt >= Self.sampleInterval, let pressure else { return }
        sampledAt = now
        guard let some = pressure.some() else { return }
        if let contended = contention.sample(at: now, waitedMicroseconds: some.waitedMicroseconds) {
            decided(contended: contended)
        }
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

/// Whether the CPUs are contended, from the kernel's pressure stall information: the share of
/// the time between two samples in which at least one runnable thread waited for a CPU (the
/// running total of `some` in /proc/pressure/cpu). Contended from 40% (three threads that never
/// sleep on two CPUs wait half the time; the daemon's own benchmark, ten processes on two CPUs,
/// 12–13%), calm again below 20%, so that a machine near the line does not flip every second.
struct CPUContention: Equatable {
    static let contendedFrom = 0.4
    static let calmBelow = 0.2

    private(set) var isContended = false
    private var last: (at: Double, waited: UInt64)?

    init() {}

    /// The first sample, with the kernel's own average share of the last ten seconds (`avg10`)
    /// for a verdict until the next. Returns whether the CPUs are contended.
    mutating func begin(at now: Double, waitedMicroseconds waited: UInt64, recentShare: Double) -> Bool {
        last = (now, waited)
        isContended = recentShare >= Self.contendedFrom
        return isContended
    }

    /// Takes a sample (`now` in seconds, the running total of waiting in microseconds) and
    /// returns the new verdict when it changes. A first sample, a clock that went back and a
    /// total that fell (no such kernel) give no verdict.
    mutating func sample(at now: Double, waitedMicroseconds waited: UInt64) -> Bool? {
        defer { last = (now, waited) }
        guard let last, now > last.at, waited >= last.waited else { return nil }
        let share = Double(waited - last.waited) / 1_000_000 / (now - last.at)
        let contended = isContended ? share >= Self.calmBelow : share >= Self.contendedFrom
        guard contended != isContended else { return nil }
        isContended = contended
        return contended
    }

    static func == (lhs: CPUContention, rhs: CPUContention) -> Bool {
        lhs.isContended == rhs.isContended && lhs.last?.at == rhs.last?.at && lhs.last?.waited == rhs.last?.waited
    }
}

/// /proc/pressure/cpu, kept open and read from its start at each sample.
final class PressureStallFile {
    private let fd: Int32

    /// Nil when the file cannot be opened or does not read as the kernel writes it.
    init?(path: String) {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        // A failed initializer of a class whose properties are set still runs `deinit`.
        guard fd >= 0, some() != nil else { return nil }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The `some` line: the share of the last ten seconds in which a runnable thread waited
    /// (`avg10`, as a fraction), and the running total of such waiting in microseconds. Nil
    /// when it cannot be read.
    func some() -> (recentShare: Double, waitedMicroseconds: UInt64)? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            let count = pread(fd, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            return Self.some(in: Array(UnsafeBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// Reads "some avg10=1.50 avg60=0.20 avg300=0.05 total=123456", the file's first line.
    static func some(in text: [UInt8]) -> (recentShare: Double, waitedMicroseconds: UInt64)? {
        guard text.starts(with: "some ".utf8) else { return nil }
        var fields: [Substring: Substring] = [:]
        let line = String(decoding: text.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        for field in line.split(separator: " ").dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { return nil }
            fields[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let average = fields["avg10"].flatMap({ Double($0) }), average >= 0, average <= 100,
            let total = fields["total"].flatMap({ UInt64($0) })
        else { return nil }
        return (average / 100, total)
    }
}
