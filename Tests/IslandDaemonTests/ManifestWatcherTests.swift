import Foundation
import Logging
import Synchronization
import Testing
@testable import IslandDaemon

/// The inotify shell around `ManifestWatch`, on a real folder.
@Suite struct ManifestWatcherTests {
    /// Watched once `start` returns, however late the watching thread first runs (here: only
    /// after the entry is written). When that thread placed the watches, the daemon could say
    /// it was ready before them, and an entry installed in between was never read.
    @Test func anEntryWrittenBeforeTheWatchingThreadRunsIsSeen() async throws {
        let share = FileManager.default.temporaryDirectory.appendingPathComponent("island-watch-\(UUID().uuidString)")
        let applications = share.appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: share) }
        let seen = Atomic(false)
        let watcher = try #require(ManifestWatcher(dataDirectories: [share.path], logger: Logger(label: "test")) { seen.store(true, ordering: .relaxed) })
        var late: (@Sendable () -> Void)?
        watcher.start { late = $0 }
        defer { watcher.stop() }
        try Data("[Desktop Entry]\n".utf8).write(to: applications.appendingPathComponent("org.example.App.desktop"))
        ManifestWatcher.thread(try #require(late))
        // Looked for without blocking a thread of the test pool; the liveness bound: the
        // rescan follows the burst's end (a fifth of a second).
        let deadline = ContinuousClock.now + .seconds(30)
        while !seen.load(ordering: .relaxed), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let wasSeen = seen.load(ordering: .relaxed)
        #expect(wasSeen, "the entry written before the thread ran was not seen")
    }
}
