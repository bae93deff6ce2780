import Foundation
import IslandCore
import Synchronization
import Testing
@testable import IslandDaemon

/// The loop's time slice: short while the CPUs are contended (`CPUContention`, read from the
/// kernel's pressure stall information), the default while they are calm.
@Suite struct EventLoopSchedulingTests {
    /// Samples a second apart, each with `share` of that second spent waiting; the verdicts.
    private func verdicts(_ shares: [Double]) -> [Bool?] {
        var contention = CPUContention()
        var waited: UInt64 = 5_000_000
        var verdicts: [Bool?] = [contention.sample(at: 100, waitedMicroseconds: waited)]
        for (n, share) in shares.enumerated() {
            waited += UInt64(share * 1_000_000)
            verdicts.append(contention.sample(at: 101 + Double(n), waitedMicroseconds: waited))
        }
        return verdicts
    }

    @Test func aCalmMachineIsNeverContended() {
        #expect(verdicts([0, 0.05, 0.13, 0.39, 0]) == [nil, nil, nil, nil, nil, nil])
    }

    @Test func contendedFromFortyPercentAndCalmAgainBelowTwenty() {
        // 0.5 turns it on; 0.3 and 0.2 keep it (hysteresis); 0.19 turns it off; 0.3 does not
        // turn it on again.
        #expect(verdicts([0.5, 0.3, 0.2, 0.19, 0.3, 0.4]) == [nil, true, nil, nil, false, nil, true])
    }

    @Test func theShareIsOfTheTimeBetweenSamples() {
        var contention = CPUContention()
        #expect(contention.sample(at: 0, waitedMicroseconds: 0) == nil)
        // 4 s of waiting over 10 s: 40%.
        #expect(contention.sample(at: 10, waitedMicroseconds: 4_000_000) == true)
        // 1 s over the next 10 s: 10%.
        #expect(contention.sample(at: 20, waitedMicroseconds: 5_000_000) == false)
    }

    @Test func aClockThatWentBackOrATotalThatFellGivesNoVerdict() {
        var contention = CPUContention()
        _ = contention.sample(at: 10, waitedMicroseconds: 1_000_000)
        #expect(contention.sample(at: 9, waitedMicroseconds: 9_000_000) == nil)
        #expect(contention.sample(at: 9, waitedMicroseconds: 9_000_000) == nil, "no time passed")
        #expect(contention.sample(at: 11, waitedMicroseconds: 0) == nil)
        #expect(!contention.isContended)
        // And it goes on from the last sample.
        #expect(contention.sample(at: 12, waitedMicroseconds: 900_000) == true)
    }

    @Test func theFirstVerdictIsTheKernelsTenSecondAverage() {
        var contention = CPUContention()
        let contended = contention.begin(at: 0, waitedMicroseconds: 0, recentShare: 0.9)
        #expect(contended && contention.isContended)
        // Then the running total: 10% of the next second.
        #expect(contention.sample(at: 1, waitedMicroseconds: 100_000) == false)
        var calm = CPUContention()
        let calmAtFirst = !calm.begin(at: 0, waitedMicroseconds: 0, recentShare: 0.39)
        #expect(calmAtFirst)
        #expect(calm.sample(at: 1, waitedMicroseconds: 500_000) == true)
    }

    @Test func theSomeLineIsRead() throws {
        let file = "some avg10=41.50 avg60=0.20 avg300=0.05 total=123456789\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"
        let some = try #require(PressureStallFile.some(in: Array(file.utf8)))
        #expect(some.recentShare == 0.415)
        #expect(some.waitedMicroseconds == 123_456_789)
        #expect(PressureStallFile.some(in: Array("some avg10=0.00 total=0".utf8))?.waitedMicroseconds == 0)
        for damaged in [
            "", "full avg10=0.00 total=42\n", "some avg10=0.00 avg60=0.00\ntotal=5\n", "some avg10=0.00 total=\n",
            "some avg10=0.00 total=99999999999999999999\n", "some avg10=0.00 total=x1\n", "some avg10=nan total=1\n",
            "some avg10=101.00 total=1\n", "some avg10=-1 total=1\n", "some total=1\n", "some avg10=1.0 total=1 junk\n",
        ] {
            #expect(PressureStallFile.some(in: Array(damaged.utf8)) == nil, "\(damaged)")
        }
    }

    @Test func aFileThatIsNotTheKernelsIsNoPressureFile() throws {
        let directory = NSTemporaryDirectory() + "island-psi-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(PressureStallFile(path: directory + "/missing") == nil)
        let garbage = directory + "/garbage"
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data("nonsense\n".utf8)))
        #expect(PressureStallFile(path: garbage) == nil)
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(PressureStallFile(path: fifo) == nil, "a FIFO without a writer must not hold the open or the read")
        let good = directory + "/cpu"
        #expect(FileManager.default.createFile(atPath: good, contents: Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n".utf8)))
        let file = try #require(PressureStallFile(path: good))
        #expect(file.some()?.waitedMicroseconds == 7)
        // Read from the start each time, as the kernel's file is.
        // (In place: `createFile` would put a new file in its place.)
        try Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n".utf8).write(to: URL(fileURLWithPath: good))
        #expect(file.some()?.waitedMicroseconds == 9)
    }

    @Test func theEngineTellsTheEndOfEachTurnThatDecidedWithItsTime() async throws {
        let base = IslandEngineTests()
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let told = Mutex<[Double]>([])
        await withCheckedContinuation { (set: CheckedContinuation<Void, Never>) in
            engine.perform { engine in
                engine.turnEnded = { now in told.withLock { $0.append(now) } }
                set.resume()
            }
        }
        fixture.clock.advance(by: 5)
        let activity = try await base.start(engine)
        #expect(told.withLock { $0 } == [fixture.clock.now])
        // A read decides nothing: no turn's end.
        _ = await engine.list(app: IslandEngineTests.app, uid: nil, type: nil, states: nil)
        #expect(told.withLock { $0.count } == 1)
        fixture.clock.advance(by: 1)
        try await base.update(engine, activity.id, n: 1)
        #expect(told.withLock { $0 } == [fixture.clock.now - 1, fixture.clock.now])
    }
}
