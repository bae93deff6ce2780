import Foundation
import OrderedJSON
import IslandKit
import OrderedCollections
import Testing

struct DeliveryAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable {
        var stage: String
        var eta: Date
    }

    var orderNumber: Int
    var shop: String
}

struct BlobAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable { var text: String }
    static var activityType: String { "Blob" }
    var payload: String
}

/// IslandKit against the real islandd.
@Suite struct ActivityTests {
    let eta = Date(timeIntervalSince1970: 1_900_000_000)

    func content(_ stage: String) -> ActivityContent<DeliveryAttributes.ContentState> {
        ActivityContent(state: .init(stage: stage, eta: eta), staleDate: nil, relevanceScore: 5)
    }

    @Test func requestUpdateEndRoundTrip() async throws {
        try await withDaemonConnection { _, connection in
            let activity = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 12, shop: "Luigi's"),
                content: content("baking"), connection: connection)
            #expect(!activity.id.isEmpty)
            #expect(activity.attributes.orderNumber == 12)
            #expect(activity.activityState == .active)
            #expect(activity.content.state == .init(stage: "baking", eta: eta))
            #expect(activity.content.relevanceScore == 5)
            #expect(activity.app == TestDaemon.app)

            // The daemon holds the attributes as JSON, dates as epoch seconds.
            let raw = try await connection.list()
            #expect(raw.first?.type == "DeliveryAttributes")
            #expect(raw.first.map { Dictionary(uniqueKeysWithValues: $0.attributes.map { ($0.key, $0.value) }) } == ["orderNumber": 12, "shop": "Luigi's"])
            #expect(raw.first?.content.state["eta"]?.doubleValue == 1_900_000_000)

            let result = try await activity.checkedUpdate(content("on the way"), alertConfiguration: AlertConfiguration(title: "Out", body: "On its way"))
            #expect(result.alerted || result.alertSuppressed || result.throttled)
            #expect(activity.content.state.stage == "on the way")

            await activity.end(content("delivered"), dismissalPolicy: .default)
            #expect(activity.activityState == .ended)
            #expect(activity.endReason == .app)
            #expect(activity.content.state.stage == "delivered")

