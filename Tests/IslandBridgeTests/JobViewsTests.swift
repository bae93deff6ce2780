import OrderedCollections
import IslandBridge
import OrderedJSON
import SDBus
import Testing

@Suite("KDE job views: requested, updated, terminated, bounded")
struct JobViewsTests {
    static let app = SourceApp(name: "Dolphin", icon: "system-file-manager", desktopEntry: "org.kde.dolphin")

    @Test("a V3 view: update keys as KJobWidgets sends them, then terminate")
    func v3() throws {
        var jobs = JobViews(busID: "b", maximumJobs: 4, maximumJobsPerSender: 2)
        let (job, shown) = try jobs.requestView(
            from: ":1.3", version: .v3, app: Self.app, capabilities: 3,
            hints: ["title": .string("Copying"), "immediate": .boolean(true)], now: 5)
        #expect(job.path == "/org/island/bridge/JobView/1")
        guard case .show(let activity) = try #require(shown.first) else { return }
        #expect(activity.type == "Transfer" && activity.content.state["title"] == "Copying")
        let updated = try jobs.update(
            path: job.path, from: ":1.3",
            properties: [
                "processedBytes": .uint64(1_200_000), "totalBytes": .uint64(45_000_000), "speed": .uint64(999),
                "infoMessage": .string("2 files"), "suspended": .boolean(true),
            ])
        guard case .show(let progress) = try #require(updated.first) else { return }
        expectJSON(progress.content.state["amount"], "1.2 MB of 45 MB")
        expectJSON(progress.content.state["percent"], 2)
        expectJSON(progress.content.state["speed"], "999 B/s")
        expectJSON(progress.content.state["detail"], "2 files")
        expectJSON(progress.content.state["suspended"], true)
        #expect(jobs.signal(forButton: "suspendResume", source: activity.source)?.member == "resumeRequested")
        #expect(jobs.signal(forButton: "cancel", source: activity.source)?.member == "cancelRequested")
        let ended = try jobs.terminate(path: job.path, from: ":1.3", errorCode: 1, message: "")
        guard case .finish(_, let content, true) = try #require(ended.first) else { return }
        expectJSON(content?.state["canceled"], true)
        #expect(jobs.jobs.isEmpty)
    }

    @Test("a V2 view's setters, and setError before terminate")
    func v2() throws {
        var jobs = JobViews(busID: "b", maximumJobs: 4, maximumJobsPerSender: 2)
        let (job, _) = try jobs.requestView(from: ":1.3", version: .v2, app: Self.app, capabilities: 0, hints: [:], now: 0)
        _ = try jobs.call(path: job.path, from: ":1.3", member: "setTotalAmount", arguments: [.uint64(10), .string("files")])
        _ = try jobs.call(path: job.path, from: ":1.3", member: "setProcessedAmount", arguments: [.uint64(4), .string("files")])
        let changes = try jobs.call(
            path: job.path, from: ":1.3", member: "setDescriptionField",
            arguments: [.uint32(1), .string("Source"), .string("/home/u/a.txt")])
        guard case .show(let activity) = try #require(changes.first) else { return }
        expectJSON(activity.content.state["amount"], "4 of 10 files")
        expectJSON(activity.content.state["percent"], 40)
        expectJSON(activity.content.state["detail"], "Source: /home/u/a.txt")
        #expect(jobs.signal(forButton: "cancel", source: activity.source) == nil, "not cancellable: no signal")
        _ = try jobs.call(path: job.path, from: ":1.3", member: "setError", arguments: [.uint32(113)])
        let ended = try jobs.terminate(path: job.path, from: ":1.3", errorCode: nil, message: "Disk full")
        guard case .finish(_, let content, _) = try #require(ended.first) else { return }
        #expect(content?.state["failed"] == true && content?.state["message"] == "Disk full")
    }

