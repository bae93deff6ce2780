import Foundation
import IslandKit
import IslandKitTesting
import OrderedCollections
import OrderedJSON
import Testing

/// A layout written in Swift is the document the tutorial writes in JSON, and the daemon takes it.
@Suite(.timeLimit(.minutes(1)))
struct LayoutInSwiftTests {
    let built = ActivityLayout(
        chip: "Pizza",
        url: "https://pizza.example/orders/{{attributes.orderNumber}}",
        compactLeading: .symbol("🍕"),
        compactTrailing: .timer(to: "{{state.eta}}"),
        minimal: .symbol("🍕"),
        lockScreen: .vstack(
            .text("Order {{attributes.orderNumber}}: {{state.stage}}"),
            .progress(value: "{{state.progress}}", total: 1)),
        expanded: ActivityLayout.Expanded(
            center: .text("{{state.stage}}").priority(1),
            bottom: .button(action: "cancel", label: "Cancel order").priority(0)))

    @Test func theBuiltLayoutIsTheTutorialsDocument() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/IslandKit/IslandKit.docc/Resources/delivery-layout.json")
        #expect(built == (try ActivityLayout(contentsOf: file)))
    }

    @Test func theDaemonValidatesAndStoresIt() async throws {
        try await TestIsland.withIsland { island in
            try await Activity<PlayerAttributes>.register(layout: built)
            #expect(try await island.layouts()["Player"] == built.json)
            let refused = ActivityLayout(expanded: ActivityLayout.Expanded(center: .text("no priority")))
            await #expect {
                try await Activity<PlayerAttributes>.register(layout: refused)
            } throws: { error in
                guard case .invalidLayout(_, let path, _) = error as? ActivityAuthorizationError else { return false }
                return path.hasPrefix("expanded.center")
            }
        }
    }
}
