import Foundation
import IslandKit

IslandKit.configure(appID: "org.example.Delivery")

let layout = try ActivityLayout(contentsOf: Bundle.module.url(forResource: "Delivery", withExtension: "json")!)
try await Activity<DeliveryAttributes>.register(layout: layout)
