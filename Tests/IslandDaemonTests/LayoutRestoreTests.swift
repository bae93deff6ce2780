import Foundation
import IslandCore
import IslandStore
import Logging
import Testing
@testable import IslandDaemon

/// A database written before layouts were bounded (say, 3,000 layouts of one app) restores only
/// what an app could register today.
struct LayoutRestoreTests {
    @Test func onlyTheLayoutsWithinTheLimitsAreRestored() {
        let body = #"{"chip":"L"}"#
        var records = (0..<40).map { StoredLayout(app: "org.example.A", type: String(format: "T%02d", $0), body: body) }
        records.append(
            StoredLayout(app: "org.example.B", type: "Huge", body: #"{"chip":""# + String(repeating: " ", count: LayoutLimits.maximumBytes) + #""}"#))
        records.append(StoredLayout(app: "org.example.B", type: "Small", body: body))
        records.append(StoredLayout(app: "org.example.A", uid: 1001, type: "Other", body: body))
        let restored = StateRestorer.layouts(from: StoredState(layouts: records.shuffled()), logger: Logger(label: "test"))
        #expect(restored[ActivityOwner(app: "org.example.A")]?.keys.sorted() == (0..<32).map { String(format: "T%02d", $0) })
        #expect(restored[ActivityOwner(app: "org.example.B")]?.keys.sorted() == ["Small"])
        #expect(restored[ActivityOwner(app: "org.example.A", uid: 1001)]?.keys.sorted() == ["Other"])
    }
}
