package import OrderedJSON
import OrderedCollections

/// What the island and the lock screen show: the daemon's decision (docs/design.md §5).
///
/// `attached` and `detached` always describe the resting arrangement, also while an activity
/// is expanded, so a presenter knows what the island returns to (`restingMode`).
package struct IslandPresentation: Sendable, Hashable {
    package enum Mode: String, Sendable, Hashable {
        /// No live activity.
        case none
        /// One app: its top activity, leading and trailing.
        case compact
        /// Two or more apps: the top activity attached, another app's top activity detached.
        case minimal
        /// One activity expanded, by a long-press or briefly by an alert.
        case expanded
    }

    package private(set) var mode: Mode
    /// compact: the activity shown; minimal: the top activity.
    package private(set) var attached: String?
    /// minimal: the top activity of another app than `attached`'s.
    package private(set) var detached: String?
    /// expanded: the expanded activity.
    package private(set) var expanded: String?
    /// expanded: why `expanded` is expanded. The expiry time stays with the daemon, which
    /// schedules the recompute; presenters would only see deltas that change nothing on screen.
    package private(set) var expansionReason: IslandExpansion.Reason?
    /// Every non-dismissed activity, live and ended, in lock-screen order.
    package private(set) var lockScreen: [String]

    /// The island with no activities.
    package static let empty = IslandPresentation(mode: .none, attached: nil, detached: nil, expanded: nil, expansionReason: nil, lockScreen: [])

    private init(
        mode: Mode, attached: String?, detached: String?, expanded: String?,
        expansionReason: IslandExpansion.Reason?, lockScreen: [String]
    ) {
        self.mode = mode
        self.attached = attached
        self.detached = detached
        self.expanded = expanded
        self.expansionReason = expansionReason
        self.lockScreen = lockScreen
    }

    /// The arbitration itself, a pure function of the activities, the interactions and the time.
    /// - Parameter candidates: every non-dismissed activity, in any order.
    package init(candidates: [IslandCandidate], interactions: IslandInteractions, now: Double) {
        let ordered = candidates.sorted(by: IslandCandidate.precedes)
        let live = ordered.filter(\.isLive)
        let top = live.first
        let otherApp = top.flatMap { top in live.first { $0.app != top.app } }

        self.attached = top?.id
        self.detached = otherApp?.id
        self.lockScreen = ordered.map(\.id)
        let expansion = interactions.expansion(at: now, live: Set(live.map(\.id)))
        self.expanded = expansion?.id
        self.expansionReason = expansion?.reason
        self.mode = expansion != nil ? .expanded : Self.restingMode(attached: attached, detached: detached)
    }

    /// What the island shows once no activity is expanded.
    package var restingMode: Mode { Self.restingMode(attached: attached, detached: detached) }

    private static func restingMode(attached: String?, detached: String?) -> Mode {
        if detached != nil { return .minimal }
        return attached != nil ? .compact : .none
    }

    /// Whether the island itself (not the lock-screen list) differs from `other`'s.
    func islandDiffers(from other: IslandPresentation) -> Bool {
        mode != other.mode || attached != other.attached || detached != other.detached
            || expanded != other.expanded || expansionReason != other.expansionReason
    }
}

extension IslandPresentation {
    /// The wire form, `org.island.Presenter.Island`: absent ids are left out.
    package var json: JSONObject {
        var object: JSONObject = ["mode": .string(mode.rawValue)]
        if let attached { object["attached"] = .string(attached) }
        if let detached { object["detached"] = .string(detached) }
        if let expanded { object["expanded"] = .string(expanded) }
        object["lockScreen"] = .array(lockScreen.map(JSON.string))
        return object
    }
}
