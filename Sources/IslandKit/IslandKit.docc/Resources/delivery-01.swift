import Foundation
import IslandKit

struct DeliveryAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable, Sendable {
        var stage: String
        var progress: Double
        var eta: Date
    }

    static let activityType = "Delivery"
    var orderNumber: Int
}
