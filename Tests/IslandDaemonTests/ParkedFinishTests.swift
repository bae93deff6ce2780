import IslandCore
import IslandStore
import NIOCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// The end of a commit nobody is told of at once (a broadcast channel's message asking no
/// answers: `DecisionWaiter.syncsCommit` false), parked by the store's writer for the loop's
/// next turn instead of waking the loop for it (`ParkedFinishes`), on the real engine and store.
/// With a delay of an hour, it finishes when the test's next step makes a turn, never when the
/// clock says.
@Suite struct ParkedFinishTests {
    let base = IslandEngineTests()
    typealias Log = LingeringCommitTests.Log

    /// Updates activity `id` as a channel message asking no answers is applied: a caller told
    /// once it is committed, without the `fdatasync`. Returns once it is decided.
    func quietUpdate(_ engine: IslandEngine, _ id: String, n: Int, log: Log) async {
        await LingeringCommitTests().update(engine, id, n: n, log: log, as: "quiet", syncing: false)
    }

    func storedN(_ fixture: IslandEngineTests.Fixture, _ id: String) throws -> JSON? {
        try LingeringCommitTests().storedN(fixture, id)
    }

    @Test func aQuietCommitsEndWaitsForTheLoopsNextTurnAndFinishesFirstThen() async throws {
        let fixture = try await base.makeEngine(parkedFinishDelay: .hours(1))
        defer { fixture.close() }
        let engine = fixture.engine
        let (first, second) = (try await base.start(engine), try await base.start(engine))
        let log = Log()
        await quietUpdate(engine, first.id, n: 1, log: log)
        // Returns once everything decided before is committed, on the writer's thread after
        // the quiet commit's end: handed back to the loop, that end would have finished first.
        try await engine.commitAndWait([])
        #expect(try storedN(fixture, first.id) == 1, "committed at once")
        #expect(log.all == [], "its end is parked")

        // The next turns take what is parked before their own.
        await quietUpdate(engine, first.id, n: 2, log: log)
        try await base.update(engine, second.id, n: 3)
        log.note("answered")
        #expect(log.all == ["quiet 1", "quiet 2", "answered"], "in the order of decision")
        #expect(try storedN(fixture, first.id) == 2)
        #expect(try storedN(fixture, second.id) == 3)
    }

    @Test func aParkedEndFinishesAtTheTimerWhenNothingElseComes() async throws {
        let fixture = try await base.makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let log = Log()
        await quietUpdate(engine, activity.id, n: 1, log: log)
        #expect(await base.eventually { log.all == ["quiet 1"] }, "\(log.all)")
        // And the next is parked under a timer of its own.
        await quietUpdate(engine, activity.id, n: 2, log: log)
        #expect(await base.eventually { log.all == ["quiet 1", "quiet 2"] }, "\(log.all)")
        #expect(try storedN(fixture, activity.id) == 2)
    }

    @Test func whileAnAppWatchesNothingIsParked() async throws {
        let fixture = try await base.makeEngine(parkedFinishDelay: .hours(1))
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let (responder, watcher) = watchResponder()
        await engine.watch(app: IslandEngineTests.app, uid: nil, ids: nil, responder: responder)
        fixture.clock.advance(by: 1)
        let log = Log()
        await quietUpdate(engine, activity.id, n: 1, log: log)
        // The watcher hears of it once it is committed, not an hour later.
        #expect(await base.eventually { log.all == ["quiet 1"] }, "\(log.all)")
        #expect(
            await base.eventually { watcher.replies.compactMap { $0["event"]?["kind"]?.stringValue } == ["watching", "content"] },
            "\(watcher.replies)")
    }

    @Test func stoppingFinishesWhatIsParked() async throws {
        let fixture = try await base.makeEngine(parkedFinishDelay: .hours(1))
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await base.start(engine)
        let log = Log()
        await quietUpdate(engine, activity.id, n: 1, log: log)
        try await engine.commitEverythingDecided()
        #expect(log.all == ["quiet 1"])
    }

    @Test func theWriterHandsOverWhatEndsOnceTheTimerFired() {
        let parked = ParkedFinishes<Int>()
        #expect(!parked.park(1), "no timer armed: handed over")
        #expect(parked.arm(), "the first arms a timer")
        #expect(!parked.arm(), "one is armed already")
        #expect(parked.park(2) && parked.park(3))
        #expect(parked.take(disarming: false) == [2, 3], "a turn takes them, in order")
        #expect(parked.park(4))
        #expect(parked.take(disarming: true) == [4], "the timer fired")
        #expect(!parked.park(5), "handed over: nothing would take it")
        #expect(parked.take(disarming: false) == [])
    }

    @Test func theWriterHandsOverOnceTheLimitIsParked() {
        let parked = ParkedFinishes<Int>()
        #expect(parked.arm())
        for n in 0..<ParkedFinishes<Int>.limit { #expect(parked.park(n)) }
        #expect(!parked.park(-1), "this one wakes the loop, which takes them all")
        #expect(parked.take(disarming: false) == Array(0..<ParkedFinishes<Int>.limit))
        #expect(parked.park(0), "room again, the timer still armed")
    }
}
