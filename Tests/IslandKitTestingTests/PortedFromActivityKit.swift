// ActivityKit code as an iOS app has it — request, update with an alert, end with a policy,
// authorization and its streams, the activities, push tokens, errors — compiled against
// IslandKit. Every change it needed is marked `Linux:` and listed in the porting guide
// (IslandKit.docc/PortingFromActivityKit.md, docs/developer-guide.md "Porting from
// ActivityKit"); what is not marked is ActivityKit's spelling, unchanged.

import Foundation
import IslandKit  // Linux: instead of `import ActivityKit`
import IslandKitTesting
import Testing

struct PizzaDeliveryAttributes: ActivityAttributes {
    public typealias PizzaDeliveryStatus = ContentState

    public struct ContentState: Codable, Hashable, Sendable {  // Linux: Sendable, for Swift 6
        var driverName: String
        var deliveryTimer: ClosedRange<Date>
    }

    static let activityType = "PizzaDelivery"  // Linux: recommended, not required
    var numberOfPizzas: Int
    var totalAmount: String
    var orderNumber: String
}

/// An app's activity code.
struct PizzaDeliveryActivities {
    func startDelivery() async throws -> Activity<PizzaDeliveryAttributes>? {  // Linux: async
        guard await ActivityAuthorizationInfo().areActivitiesEnabled else { return nil }  // Linux: await
        let attributes = PizzaDeliveryAttributes(numberOfPizzas: 2, totalAmount: "$42.00", orderNumber: "12345")
        let state = PizzaDeliveryAttributes.ContentState(driverName: "Bill James", deliveryTimer: Date.now...Date.now.addingTimeInterval(15 * 60))
        let content = ActivityContent(state: state, staleDate: Date.now.addingTimeInterval(30 * 60), relevanceScore: 50)
        do {
            let activity = try await Activity.request(attributes: attributes, content: content, pushType: nil)  // Linux: await
            print("Requested a pizza delivery Live Activity \(activity.id).")
            return activity
        } catch let error as ActivityAuthorizationError {
            switch error {
            case .denied, .visibility, .unsupported, .unsupportedTarget: print("Live Activities are off: \(error.localizedDescription)")
            case .attributesTooLarge: print("too large")
            case .globalMaximumExceeded, .targetMaximumExceeded: print("too many")
            case .persistenceFailure, .missingProcessIdentifier, .malformedActivityIdentifier, .reconnectNotPermitted, .unentitled:
                print("failed: \(error.localizedDescription)")
            default: print("failed: \(error)")  // Linux: Island has more cases
            }
            return nil
        }
    }

    func startTransientDelivery(
        _ attributes: PizzaDeliveryAttributes,
        _ content: ActivityContent<PizzaDeliveryAttributes.ContentState>
    ) async throws {
        _ = try await Activity.request(attributes: attributes, content: content, pushType: nil, style: .transient)  // Linux: await
    }

    func updateDelivery(_ activity: Activity<PizzaDeliveryAttributes>) async {
        let state = PizzaDeliveryAttributes.ContentState(driverName: "Anne Johnson", deliveryTimer: Date.now...Date.now.addingTimeInterval(60 * 60))
        let content = ActivityContent<PizzaDeliveryAttributes.ContentState>(state: state, staleDate: nil)
        await activity.update(content)
        let alertConfiguration = AlertConfiguration(title: "Delay", body: "Your pizza order will arrive in 25 minutes.", sound: .default)
        await activity.update(content, alertConfiguration: alertConfiguration)
        await activity.update(
            content, alertConfiguration: AlertConfiguration(title: "Delay", body: "Soon", sound: .named("chime.aiff")),
            timestamp: Date.now)
    }

    func endDelivery(_ activity: Activity<PizzaDeliveryAttributes>) async {
        let state = PizzaDeliveryAttributes.ContentState(driverName: "Anne Johnson", deliveryTimer: Date.now...Date.now)
        let finalContent = ActivityContent(state: state, staleDate: nil)
        await activity.end(finalContent, dismissalPolicy: .after(Date.now.addingTimeInterval(60 * 60)))
        await activity.end(nil, dismissalPolicy: .immediate)
        await activity.end(finalContent, dismissalPolicy: .default, timestamp: Date.now)
    }

