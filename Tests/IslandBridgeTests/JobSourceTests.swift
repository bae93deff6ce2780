import IslandBridge
import OrderedCollections
import OrderedJSON
import SDBus
import Testing

@Suite("Job source: KDE job views served on the bus become Transfer activities")
struct JobSourceTests {
    static let client = ":1.20"
    static let view = "/org/island/bridge/JobView/1"

    static func harness() -> (SourceHarness, JobSource) {
        let harness = SourceHarness()
        let source = JobSource(
            bus: harness.bus, senders: harness.senders, context: harness.context, maximumJobs: 4,
            maximumJobsPerSender: 2)
        source.start()
        harness.bus.run()
        harness.subject = source
        return (harness, source)
    }

    /// `org.kde.JobViewServerV2.requestView`, as KJobWidgets calls it.
    static func requestView(_ harness: SourceHarness, from sender: String = client, capabilities: Int32 = 3) -> MethodResult {
        harness.bus.callServed(
            path: JobSource.serverPath, interface: "org.kde.JobViewServerV2", member: "requestView", from: sender,
            [.string("org.example.Files"), .int32(capabilities), .vardict([("title", .string("Copying"))])])
    }

    static func update(_ harness: SourceHarness, from sender: String = client, _ properties: [(String, BusValue)]) -> MethodResult {
        harness.bus.callServed(path: view, interface: "org.kde.JobViewV3", member: "update", from: sender, [.vardict(properties)])
    }

    @Test("the server's names are asked for, and its object served")
    func serves() {
        let (harness, _) = Self.harness()
        #expect(harness.bus.requestedNames == JobSource.serverNames)
        #expect(harness.bus.servedPaths == [JobSource.serverPath])
    }

    @Test("a job's lifecycle: requested, shown once its sender is identified, updated, terminated, its view let go")
    func lifecycle() throws {
        let (harness, source) = Self.harness()
        harness.bus.identities[Self.client] = SenderIdentity(confinement: .flatpak(appID: "org.example.Files"))
        guard case .reply(let path) = Self.requestView(harness) else {
            Issue.record("requestView answers its view's path")
            return
        }
        #expect(path == [.objectPath(Self.view)])
        #expect(harness.take().isEmpty, "not shown before its sender is identified")
        harness.bus.run()
        let shown = try #require(harness.shown().last)
        let key = SourceKey.job(busID: SourceHarness.busID, number: 1).description
        #expect(shown.source == key)
        #expect(shown.type == "Transfer")
        #expect(shown.app == "Example Files")
        expectJSON(shown.content.state["title"], "Copying")

        guard case .reply = Self.update(harness, [("percent", .uint32(40))]) else {
            Issue.record("an update is answered")
            return
        }
        expectJSON(try #require(harness.shown().last).content.state["percent"], 40)

        _ = harness.bus.callServed(
            path: Self.view, interface: "org.kde.JobViewV3", member: "terminate", from: Self.client,
            [.uint32(0), .string(""), .vardict([])])
        guard case .finish(key, let content, keep: true) = try #require(harness.take().last) else {
            Issue.record("the activity ends, kept a while as ended")
            return
        }
        expectJSON(content?.state["done"], true)
        #expect(harness.bus.servedPaths.contains(Self.view), "the view stays until its reply is on its way")
        harness.bus.run()
        #expect(!harness.bus.servedPaths.contains(Self.view))
        #expect(harness.bus.trackedNames.isEmpty, "a connection without jobs is no longer followed")
        #expect(source.jobs.jobs.isEmpty)
    }

    @Test("only the connection that requested a view may change it")
    func senderChecked() throws {
        let (harness, _) = Self.harness()
        _ = Self.requestView(harness)
        harness.bus.run()
        _ = harness.take()
        guard case .failure(let error) = Self.update(harness, from: ":1.66", [("percent", .uint32(99))]) else {
            Issue.record("another connection is refused")
            return
        }
        #expect(error.name == BusError.accessDenied)
        #expect(harness.take().isEmpty)
    }

    @Test("a client that leaves before it is identified: its job is shown as the bridge's Transfer, then ends as ownerGone")
    func ownerGone() throws {
        let (harness, source) = Self.harness()
        _ = Self.requestView(harness)
        harness.bus.disconnect(Self.client)
        let changes = harness.take()
        #expect(changes.count == 2)
        guard case .show(let shown) = changes.first, case .finish(let ended, let content, keep: true) = changes.last else {
            Issue.record("shown, then ended: \(changes)")
            return
        }
        #expect(shown.app == "Transfer")
        #expect(ended == shown.source)
        expectJSON(content?.state["ownerGone"], true)
        #expect(!harness.bus.servedPaths.contains(Self.view))
        harness.bus.run()
        #expect(harness.bus.trackedNames.isEmpty)
        #expect(harness.take().isEmpty, "the late identity answer shows nothing")
        #expect(source.jobs.jobs.isEmpty)
    }

    @Test("views are bounded per connection")
    func bounded() {
        let (harness, _) = Self.harness()
        _ = Self.requestView(harness)
        _ = Self.requestView(harness)
        guard case .failure(let error) = Self.requestView(harness) else {
            Issue.record("a third view of one connection is refused")
            return
        }
        #expect(error.name == BusError.limitsExceeded)
    }

    @Test("buttons emit the view's signals; end() lets go of every view")
    func buttonsAndEnd() {
        let (harness, source) = Self.harness()
        _ = Self.requestView(harness)
        harness.bus.run()
        source.pressed("cancel", job: 1)
        source.pressed("suspendResume", job: 1)
        source.pressed("cancel", job: 2)
        #expect(harness.bus.emitted.map(\.member) == ["cancelRequested", "suspendRequested"])
        #expect(harness.bus.emitted.allSatisfy { $0.path == Self.view && $0.interface == "org.kde.JobViewV3" })
        let key = SourceKey.job(busID: SourceHarness.busID, number: 1).description
        #expect(source.end() == [.finish(source: key, content: nil, keep: false)])
        #expect(harness.bus.servedPaths.isEmpty)
    }
}
