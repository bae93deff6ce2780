import Foundation
import IslandKit

IslandKit.configure(appID: "org.example.Delivery")

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
            try await activity.end(
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
try await activity.update(
    ActivityContent(state: .init(stage: "On its way", progress: 0.6, eta: eta), staleDate: nil),
    alertConfiguration: AlertConfiguration(title: "Order 42", body: "Your pizza is on its way"))