    func endAll() async {
        for activity in await Activity<PizzaDeliveryAttributes>.activities {  // Linux: await
            await activity.end(nil, dismissalPolicy: .immediate)
        }
    }

    func observe(_ activity: Activity<PizzaDeliveryAttributes>) async {
        Task {
            for await state in activity.activityStateUpdates where state == .ended || state == .dismissed {
                print("ended: \(activity.activityState)")
            }
        }
        Task {
            for await content in activity.contentUpdates { print(content.state.driverName, content.staleDate as Any) }
        }
        Task {
            for await activity in Activity<PizzaDeliveryAttributes>.activityUpdates { print(activity.id, activity.attributes.orderNumber) }
        }
        let updates: Activity<PizzaDeliveryAttributes>.ContentUpdates = activity.contentUpdates
        let states: Activity<PizzaDeliveryAttributes>.ActivityStateUpdates = activity.activityStateUpdates
        _ = (updates, states)
    }

    func observeAuthorization() {
        let info = ActivityAuthorizationInfo()
        Task {
            for await enabled in info.activityEnablementUpdates { print("enabled: \(enabled)") }
        }
        Task {
            for await frequent in ActivityAuthorizationInfo().frequentPushEnablementUpdates { print("frequent: \(frequent)") }
        }
        let enablement: ActivityAuthorizationInfo.ActivityEnablementUpdates = info.activityEnablementUpdates
        _ = enablement
    }

    func push(_ activity: Activity<PizzaDeliveryAttributes>) async throws {
        let attributes = PizzaDeliveryAttributes(numberOfPizzas: 1, totalAmount: "$9.00", orderNumber: "1")
        let content = ActivityContent(
            state: PizzaDeliveryAttributes.ContentState(driverName: "Bill", deliveryTimer: Date.now...Date.now),
            staleDate: nil)
        let pushed = try await Activity.request(attributes: attributes, content: content, pushType: .token)  // Linux: await
        if let token = pushed.pushToken { print(token.map { String(format: "%02x", $0) }.joined()) }
        Task {
            for await pushToken in pushed.pushTokenUpdates {
                let pushTokenString = pushToken.reduce("") { $0 + String(format: "%02x", $1) }
                print("New push token: \(pushTokenString)")
            }
        }
        if let token = await Activity<PizzaDeliveryAttributes>.pushToStartToken { print(token.count) }  // Linux: await
        Task {
            for await data in Activity<PizzaDeliveryAttributes>.pushToStartTokenUpdates {
                print(data.map { String(format: "%02x", $0) }.joined())
            }
        }
    }
}

/// The ported ActivityKit code runs too, against the test's daemon, through the shared
/// connection it uses without knowing.
@Suite(.timeLimit(.minutes(1)))
struct PortedActivityKitCodeTests {
    @Test func thePortedCodeStartsUpdatesAndEndsTheDelivery() async throws {
        try await TestIsland.withIsland { _ in
            let code = PizzaDeliveryActivities()
            let activity = try #require(try await code.startDelivery())
            #expect(activity.attributes.orderNumber == "12345")
            await code.updateDelivery(activity)
            #expect(activity.content.state.driverName == "Anne Johnson")
            await code.endDelivery(activity)
            // Ended with the first policy, then ended again `.immediate`ly: as in ActivityKit,
            // the second end's policy applies and the activity is gone (the third end, of a
            // dismissed activity, is silently nothing).
            #expect(activity.activityState == .dismissed)
            #expect(activity.endReason == .app)
            #expect(await Activity<PizzaDeliveryAttributes>.activities.isEmpty)
        }
    }

    @Test func aTransientActivityIsDismissedAsItEnds() async throws {
        try await TestIsland.withIsland { _ in
            let activity = try await Activity.request(
                attributes: PlayerAttributes(album: "Short"),
                content: ActivityContent(state: .init(track: "One", paused: false), staleDate: nil),
                style: .transient)
            let states = activity.activityStateUpdates
            await activity.end(nil)
            var seen: [ActivityState] = []
            for await state in states { seen.append(state) }
            #expect(seen == [.ended, .dismissed])
        }
    }
}
