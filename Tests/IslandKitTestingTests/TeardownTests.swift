import Foundation
import IslandKit
import IslandKitTesting
import Testing

/// What `withIsland` does with what a test leaves behind, and the connection it stands in for.
@Suite(.timeLimit(.minutes(1)))
struct TeardownTests {
    /// Activities of every `ownerGone` policy still live when `withIsland` returns: closing the
    /// app's connections sets off the policies (an end, a grace period) while the daemon is
    /// torn down. The daemon commits what they decided before its store closes, and nothing
    /// that comes later touches the closed database (which crashed the test process).
    /// Several rounds, each daemon's late work running on the loop the next one uses.
    @Test(arguments: 0..<5) func liveActivitiesOfEveryPolicyAreTornDownSafely(round: Int) async throws {
        for _ in 0..<4 {
            let directory = try await TestIsland.withIsland(configuration: "[Limits]\nMaxActivitiesPerApp=6\n") { island in
                for policy in [ActivityOwnerGonePolicy.keep, .end, .stale] {
                    // Through a connection of its own and through the shared one.
                    _ = try await Player(connection: island.connection()).start(album: "\(policy)", ownerGone: policy)
                    _ = try await Activity.request(
                        attributes: PlayerAttributes(album: "shared \(policy)"),
                        content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil),
                        ownerGone: policy)
                }
                // Followed, as an app's code would be, when the test ends.
                let followed = try await Activity<PlayerAttributes>.activities(connection: island.connection())
                #expect(followed.count == 6)
                for activity in followed { _ = activity.contentUpdates }
                return island.directory
            }
            #expect(!FileManager.default.fileExists(atPath: directory))
        }
    }

    /// Code under test that uses IslandKit's defaults reaches the test's daemon, as the app it
    /// configured, also from the tasks it starts; outside `withIsland` the default is the
    /// real daemon's again.
    @Test func theSharedConnectionIsTheTestsDaemonInsideWithIsland() async throws {
        try await TestIsland.withIsland { island in
            #expect(IslandConnection.shared().configuration.socketPath == "in-process:" + island.directory)
            let started = try await Task {
                try await Activity.request(
                    attributes: PlayerAttributes(album: "Default"),
                    content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil))
            }.value
            #expect(started.app == TestIsland.defaultApp)
            #expect(await Activity<PlayerAttributes>.activities.map(\.id) == [started.id])
            #expect(await ActivityAuthorizationInfo().areActivitiesEnabled)
            #expect(IslandConnection.shared() === IslandConnection.shared())
        }
        #expect(!IslandConnection.shared().configuration.socketPath.hasPrefix("in-process:"))
    }
}