    @Test("bounded per sender and in all; only the owner may change a view; an owner leaving ends its jobs")
    func boundsAndOwnership() throws {
        var jobs = JobViews(busID: "b", maximumJobs: 3, maximumJobsPerSender: 2)
        _ = try jobs.requestView(from: ":1.3", version: .v3, app: Self.app, capabilities: 1, hints: [:], now: 0)
        let (job, _) = try jobs.requestView(from: ":1.3", version: .v3, app: Self.app, capabilities: 1, hints: [:], now: 0)
        #expect(throws: JobViews.Refusal.self) {
            try jobs.requestView(from: ":1.3", version: .v3, app: Self.app, capabilities: 1, hints: [:], now: 0)
        }
        _ = try jobs.requestView(from: ":1.4", version: .v3, app: Self.app, capabilities: 1, hints: [:], now: 0)
        let refusal = #expect(throws: JobViews.Refusal.self) {
            try jobs.requestView(from: ":1.5", version: .v3, app: Self.app, capabilities: 1, hints: [:], now: 0)
        }
        #expect(refusal?.name == BusError.limitsExceeded)
        #expect(throws: JobViews.Refusal.self) {
            try jobs.update(path: job.path, from: ":1.4", properties: ["percent": .uint32(1)])
        }
        #expect(throws: JobViews.Refusal.self) {
            try jobs.terminate(path: "/org/island/bridge/JobView/99", from: ":1.3", errorCode: 0, message: "")
        }
        let gone = jobs.ownerGone(":1.3")
        #expect(gone.count == 2)
        guard case .finish(_, let content, true) = try #require(gone.first) else { return }
        expectJSON(content?.state["ownerGone"], true)
        #expect(jobs.jobs.count == 1)
    }

    @Test("a job shows once its client is identified, as the app the client is verified as, else as the bridge's Transfer")
    func identified() throws {
        var jobs = JobViews(busID: "bus", maximumJobs: 8, maximumJobsPerSender: 4)
        let dolphin: (String) -> DesktopEntry? = { $0 == "org.kde.dolphin" ? DesktopEntry(name: "Dolphin", icon: "system-file-manager") : nil }
        let (job, shown) = try jobs.requestView(
            from: ":1.3", version: .v3, app: nil, claim: "org.kde.dolphin", label: "org.kde.dolphin",
            capabilities: 1, hints: ["title": .string("Copying")], now: 0)
        #expect(shown.isEmpty, "not before its client is identified")
        #expect(try jobs.update(path: job.path, from: ":1.3", properties: ["percent": .uint32(5)]).isEmpty)
        let script = jobs.identified(":1.3", identity: SenderIdentity(confinement: .none, executable: "/usr/bin/python3"), lookup: dolphin)
        guard case .show(let activity) = try #require(script.first) else { return }
        #expect(activity.attributes["app"] == ["name": "Transfer", "icon": .string(SourceApp.bridgeIcon), "label": "org.kde.dolphin"])
        expectJSON(activity.content.state["percent"], 5)

        let (other, _) = try jobs.requestView(
            from: ":1.4", version: .v3, app: nil, claim: "org.kde.dolphin", label: nil,
            capabilities: 1, hints: [:], now: 0)
        let flatpak = SenderIdentity(confinement: .flatpak(appID: "org.kde.dolphin"))
        guard case .show(let verified) = try #require(jobs.identified(":1.4", identity: flatpak, lookup: dolphin).first) else { return }
        #expect(verified.source == jobs.source(of: other))
        #expect(verified.attributes["app"] == ["name": "Dolphin", "icon": "system-file-manager", "desktopEntry": "org.kde.dolphin"])
        #expect(jobs.identified(":1.4", identity: flatpak, lookup: dolphin).isEmpty, "shown once")
    }

    @Test("a job whose client leaves before it is identified shows as the bridge's Transfer, ended as owner gone")
    func ownerGoneBeforeIdentified() throws {
        var jobs = JobViews(busID: "bus", maximumJobs: 8, maximumJobsPerSender: 4)
        let (job, shown) = try jobs.requestView(
            from: ":1.3", version: .v2, app: nil, claim: "org.kde.dolphin", label: "org.kde.dolphin",
            capabilities: 1, hints: ["title": .string("Moving")], now: 0)
        #expect(shown.isEmpty)
        let gone = jobs.ownerGone(":1.3")
        #expect(gone.count == 2)
        guard case .show(let activity) = try #require(gone.first) else { Issue.record("not shown: \(gone)"); return }
        #expect(activity.source == jobs.source(of: job))
        #expect(activity.attributes["app"] == ["name": "Transfer", "icon": .string(SourceApp.bridgeIcon), "label": "org.kde.dolphin"])
        guard case .finish(_, let content, true) = try #require(gone.last) else { Issue.record("not ended: \(gone)"); return }
        expectJSON(content?.state["ownerGone"], true)
        #expect(jobs.jobs.isEmpty)
        // An identity that comes after the client left shows nothing more.
        #expect(jobs.identified(":1.3", identity: .unknown) { _ in nil }.isEmpty)
    }

    @Test("sizes in decimal units")
    func byteCounts() {
        #expect(ByteCount.text(950) == "950 B")
        #expect(ByteCount.text(1_234) == "1.2 kB")
        #expect(ByteCount.text(45_000_000) == "45 MB")
        #expect(ByteCount.text(9_960_000) == "10 MB")
        #expect(ByteCount.text(UInt64.max) == "18 EB")
    }
}
