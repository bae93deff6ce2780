import IslandBridge
import OrderedCollections
import SDBus
import Testing

@Suite("Routing: an activity's source key, and taps and buttons to the source it names")
struct RoutingTests {
    @Test(
        "keys read back from the text the book keeps, unique names' colons and all",
        arguments: [
            SourceKey.player(busID: "0123456789ab", owner: ":1.42"),
            SourceKey.notification(busID: "0123456789ab", owner: ":1.9", id: 7),
            SourceKey.job(busID: "0123456789ab", number: 3),
            SourceKey.player(busID: "", owner: ":1.42"),
        ])
    func roundTrip(key: SourceKey) {
        #expect(SourceKey(key.description) == key)
    }

    @Test("the text each source's model writes is its key")
    func modelsWriteKeys() {
        #expect(MediaPlayer.source(busID: "b", owner: ":1.7") == "mpris:b::1.7")
        #expect(SourceKey("mpris:b::1.7") == .player(busID: "b", owner: ":1.7"))
        #expect(SourceKey("notify:b::1.9:12") == .notification(busID: "b", owner: ":1.9", id: 12))
        #expect(SourceKey("job:b:4") == .job(busID: "b", number: 4))
    }

    @Test("text that is no key", arguments: ["", "mpris", "mpris:b", "mpris:b:", "other:b:x", "job:b:x", "notify:b::1.9", "notify:b:7"])
    func notKeys(text: String) {
        #expect(SourceKey(text) == nil)
    }

    /// A bus with a player that can raise (`:1.7`) and a job of `:1.20` that can be
    /// cancelled and suspended, followed by every source.
    static func sources() -> (SourceHarness, SessionSources) {
        let harness = SourceHarness()
        harness.bus.answer = { call in
            switch (call.member, call.arguments.first?.string) {
            case ("ListNames", _): .success(.reply([.strings(["org.mpris.MediaPlayer2.example"])]))
            case ("GetNameOwner", "org.mpris.MediaPlayer2.example"): .success(.reply([.string(":1.7")]))
            case ("GetNameOwner", _): .success(.reply([.string(":1.5")]))
            case ("GetAll", _): .success(.reply([.vardict([("CanRaise", .boolean(true)), ("PlaybackStatus", .string("Playing"))])]))
            case ("Raise", _), ("PlayPause", _): .success(.reply([]))
            default: nil
            }
        }
        let sources = SessionSources(
            bus: harness.bus, context: harness.context,
            enabled: .init(mpris: true, notifications: true, jobs: true), staleAfterPause: 600,
            maximumJobs: 4, maximumJobsPerSender: 2)
        sources.start()
        #expect(!sources.isScanned)
        harness.bus.run()
        #expect(sources.isScanned)
        _ = harness.bus.callServed(
            path: JobSource.serverPath, interface: "org.kde.JobViewServerV2", member: "requestView",
            from: ":1.20", [.string("x"), .int32(3), .vardict([])])
        harness.bus.run()
        harness.subject = sources
        return (harness, sources)
    }

    static let busID = SourceHarness.busID

    @Test("a tap on a player's activity raises that player; one on a job's does nothing")
    func taps() {
        let (harness, sources) = Self.sources()
        let before = harness.bus.calls.count
        sources.tapped(.job(busID: Self.busID, number: 1))
        sources.tapped(.notification(busID: Self.busID, owner: ":1.9", id: 1))
        #expect(harness.bus.calls.count == before && harness.bus.emitted.isEmpty)
        sources.tapped(.player(busID: Self.busID, owner: ":1.7"))
        let raise = harness.bus.calls.last
        #expect(raise?.member == "Raise" && raise?.destination == ":1.7" && raise?.interface == MPRISSource.root)
    }

    @Test("buttons go to the source their key names: a player's method, a job's signal")
    func buttons() {
        let (harness, sources) = Self.sources()
        sources.pressed("playPause", on: .player(busID: Self.busID, owner: ":1.7"))
        #expect(harness.bus.calls.last?.member == "PlayPause")
        #expect(harness.bus.calls.last?.destination == ":1.7")
        sources.pressed("cancel", on: .job(busID: Self.busID, number: 1))
        #expect(harness.bus.emitted.map(\.member) == ["cancelRequested"])
        let before = harness.bus.calls.count
        sources.pressed("cancel", on: .player(busID: Self.busID, owner: ":1.7"))
        sources.pressed("playPause", on: .job(busID: Self.busID, number: 1))
        #expect(harness.bus.calls.count == before && harness.bus.emitted.count == 1, "a button another source's")
    }

    @Test("a key of another bus names nothing here, though its unique name may be reused")
    func otherBus() {
        let (harness, sources) = Self.sources()
        let before = harness.bus.calls.count
        sources.tapped(.player(busID: "another", owner: ":1.7"))
        sources.pressed("playPause", on: .player(busID: "another", owner: ":1.7"))
        sources.pressed("cancel", on: .job(busID: "another", number: 1))
        #expect(harness.bus.calls.count == before && harness.bus.emitted.isEmpty)
    }

    @Test("a source turned off is not there, and its keys route nowhere")
    func turnedOff() {
        let harness = SourceHarness()
        let sources = SessionSources(
            bus: harness.bus, context: harness.context,
            enabled: .init(mpris: false, notifications: false, jobs: true), staleAfterPause: 600,
            maximumJobs: 4, maximumJobsPerSender: 2)
        sources.start()
        #expect(sources.mpris == nil && sources.notifications == nil && sources.isScanned)
        sources.pressed("playPause", on: .player(busID: Self.busID, owner: ":1.7"))
        #expect(harness.bus.calls.isEmpty)
    }
}
