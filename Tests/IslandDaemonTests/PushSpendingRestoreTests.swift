import Foundation
import IslandCore
import OrderedJSON
import IslandStore
import Logging
import OrderedCollections
import Testing
@testable import IslandDaemon

/// The push budget's spending is stored a row per owner; a state file from before, which kept
/// every spending time in the manager's document, loads with the budget still spent, and is
/// moved to the rows once.
@Suite struct PushSpendingRestoreTests {
    static let app = "org.example.Coffee"
    static let logger = Logger(label: "test")

    func limits(budget: Int) -> LimitsPolicy {
        var global = ActivityLimits()
        global.pushBudget = budget
        return LimitsPolicy(global: global)
    }

    @Test func aManagerDocumentWithSpendingTimesLoadsAndIsMovedToRowsOnce() throws {
        let directory = NSTemporaryDirectory() + "island-push-spending-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Date().timeIntervalSince1970
        do {
            // As a daemon before the rows wrote it.
            let store = try IslandStore.open(directory: directory)
            let writer = StoreWriter(store: store)
            let legacy: JSONObject = [
                "budgets": [
                    "starts": [:], "alerts": [:], "pushes": [Self.app: [.double(now - 30), .double(now - 20)]],
                    "users": ["1000": ["starts": [:], "alerts": [:], "pushes": [Self.app: [.double(now - 10)]]]],
                ],
                "settings": ["enabled": true, "apps": ["org.example.Muted": ["enabled": false, "frequentUpdates": true]]],
            ]
            try writer.commitNow([.putSetting(key: "manager", value: .object(legacy))])
            writer.close()
            try store.close()
        }
        let store = try IslandStore.open(directory: directory)
        let stored = try store.load()
        let manager = StateRestorer.manager(from: stored, limits: limits(budget: 2), now: now, logger: Self.logger)
        #expect(manager.remainingPushes(app: Self.app, entitlement: .init(entitled: true), now: now) == 0)
        #expect(manager.remainingPushes(app: Self.app, uid: 1000, entitlement: .init(entitled: true), now: now) == 1)
        #expect(!manager.settings.isEnabled(app: "org.example.Muted"))

        let migration = StateRestorer.pushSpendingMigration(from: stored, manager: manager)
        #expect(migration.count == 3, "two owners' rows and the document: \(migration)")
        let writer = StoreWriter(store: store)
        try writer.commitNow(migration)
        writer.close()
        try store.close()

        let migrated = try IslandStore.open(directory: directory)
        let reread = try migrated.load()
        try migrated.close()
        #expect(Set(reread.settings.keys) == ["manager", "pushes/-/\(Self.app)", "pushes/1000/\(Self.app)"])
        #expect(reread.settings["manager"]?["budgets"]?["pushes"] == nil)
        #expect(reread.settings["manager"]?["budgets"]?["users"]?["1000"]?["pushes"] == nil)
        #expect(StateRestorer.pushSpendingMigration(from: reread, manager: manager).isEmpty, "done once")
        let restarted = StateRestorer.manager(from: reread, limits: limits(budget: 2), now: now, logger: Self.logger)
        #expect(restarted.budgets == manager.budgets)
        #expect(restarted.settings == manager.settings)
    }

    @Test func anOwnersRowReplacesTheTimesOfTheManagersDocument() throws {
        // A push after the upgrade but before the migration was committed: the row holds the
        // older times too (they were read into the manager it was made from), so they count once.
        let now = 1_700_000_000.0
        var manager = ActivityManager(limits: limits(budget: 5), makeID: { "a" })
        _ = try manager.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: [:]),
            entitlement: .init(entitled: true), now: now)
        for second in 1...2 {
            _ = try manager.pushUpdate(
                app: Self.app, id: "a", content: ActivityContent(state: ["n": .int(second)]), priority: .high,
                entitlement: .init(entitled: true), now: now + Double(second))
        }
        let owner = ActivityOwner(app: Self.app)
        let stored = StoredState(settings: [
            "manager": ["budgets": ["pushes": [Self.app: [.double(now + 1)]]]],
            PushSpending.settingKey(for: owner): .object(manager.budgets.pushes.row(for: owner)),
        ])
        let restored = StateRestorer.manager(from: stored, limits: limits(budget: 5), now: now + 3, logger: Self.logger)
        #expect(restored.remainingPushes(app: Self.app, entitlement: .init(entitled: true), now: now + 3) == 3)
    }
}
