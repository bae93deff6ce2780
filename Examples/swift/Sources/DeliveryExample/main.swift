import Foundation
import IslandKit

/// What a delivery activity shows: fixed attributes, and a state each update replaces.
struct DeliveryAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable {
        var stage: String
        var progress: Double
    }

    /// The name layouts and presenters know these activities by; set it, so renaming the
    /// struct changes nothing.
    static let activityType = "Delivery"
    var orderNumber: Int
}

// The app this process acts for: its desktop entry (org.example.Delivery.desktop, beside this
// package) declares X-Island-LiveActivities=true.
IslandKit.configure(appID: ProcessInfo.processInfo.environment["ISLAND_APP_ID"] ?? "org.example.Delivery")

func deliver() async throws {
    let activity = try await Activity.request(
        attributes: DeliveryAttributes(orderNumber: 42),
        content: ActivityContent(state: .init(stage: "Baking", progress: 0.2), staleDate: nil))
    print("started \(activity.id)")

    let pause = Duration.seconds(Double(ProcessInfo.processInfo.environment["DELIVERY_PAUSE"] ?? "") ?? 2)
    for (stage, progress) in [("On its way", 0.6), ("At your door", 0.95)] {
        try await Task.sleep(for: pause)
        await activity.update(ActivityContent(state: .init(stage: stage, progress: progress), staleDate: nil))
        print("\(stage)")
    }
    try await Task.sleep(for: pause)
    await activity.end(
        ActivityContent(state: .init(stage: "Delivered", progress: 1), staleDate: nil),
        dismissalPolicy: .default)
    print("ended")
}

// A refusal says what happened and what to do about it (no desktop entry, no daemon, …).
do {
    try await deliver()
} catch let error as ActivityAuthorizationError {
    FileHandle.standardError.write(Data("DeliveryExample: \(error)\n\(error.recoverySuggestion)\n".utf8))
    exit(1)
}
