package import Foundation
package import IslandCore
package import OrderedJSON
import IslandProtocol
import OrderedCollections

/// The values of an item's `state`.
private typealias State = PresenterNames.Item.State

/// One activity as the daemon delivered it to presenters (`org.island.Presenter.Item`), with
/// its layout already validated.
package struct PresenterItem: Sendable, Hashable {
    package var id: String
    package var app: String
    package var type: String
    package var attributes: JSONObject
    package var state: JSONObject
    package var staleDate: Double?
    package var relevanceScore: Double
    /// pending, active, stale, ended or dismissed.
    package var activityState: String
    package var endReason: String?
    package var layout: Layout
    package var defaultLayout: Bool
    /// The app's desktop entry `Name=` and `Icon=`, when the daemon knows them: for an
    /// activity its producer speaks for another app with (`sourceApp`), that app's.
    package var appName: String?
    package var appIcon: String?
    /// The app a producer that speaks for others (the bridge) showed the activity as, verified.
    package var sourceApp: String?
    /// That producer's own `Name=` and `Icon=`, said quieter: what the activity came through.
    package var producerName: String?
    package var producerIcon: String?
    /// When the activity started (the daemon's clock): the overlay's list shows newest first.
    package var createdAt: Double?
    /// When it ended (the daemon's clock); nil while live, and from a daemon that does not say.
    package var endedAt: Double?

    package init(
        id: String, app: String, type: String, attributes: JSONObject = [:], state: JSONObject = [:],
        staleDate: Double? = nil, relevanceScore: Double = 0, activityState: String = State.active,
        endReason: String? = nil, layout: Layout? = nil, defaultLayout: Bool = false,
        appName: String? = nil, appIcon: String? = nil, sourceApp: String? = nil, producerName: String? = nil,
        producerIcon: String? = nil, createdAt: Double? = nil, endedAt: Double? = nil
    ) {
        self.id = id
        self.app = app
        self.type = type
        self.attributes = attributes
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.activityState = activityState
        self.endReason = endReason
        self.layout = layout ?? Layout.default(for: type, attributes: attributes, state: state)
        self.defaultLayout = layout == nil || defaultLayout
        self.appName = appName
        self.appIcon = appIcon
        self.sourceApp = sourceApp
        self.producerName = producerName
        self.producerIcon = producerIcon
        self.createdAt = createdAt
        self.endedAt = endedAt
    }

    /// Decodes an `Item`; nil when it has no id. A layout that does not validate (which the
    /// daemon never sends) is replaced by the default layout rather than dropping the activity.
    package init?(json: JSON) {
        typealias Item = PresenterNames.Item
        typealias Content = PresenterNames.Content
        guard let object = json.objectValue, let id = object[Item.id]?.stringValue else { return nil }
        let content = object[Item.content]?.objectValue ?? [:]
        let type = object[Item.type]?.stringValue ?? ""
        let attributes = object[Item.attributes]?.objectValue ?? [:]
        let state = content[Content.state]?.objectValue ?? [:]
        let layout: Layout? = object[Item.layout].flatMap { try? Layout(json: $0) }
        self.init(
            id: id, app: object[Item.app]?.stringValue ?? "", type: type, attributes: attributes, state: state,
            staleDate: content[Content.staleDate]?.doubleValue, relevanceScore: content[Content.relevanceScore]?.doubleValue ?? 0,
            activityState: object[Item.state]?.stringValue ?? State.active, endReason: object[Item.endReason]?.stringValue,
            layout: layout, defaultLayout: object[Item.defaultLayout]?.boolValue ?? (layout == nil),
            appName: object[Item.appName]?.stringValue, appIcon: object[Item.appIcon]?.stringValue,
            sourceApp: object[Item.sourceApp]?.stringValue, producerName: object[Item.producerName]?.stringValue,
            producerIcon: object[Item.producerIcon]?.stringValue,
            createdAt: object[Item.createdAt]?.doubleValue, endedAt: object[Item.endedAt]?.doubleValue)
    }

    package var isStale: Bool { activityState == State.stale }
    package var hasEnded: Bool { activityState == State.ended || activityState == State.dismissed }
    package var isLive: Bool { activityState == State.active || activityState == State.stale }

    /// The instant what depends on time is drawn at: `now` while the activity lives; once it
    /// has ended, the moment it ended, so that its card shows its final state and no timer,
    /// countdown, relative time or progress over a time range keeps moving after the end.
    package func contentTime(at now: Double) -> Double {
        guard hasEnded, let endedAt, endedAt.isFinite else { return now }
        return min(now, endedAt)
    }

    /// Whether what is drawn of it may change by itself as time passes: not once it has
    /// ended at a known moment (its content stands still there).
    package var isFrozen: Bool { hasEnded && endedAt?.isFinite == true }

    /// The layout resolved at `now` (at the end, for an ended activity: `contentTime`), its
    /// times of day in `timeZone`. A region the layout leaves out is drawn from the default
    /// layout, as docs/design.md §6 asks of presenters.
    package func render(now: Double, timeZone: TimeZone = .current) -> RenderedLayout {
        let renderer = LayoutRenderer(attributes: attributes, state: state, now: contentTime(at: now), timeZone: timeZone)
        var rendered = renderer.render(layout)
        if defaultLayout { return rendered }
        let fallback = renderer.render(Layout.default(for: type, attributes: attributes, state: state))
        rendered.lockScreen = rendered.lockScreen ?? fallback.lockScreen
        rendered.compactLeading = rendered.compactLeading ?? fallback.compactLeading
        rendered.compactTrailing = rendered.compactTrailing ?? fallback.compactTrailing
        rendered.minimal = rendered.minimal ?? fallback.minimal
        if layout.expanded.isEmpty {
            rendered.expandedLeading = fallback.expandedLeading
            rendered.expandedTrailing = fallback.expandedTrailing
            rendered.expandedCenter = fallback.expandedCenter
            rendered.expandedBottom = fallback.expandedBottom
        }
        return rendered
    }
}
