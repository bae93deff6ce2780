import Foundation
import IslandKit

IslandKit.configure(appID: "org.example.Delivery")

func deliver() async throws {
    let layout = try ActivityLayout(contentsOf: Bundle.module.url(forResource: "Delivery", withExtension: "json")!)
    try await Activity<DeliveryAttributes>.register(layout: layout)

    let eta = Date.now.addingTimeInterval(25 * 60)
    let activity = try await Activity.request(
        attributes: DeliveryAttributes(orderNumber: 42),
        content: ActivityContent(state: .init(stage: "Baking", progress: 0.2, eta: eta), staleDate: nil))

    let interactions = activity.interactions
    Task {
        for await interaction in interactions {
            if case .button(action: "cancel") = interaction {
                await activity.end(
                    ActivityContent(state: .init(stage: "Cancelled", progress: 0, eta: eta), staleDate: nil),
                    dismissalPolicy: .immediate)
            }
        }
    }
    let states = activity.activityStateUpdates
    Task {
        for await state in states { print("the activity is \(state)") }
    }

    try await Task.sleep(for: .seconds(10))
    // Once the user has cancelled, the activity has ended: updating or ending it again does
    // nothing, as in ActivityKit.
    await activity.update(
        ActivityContent(state: .init(stage: "On its way", progress: 0.6, eta: eta), staleDate: nil),
        alertConfiguration: AlertConfiguration(title: "Order 42", body: "Your pizza is on its way", sound: .default))

    try await Task.sleep(for: .seconds(10))
    await activity.end(
        ActivityContent(state: .init(stage: "Delivered", progress: 1, eta: .now), staleDate: nil),
        dismissalPolicy: .default)
}

// A refusal says what happened and what to do about it: print both rather than crash.
do {
    try await deliver()
} catch let error as ActivityAuthorizationError {
    print("\(error)\n\(error.recoverySuggestion)")
} catch {
    print(error)
}