            // As in ActivityKit, `update` of an ended activity is ignored (the checked form says
            // why), and `end` applies its final content and dismissal policy.
            await activity.update(content("again"))
            #expect(activity.content.state.stage == "delivered")
            await #expect(throws: ActivityAuthorizationError.activityEnded(id: activity.id, state: "ended")) {
                try await activity.checkedUpdate(content("again"))
            }
            await activity.end(content("collected"), dismissalPolicy: .immediate)
            #expect(activity.content.state.stage == "collected")
            #expect(activity.activityState == .dismissed)
        }
    }

    @Test func activitiesDecodeAttributesAndStateOfTheirType() async throws {
        try await withDaemonConnection { _, connection in
            let first = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 1, shop: "A"), content: content("baking"),
                connection: connection)
            let second = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 2, shop: "B"), content: content("boxed"),
                connection: connection)
            _ = try await Activity.request(
                attributes: BlobAttributes(payload: "x"), content: ActivityContent(state: .init(text: "t"), staleDate: nil),
                connection: connection)

            let listed = try await Activity<DeliveryAttributes>.activities(connection: connection)
            #expect(listed.map(\.id) == [first.id, second.id])
            #expect(listed.map(\.attributes.shop) == ["A", "B"])
            #expect(listed.map(\.content.state.stage) == ["baking", "boxed"])
            let blobs = try await Activity<BlobAttributes>.activities(connection: connection)
            #expect(blobs.map(\.attributes.payload) == ["x"])

            // A keyed request is idempotent.
            let keyed = try await Activity.request(
                attributes: BlobAttributes(payload: "k"), content: .init(state: .init(text: "1"), staleDate: nil),
                key: "once", connection: connection)
            let again = try await Activity.request(
                attributes: BlobAttributes(payload: "k"), content: .init(state: .init(text: "1"), staleDate: nil),
                key: "once", connection: connection)
            #expect(keyed.id == again.id)
        }
    }

    @Test func contentAndStateUpdatesYield() async throws {
        try await withDaemonConnection { _, connection in
            let activity = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 3, shop: "C"), content: content("baking"),
                connection: connection)
            let contents = Collected(activity.contentUpdates)
            let states = Collected(activity.activityStateUpdates)

            await activity.update(content("boxed"))
            await activity.update(content("on the way"))
            // Updates faster than the rate coalesce: the latest always arrives.
            #expect(await contents.first { $0.state.stage == "on the way" } != nil)

            await activity.end(content("delivered"))
            #expect(await states.first { $0 == .ended } != nil)
            #expect(await contents.first { $0.state.stage == "delivered" } != nil)
            #expect(!states.isFinished)

            // Dismissal is the last state: the streams finish.
            let other = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 6, shop: "F"), content: content("baking"),
                connection: connection)
            let otherStates = Collected(other.activityStateUpdates)
            let otherContents = Collected(other.contentUpdates)
            await other.end(nil, dismissalPolicy: .immediate)
            #expect(await otherStates.first { $0 == .dismissed } != nil)
            #expect(await otherStates.finished())
            // As in ActivityKit, `ended` comes before `dismissed`, also when dismissed at once.
            #expect(otherStates.elements == [.ended, .dismissed])
            #expect(await otherContents.finished())
            #expect(other.activityState == .dismissed)
        }
    }

    @Test func authorizationAndEnablementUpdates() async throws {
        try await withDaemonConnection { daemon, connection in
            let info = ActivityAuthorizationInfo(connection: connection)
            #expect(await info.areActivitiesEnabled)
            #expect(await !info.frequentPushesEnabled)
            #expect(try await info.details().app == TestDaemon.app)
            let updates = Collected(info.activityEnablementUpdates)

            _ = try await daemon.admin("SetEnabled", ["app": .string(TestDaemon.app), "enabled": false])
            #expect(await updates.first { $0 == false } != nil)
            await #expect(throws: ActivityAuthorizationError.denied(app: TestDaemon.app)) {
                _ = try await Activity.request(
                    attributes: DeliveryAttributes(orderNumber: 4, shop: "D"), content: content("x"),
                    connection: connection)
            }
            #expect(await !ActivityAuthorizationInfo(connection: connection).areActivitiesEnabled)

            _ = try await daemon.admin("SetEnabled", ["app": .string(TestDaemon.app), "enabled": true])
            #expect(await updates.first(from: 1) { $0 == true } != nil)
        }
    }

    @Test func refusalsMapToNamedErrors() async throws {
        try await withDaemonConnection { daemon, connection in
            let big = String(repeating: "x", count: 5000)
            do {
                _ = try await Activity.request(
                    attributes: BlobAttributes(payload: big), content: .init(state: .init(text: ""), staleDate: nil),
                    connection: connection)
                Issue.record("a request over 4096 bytes was accepted")
            } catch let error as ActivityAuthorizationError {
                guard case .attributesTooLarge(let limit, let size, let part) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(limit == 4096)
                #expect(size > 5000)
                #expect(part == "attributes", "the attributes are the larger: the part to make smaller")
                #expect(error.name == "org.island.AttributesTooLarge")
            }

            await #expect(throws: ActivityAuthorizationError.noSuchActivity(id: "nope")) {
                _ = try await connection.update(id: "nope", content: RawActivityContent(state: [:]))
            }

            try await daemon.withConnection(app: "org.example.NotInstalled") { stranger in
                do {
                    _ = try await stranger.list()
                    Issue.record("an app without a manifest was served")
                } catch let error as ActivityAuthorizationError {
                    guard case .unentitled(let app, _) = error else {
                        Issue.record("unexpected \(error)")
                        return
                    }
                    #expect(app == "org.example.NotInstalled")
                }
            }
        }
    }

    @Test func noDaemonIsDaemonUnavailable() async throws {
        let connection = IslandConnection(configuration: .init(appID: "x", socketPath: "/tmp/island-kit-none/s.sock"))
        do {
            _ = try await connection.list()
            Issue.record("a call without a daemon succeeded")
        } catch let error as ActivityAuthorizationError {
            guard case .daemonUnavailable(let path, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == "/tmp/island-kit-none/s.sock")
        }
        await connection.close()
    }

    @Test func contentUpdatesSurviveADaemonRestart() async throws {
        try await withDaemonConnection { daemon, connection in
            let activity = try await Activity.request(
                attributes: DeliveryAttributes(orderNumber: 5, shop: "E"), content: content("baking"),
                connection: connection)
            let contents = Collected(activity.contentUpdates)
            let states = Collected(activity.activityStateUpdates)
            await activity.update(content("boxed"))
            #expect(await contents.first { $0.state.stage == "boxed" } != nil)

            // Counted before the restart: IslandKit may be back, and have re-emitted, before
            // `start` returns.
            let seen = contents.elements.count
            await daemon.stop()
            try await daemon.start()

            // The same loop gets the current content again once IslandKit is back…
            #expect(await contents.first(from: seen) { $0.state.stage == "boxed" } != nil)
            #expect(await states.first { $0 == .active } != nil)
            // …and what comes after the restart.
            await activity.update(content("on the way"))
            #expect(await contents.first(from: seen) { $0.state.stage == "on the way" } != nil)
            #expect(!contents.isFinished)
        }
    }
}
