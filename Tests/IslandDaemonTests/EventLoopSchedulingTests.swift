import Foundation
import Logging
import IslandCore
import Synchronization
import Testing
@testable import IslandDaemon

/// The loop's time slice: short while the CPUs are contended (`CPUContention`, read from the
/// kernel's pressure stall information), the default while they are calm.
@Suite struct EventLoopSchedulingTests {
    typealias Sample = CPUContention.Sample

    /// Samples a second apart, each with `share` of that second spent waiting by the machine's
    /// threads (and none by the loop); the verdicts.
    private func verdicts(machine shares: [Double]) -> [Bool?] {
        var contention = CPUContention()
        var waited: UInt64 = 5_000_000
        var verdicts: [Bool?] = [contention.sample(Sample(at: 100, machineWaitedMicroseconds: waited))]
        for (n, share) in shares.enumerated() {
            waited += UInt64(share * 1_000_000)
            verdicts.append(contention.sample(Sample(at: 101 + Double(n), machineWaitedMicroseconds: waited)))
        }
        return verdicts
    }

    /// Samples a second apart, the loop running 100 times in each and waiting `wait` seconds a
    /// run on average (the machine's share not known); the verdicts.
    private func verdicts(loop waits: [Double], every seconds: Double = 1) -> [Bool?] {
        var contention = CPUContention()
        var (waited, runs): (UInt64, UInt64) = (1_000, 10)
        var verdicts: [Bool?] = [contention.sample(Sample(at: 0, loopWaitedNanoseconds: waited, loopRuns: runs))]
        for (n, wait) in waits.enumerated() {
            waited += UInt64(wait * 1e9 * 100)
            runs += 100
            verdicts.append(contention.sample(Sample(at: Double(n + 1) * seconds, loopWaitedNanoseconds: waited, loopRuns: runs)))
        }
        return verdicts
    }

    @Test func aCalmMachineIsNeverContended() {
        #expect(verdicts(machine: [0, 0.05, 0.13, 0.39, 0]) == [nil, nil, nil, nil, nil, nil])
        #expect(verdicts(loop: [0, 5e-6, 100e-6, 199e-6]) == [nil, nil, nil, nil, nil])
    }

    @Test func contendedFromFortyPercentOfTheMachinesTimeAndCalmOnlyAfterTheHold() {
        // 0.5 turns it on; below 20% it stays on until ten seconds have passed since the last
        // contended sample (at 101); 0.3, contended no more but not calm, keeps it.
        let shares = [0.5, 0.1, 0.3] + Array(repeating: 0.1, count: 8) + [0.1, 0.39, 0.4]
        let expected: [Bool?] = [nil, true] + Array(repeating: nil, count: 9) + [false, nil, nil, true]
        #expect(verdicts(machine: shares) == expected)
    }

    @Test func contendedFromTwoHundredMicrosecondsARunOfTheLoopsOwnWait() {
        // 250 µs a run turns it on; 30 µs a run (the short slice's doing) keeps it for the hold.
        let waits = [250e-6] + Array(repeating: 30e-6, count: 10)
        #expect(verdicts(loop: waits) == [nil, true] + Array(repeating: nil, count: 9) + [false])
        // 100 µs a run is neither: it stays on.
        #expect(verdicts(loop: [250e-6] + Array(repeating: 100e-6, count: 12)) == [nil, true] + Array(repeating: nil, count: 12))
    }

    @Test func aLoopThatDidNotRunSaysNothingOfItsWait() {
        var contention = CPUContention()
        _ = contention.sample(Sample(at: 0, loopWaitedNanoseconds: 5_000_000, loopRuns: 10))
        #expect(contention.sample(Sample(at: 1, loopWaitedNanoseconds: 5_000_000, loopRuns: 10)) == nil)
        #expect(!contention.isContended)
    }

    @Test func theFirstVerdictIsTheKernelsTenSecondAverage() {
        var contention = CPUContention()
        let contended = contention.begin(Sample(at: 0, machineWaitedMicroseconds: 0, machineRecentShare: 0.9))
        #expect(contended && contention.isContended)
        // Calm from the first sample on, but held for ten seconds.
        #expect(contention.sample(Sample(at: 1, machineWaitedMicroseconds: 100_000)) == nil)
        #expect(contention.sample(Sample(at: 10, machineWaitedMicroseconds: 200_000)) == false)
        var calm = CPUContention()
        let calmAtFirst = !calm.begin(Sample(at: 0, machineWaitedMicroseconds: 0, machineRecentShare: 0.39))
        #expect(calmAtFirst)
        #expect(calm.sample(Sample(at: 1, machineWaitedMicroseconds: 500_000)) == true)
    }

    @Test func aClockThatWentBackOrATotalThatFellGivesNoVerdict() {
        var contention = CPUContention()
        _ = contention.sample(Sample(at: 10, machineWaitedMicroseconds: 1_000_000, loopWaitedNanoseconds: 10, loopRuns: 10))
        #expect(contention.sample(Sample(at: 9, machineWaitedMicroseconds: 9_000_000)) == nil)
        #expect(contention.sample(Sample(at: 9, machineWaitedMicroseconds: 9_000_000)) == nil, "no time passed")
        #expect(contention.sample(Sample(at: 11, machineWaitedMicroseconds: 0)) == nil)
        #expect(contention.sample(Sample(at: 12, machineWaitedMicroseconds: 0, loopWaitedNanoseconds: 5, loopRuns: 20)) == nil)
        #expect(contention.sample(Sample(at: 13, machineWaitedMicroseconds: 0, loopWaitedNanoseconds: 5, loopRuns: 19)) == nil)
        #expect(!contention.isContended)
        // And it goes on from the last sample.
        #expect(contention.sample(Sample(at: 14, machineWaitedMicroseconds: 900_000)) == true)
    }

