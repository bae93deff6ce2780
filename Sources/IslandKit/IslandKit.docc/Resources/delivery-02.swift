import Foundation
import IslandKit

IslandKit.configure(appID: "org.example.Delivery")

func deliver() async throws {
    let layout = try ActivityLayout(contentsOf: Bundle.module.url(forResource: "Delivery", withExtension: "json")!)
    try await Activity<DeliveryAttributes>.register(layout: layout)
}

// A refusal says what happened and what to do about it: print both rather than crash.
do {
    try await deliver()
} catch let error as ActivityAuthorizationError {
    print("\(error)\n\(error.recoverySuggestion)")
} catch {
    print(error)
}
