import Foundation
import IslandCore
import OrderedJSON
import IslandStore
import Logging
import OrderedCollections

/// Rebuilds the engine's state from the database: every stored activity, the settings and
/// budgets, and the registered layouts. Timers are recomputed by the first `advance`.
enum StateRestorer {
    static func manager(from stored: StoredState, limits: LimitsPolicy, now: Double, logger: Logger) -> ActivityManager {
        let owners = legacyOwners(from: stored)
        var activities: [Activity] = []
        for record in stored.activities {
            var body = record.body
            if body["uid"] == nil, let uid = owners[record.id] { body["uid"] = .int(Int(uid)) }
            do {
                activities.append(try Activity(json: body))
            } catch {
                logger.warning("skipping an activity that cannot be read", metadata: ["id": "\(record.id)", "error": "\(error)"])
            }
        }
        let settings = stored.settings["manager"]?.objectValue ?? [:]
        var snapshot: ManagerSnapshot
        do {
            snapshot = try ManagerSnapshot(activities: activities, settingsAndBudgetsJSON: settings)
        } catch {
            // Losing the budgets and switches is better than refusing to start: activities
            // still come back, and the settings return to their defaults (all apps enabled).
            logger.error("the stored settings cannot be read; using the defaults", metadata: ["error": "\(error)"])
            snapshot = ManagerSnapshot(activities: activities)
        }
        // Each owner's push spending, in a row of its own. A row replaces the times an older
        // daemon kept in the manager's document: it was made from a manager that had read them.
        for (key, value) in stored.settings where key.hasPrefix(PushSpending.settingPrefix) {
            do {
                try snapshot.readPushSpending(row: value.objectValue ?? [:], path: key)
            } catch {
                logger.error("an owner's push spending cannot be read; it starts again at nothing", metadata: ["error": "\(error)"])
            }
        }
        return ActivityManager(snapshot: snapshot, limits: limits, now: now, makeID: { UUID().uuidString.lowercased() })
    }

    /// The setting in which a daemon before owners were part of the activity kept who started
    /// each activity (system scope). `manager(from:…)` reads it into the activities.
    static let legacyOwnersSetting = "owners"

    private static func legacyOwners(from stored: StoredState) -> [String: UInt32] {
        var owners: [String: UInt32] = [:]
        for (id, uid) in stored.settings[legacyOwnersSetting]?.objectValue ?? [:] {
            if let uid = uid.intValue, let value = UInt32(exactly: uid) { owners[id] = value }
        }
        return owners
    }

    /// What moves a database with the legacy "owners" setting to owners stored in each
    /// activity: every activity rewritten, with the uid `manager(from:…)` gave it, and the
    /// setting dropped. Empty when there is nothing to migrate; applied once, at start.
    static func ownersMigration(from stored: StoredState, manager: ActivityManager) -> [StoreMutation] {
        guard stored.settings[legacyOwnersSetting] != nil else { return [] }
        let rewritten = manager.list().map { activity in
            StoreMutation.putActivity(
                id: activity.id, app: activity.app, state: activity.state.rawValue,
                body: StoredDocument(text: ActivityDocument(activity: activity)))
        }
        return rewritten + [.deleteSetting(key: legacyOwnersSetting)]
    }

    /// What moves a database whose manager document holds the pushes' spending times (a daemon
    /// before each owner's spending had a row) to those rows: a row per owner that spent, and
    /// the document without the times. Empty when there is nothing to migrate; applied once,
    /// at start. Until it is, the times are read from the document, so nothing is forgotten
    /// in between.
    static func pushSpendingMigration(from stored: StoredState, manager: ActivityManager) -> [StoreMutation] {
        guard let budgets = stored.settings["manager"]?["budgets"]?.objectValue, ActivityBudgets.holdsPushTimes(budgets) else {
            return []
        }
        return manager.budgets.pushes.rows.map { StoreMutation.putSetting(key: $0.key, value: .object($0.row)) }
            + [.putSetting(key: "manager", value: .object(manager.settingsAndBudgetsJSON))]
    }

    /// The registered layouts by owner: in the system scope, the registering extension's
    /// (app, uid). One stored before layouts had owners has none, and draws no user's
    /// activities there until its extension registers it again.
    static func layouts(from stored: StoredState, logger: Logger) -> [ActivityOwner: [String: JSON]] {
        var layouts: [ActivityOwner: [String: JSON]] = [:]
        for record in withinLimits(stored.layouts, logger: logger) {
            guard let json = try? JSONParser.parse(record.body) else {
                logger.warning("skipping a stored layout that is not JSON", metadata: ["app": "\(record.app)", "type": "\(record.type)"])
                continue
            }
            layouts[ActivityOwner(app: record.app, uid: record.uid), default: [:]][record.type] = json
        }
        return layouts
    }

    /// The stored layouts an app could have registered today: an older daemon took any number
    /// of any size, and restoring them all would cost what the limits now prevent. The first
    /// types by name are kept, up to the limit; the log names the others, which stay on disk.
    static func withinLimits(_ records: [StoredLayout], logger: Logger) -> [StoredLayout] {
        var kept: [StoredLayout] = []
        let owners = Dictionary(grouping: records) { ActivityOwner(app: $0.app, uid: $0.uid) }
        for (owner, records) in owners {
            var count = 0
            for record in records.sorted(by: { $0.type < $1.type }) {
                guard record.body.utf8.count <= LayoutLimits.maximumBytes, count < LayoutLimits.maximumLayoutsPerApp else {
                    logger.warning(
                        "not restoring a stored layout past the layout limits",
                        metadata: [
                            "app": "\(owner.app)", "type": "\(record.type)", "bytes": "\(record.body.utf8.count)",
                        ])
                    continue
                }
                count += 1
                kept.append(record)
            }
        }
        return kept
    }
}
