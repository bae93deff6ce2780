import Foundation
import IslandKit
import IslandKitTesting
import OrderedCollections
import OrderedJSON
import Testing

/// An app's attributes, as an app declares them.
struct PlayerAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable {
        var track: String
        var paused: Bool
    }

    static let activityType = "Player"
    var album: String
}

/// The same activity type after the app renamed its struct: `activityType` keeps it one type.
struct RenamedPlayerAttributes: ActivityAttributes {
    typealias ContentState = PlayerAttributes.ContentState
    static let activityType = "Player"
    var album: String
}

/// The code under test: what an app would write, handed its connection.
struct Player {
    let connection: IslandConnection

    func start(album: String, ownerGone: ActivityOwnerGonePolicy = .keep) async throws -> Activity<PlayerAttributes> {
        try await Activity.request(
            attributes: PlayerAttributes(album: album),
            content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil),
            ownerGone: ownerGone, connection: connection)
    }

    /// Follows the activity's buttons until it is dismissed: "pause" pauses.
    func follow(_ activity: Activity<PlayerAttributes>, _ interactions: AsyncStream<ActivityInteraction>) async throws {
        for await interaction in interactions {
            guard case .button(action: "pause") = interaction else { continue }
            var state = activity.content.state
            state.paused = true
            try await activity.checkedUpdate(ActivityContent(state: state, staleDate: nil))
        }
    }
}

let playerLayout = ActivityLayout([
    "url": "https://player.example/{{attributes.album}}",
    "lockScreen": ["type": "text", "template": "{{state.track}}"],
    "expanded": ["bottom": ["type": "button", "action": "pause", "label": "Pause", "priority": 0]],
])

/// IslandKit and IslandKitTesting as an app's tests use them: no islandd, no socket.
@Suite(.timeLimit(.minutes(1)))
struct AppActivityTests {
    @Test func aButtonReachesTheAppsCodeWhichUpdatesTheActivity() async throws {
        try await TestIsland.withIsland { island in
            let player = Player(connection: island.connection())
            try await Activity<PlayerAttributes>.register(layout: playerLayout, connection: player.connection)
            #expect(try await island.layouts()["Player"]?["url"] == "https://player.example/{{attributes.album}}")

            let activity = try await player.start(album: "Blue")
            var contents = activity.contentUpdates.makeAsyncIterator()
            // Read before the task starts: nothing pressed after this line is missed.
            let buttons = activity.interactions
            let following = Task { try await player.follow(activity, buttons) }
            var interactions = activity.interactions.makeAsyncIterator()

            #expect(try await island.tap(activity.id) == "https://player.example/Blue")
            #expect(await interactions.next() == .tap(url: URL(string: "https://player.example/Blue")))
            try await island.press(button: "pause", on: activity.id)
            #expect(await interactions.next() == .button(action: "pause"))
            // The app's code paused; presenters got it.
            while let content = await contents.next(), !content.state.paused {}
            #expect(activity.content.state.paused)

            await activity.end(nil, dismissalPolicy: .immediate)
            // The streams finish with the dismissal, and so does the app's loop.
            #expect(await interactions.next() == nil)
            try await following.value
        }
    }

    @Test func anImmediateDismissalStillReportsEndedFirst() async throws {
        try await TestIsland.withIsland { island in
            let activity = try await Player(connection: island.connection()).start(album: "Red")
            // Followed from the moment it is read.
            let stream = activity.activityStateUpdates
            await activity.end(nil, dismissalPolicy: .immediate)
            var seen: [ActivityState] = []
            for await state in stream { seen.append(state) }
            #expect(seen == [.ended, .dismissed])
            #expect(activity.activityState == .dismissed)
        }
    }

    @Test func aDismissalByTheUserReportsEndedThenDismissed() async throws {
        try await TestIsland.withIsland { island in
            let activity = try await Player(connection: island.connection()).start(album: "Green")
            let stream = activity.activityStateUpdates
            try await island.dismiss(activity.id)
            var seen: [ActivityState] = []
            for await state in stream { seen.append(state) }
            #expect(seen == [.ended, .dismissed])
        }
    }

    @Test func activityUpdatesTellOfActivitiesStartedElsewhereOnce() async throws {
        try await TestIsland.withIsland { island in
            let app = island.connection()
            let running = try await Player(connection: app).start(album: "Before")
            var started = Activity<PlayerAttributes>.activityUpdates(connection: app).makeAsyncIterator()
            // Another process of the same app (or its server, by push) starts one.
            let other = try await Player(connection: island.connection()).start(album: "Elsewhere")
            let seen = await started.next()
            #expect(seen?.id == other.id && seen?.id != running.id)
            #expect(seen?.attributes.album == "Elsewhere")
            #expect(seen?.content.state.track == "One")
            // This process's own start comes too, and an update is no start.
            await other.update(ActivityContent(state: .init(track: "Two", paused: false), staleDate: nil))
            let own = try await Player(connection: app).start(album: "Here")
            #expect(await started.next()?.id == own.id)
        }
    }

    @Test func frequentPushEnablementFollowsTheUsersSetting() async throws {
        try await TestIsland.withIsland(frequentUpdates: [TestIsland.defaultApp]) { island in
            // On while the desktop entry asks for them and the user has not turned them off.
            let info = ActivityAuthorizationInfo(connection: island.connection())
            #expect(await info.frequentPushesEnabled)
            var updates = info.frequentPushEnablementUpdates.makeAsyncIterator()
            try await island.setFrequentUpdates(false)
            #expect(await updates.next() == false)
            try await island.setFrequentUpdates(true)
            #expect(await updates.next() == true)
        }
    }

    @Test func theActivityTypeOutlivesARenameOfTheStruct() async throws {
        try await TestIsland.withIsland { island in
            let connection = island.connection()
            let before = try await Player(connection: connection).start(album: "Kept")
            try await Activity<PlayerAttributes>.register(layout: playerLayout, connection: connection)
            let after = try await Activity<RenamedPlayerAttributes>.activities(connection: connection)
            #expect(after.map(\.id) == [before.id])
            #expect(after.first?.attributes.album == "Kept")
            #expect(try await island.layouts().keys.sorted() == ["Player"])
        }
    }

    @Test func anInvalidLayoutIsRefusedByPath() async throws {
        try await TestIsland.withIsland { island in
            let layout = ActivityLayout(["lockScreen": ["type": "no-such-view"]])
            await #expect {
                try await Activity<PlayerAttributes>.register(layout: layout, connection: island.connection())
            } throws: { error in
                guard case .invalidLayout(let type, let path, _) = error as? ActivityAuthorizationError else { return false }
                return type == "Player" && path.contains("lockScreen")
            }
        }
    }
}