    @Test func thePressureLineIsRead() throws {
        let file = "some avg10=41.50 avg60=0.20 avg300=0.05 total=123456789\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"
        let some = try #require(CPUContention.pressure(in: Array(file.utf8)))
        #expect(some.recentShare == 0.415)
        #expect(some.waitedMicroseconds == 123_456_789)
        #expect(CPUContention.pressure(in: Array("some avg10=0.00 total=0".utf8))?.waitedMicroseconds == 0)
        for damaged in [
            "", "full avg10=0.00 total=42\n", "some avg10=0.00 avg60=0.00\ntotal=5\n", "some avg10=0.00 total=\n",
            "some avg10=0.00 total=99999999999999999999\n", "some avg10=0.00 total=x1\n", "some avg10=nan total=1\n",
            "some avg10=101.00 total=1\n", "some avg10=-1 total=1\n", "some total=1\n", "some avg10=1.0 total=1 junk\n",
        ] {
            #expect(CPUContention.pressure(in: Array(damaged.utf8)) == nil, "\(damaged)")
        }
    }

    @Test func aThreadsSchedstatIsRead() throws {
        let stat = try #require(CPUContention.loopWaiting(in: Array("260106203 216161 34\n".utf8)))
        #expect(stat.waitedNanoseconds == 216_161)
        #expect(stat.runs == 34)
        for damaged in ["", "1 2\n", "1 2 3 4\n", "x 2 3\n", "1 -2 3\n", "1 2 3x\n"] {
            #expect(CPUContention.loopWaiting(in: Array(damaged.utf8)) == nil, "\(damaged)")
        }
    }

    @Test func onlyARegularFileThatReadsAsTheKernelsIsKept() throws {
        let directory = NSTemporaryDirectory() + "island-psi-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reads: ([UInt8]) -> Bool = { CPUContention.pressure(in: $0) != nil }
        #expect(KernelFile(path: directory + "/missing", reads: reads) == nil)
        let garbage = directory + "/garbage"
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data("nonsense\n".utf8)))
        #expect(KernelFile(path: garbage, reads: reads) == nil)
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(KernelFile(path: fifo, reads: reads) == nil, "a FIFO without a writer must not hold the open or the read")
        let good = directory + "/cpu"
        #expect(FileManager.default.createFile(atPath: good, contents: Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n".utf8)))
        #expect(symlink(good, directory + "/link") == 0)
        #expect(KernelFile(path: directory + "/link", reads: reads) == nil)
        let file = try #require(KernelFile(path: good, reads: reads))
        #expect(file.read().flatMap { CPUContention.pressure(in: $0)?.waitedMicroseconds } == 7)
        // Read from the start each time, as the kernel's file is. (In place: `createFile` would
        // put a new file in its place.)
        try Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n".utf8).write(to: URL(fileURLWithPath: good))
        #expect(file.read().flatMap { CPUContention.pressure(in: $0)?.waitedMicroseconds } == 9)
    }

    @Test func thisMachinesFilesReadAsTheKernelsWhereTheyExist() throws {
        // The formats above are the kernel's: where the files exist, they read. A kernel may
        // have either off (PSI; `schedstat` needs CONFIG_SCHED_INFO): the loop then decides by
        // the other, and keeps the short slice throughout without both
        // (`EventLoopScheduling.start`).
        if FileManager.default.fileExists(atPath: "/proc/pressure/cpu") {
            #expect(KernelFile(path: "/proc/pressure/cpu") { CPUContention.pressure(in: $0) != nil } != nil)
        }
        if FileManager.default.fileExists(atPath: "/proc/thread-self/schedstat") {
            #expect(KernelFile(path: "/proc/thread-self/schedstat") { CPUContention.loopWaiting(in: $0) != nil } != nil)
        }
    }

    @Test func theEngineTellsTheEndOfEachTurnThatDecided() async throws {
        let base = IslandEngineTests()
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let told = Mutex(0)
        await withCheckedContinuation { (set: CheckedContinuation<Void, Never>) in
            engine.perform { engine in
                engine.turnEnded = { told.withLock { $0 += 1 } }
                set.resume()
            }
        }
        let activity = try await base.start(engine)
        #expect(told.withLock { $0 } == 1)
        // A read decides nothing: no turn's end.
        _ = await engine.list(app: IslandEngineTests.app, uid: nil, type: nil, states: nil)
        #expect(told.withLock { $0 } == 1)
        try await base.update(engine, activity.id, n: 1)
        #expect(told.withLock { $0 } == 2)
    }

    @Test func theLoopSamplesAtMostFourTimesASecondOnItsOwnClock() throws {
        // The kernel's files stand in as copies the test writes: 50% of the time waiting.
        let directory = NSTemporaryDirectory() + "island-slice-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pressure = URL(fileURLWithPath: directory + "/cpu")
        func waited(_ microseconds: Int) throws {
            try Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=\(microseconds)\n".utf8).write(to: pressure)
        }
        try waited(0)
        let clock = Mutex(1000.0)
        let scheduling = EventLoopScheduling(
            pressureFile: pressure.path, loopFile: directory + "/none", now: { clock.withLock { $0 } }, logger: Logger(label: "test"))
        scheduling.start()
        #expect(!scheduling.isContended)
        clock.withLock { $0 += 0.2 }
        try waited(100_000)
        scheduling.turnEnded()
        #expect(!scheduling.isContended, "a fifth of a second after the last sample: not sampled")
        clock.withLock { $0 += 0.1 }
        try waited(150_000)
        scheduling.turnEnded()
        #expect(scheduling.isContended, "0.15 s of 0.3: half the time")
    }
}
