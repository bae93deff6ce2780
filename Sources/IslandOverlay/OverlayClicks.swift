package import IslandCore

/// A rectangle in whole pixels: where a clickable target is drawn, for `ClickGuard`. Rounded,
/// so that a target the springs leave a fraction of a pixel from where it was still counts as
/// standing still.
package struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    package var x: Int, y: Int, width: Int, height: Int

    package init(_ rect: OverlayRect) {
        func whole(_ value: Double) -> Int { value.isFinite ? Int(max(-1e6, min(1e6, value)).rounded()) : 0 }
        x = whole(rect.x)
        y = whole(rect.y)
        width = whole(rect.maxX) - x
        height = whole(rect.maxY) - y
    }

    package var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// What a click on the overlay does, decided on what is on screen, since a click acts on what
/// the user saw (docs/design.md §10): the frame last *painted*, not the one the island is morphing
/// to, and only on targets that have stood still there for the guard's settle time. Pure: the
/// caller gives the time, in seconds of a monotonic clock.
///
/// A frame is on screen as a whole only once its shapes stopped moving: while the island morphs
/// (a form changes, a card moves in the list) nothing in it acts for an app, and every target
/// waits its settle time again from the first painted frame where the shapes rest. Content that
/// only crossfades in a still shape (a number that changed) keeps the targets that did not move
/// actionable; a new target waits from the frame it first appears in.
///
/// Expanding the island, opening the list and collapsing act for no app and are not guarded.
package struct OverlayClicks: Sendable {
    package typealias Guard = ClickGuard<OverlayTarget, [PixelRect]>

    package private(set) var guarded: Guard
    /// The frame last painted (its geometry, at rest or morphing to it); nil before the first.
    package private(set) var onScreen: OverlayFrame?

    package init(settleTime: Double = OverlayClicks.defaultSettleTime) {
        guarded = Guard(settleTime: settleTime)
    }

    package var settleTime: Double { guarded.settleTime }

    /// `ClickGuard`'s: 500 ms.
    package static var defaultSettleTime: Double { Guard.defaultSettleTime }

    /// Whether a click on `target` acts for an app: a tap (the app is told, a URL opens), a
    /// button (the app's Watch sees it), a dismissal.
    package static func actsForApp(_ target: OverlayTarget) -> Bool {
        switch target {
        case .tap, .button, .dismiss: true
        case .expand, .list, .outside: false
        }
    }

    /// The targets of `frame` that act for an app, each with where it is drawn (a region's URL
    /// may be drawn in more than one place: all of them).
    package static func placements(_ frame: OverlayFrame) -> [OverlayTarget: [PixelRect]] {
        var placements: [OverlayTarget: [PixelRect]] = [:]
        for hit in frame.hits where actsForApp(hit.target) && !hit.rect.isEmpty {
            placements[hit.target, default: []].append(PixelRect(hit.rect))
        }
        return placements
    }

    /// Records the frame painted at `now`. `shapesMoving`: the island's shapes are between two
    /// places (a morph, mid-way); then nothing in it is actionable (the guard holds nothing).
    package mutating func painted(_ frame: OverlayFrame?, shapesMoving: Bool, at now: Double) {
        onScreen = frame
        if let frame, !shapesMoving {
            guarded.shown(Self.placements(frame), at: now)
        } else {
            guarded.clear()
        }
    }

    /// What a click at (x, y) at `now` means: the target on screen there, and whether it may act.
    package struct Decision: Sendable, Hashable {
        package var target: OverlayTarget
        /// False for a target that acts for an app and has not stood still in view long enough:
        /// the click must do nothing for the app.
        package var actionable: Bool
    }

    package func click(x: Double, y: Double, at now: Double) -> Decision {
        guard let onScreen else { return Decision(target: .outside, actionable: true) }
        let target = onScreen.target(x: x, y: y)
        guard Self.actsForApp(target) else { return Decision(target: target, actionable: true) }
        return Decision(target: target, actionable: guarded.isActionable(target, at: now))
    }

    /// The targets on screen that a click at `now` may act on.
    package func actionable(at now: Double) -> [OverlayTarget] {
        guarded.actionable(at: now)
    }

    /// The earliest time after `now` at which a target on screen becomes actionable, if nothing
    /// changes (nil when none is waiting).
    package func nextActionable(after now: Double) -> Double? {
        guarded.nextActionable(after: now)
    }

    /// A target as one word and its arguments, for logs: "tap ID", "button ID ACTION", "dismiss ID".
    package static func describe(_ target: OverlayTarget) -> String {
        switch target {
        case .expand(let id): "expand \(id)"
        case .tap(let id, let url): "tap \(id)" + (url.map { " \($0)" } ?? "")
        case .button(let id, let action): "button \(id) \(action)"
        case .dismiss(let id): "dismiss \(id)"
        case .list: "list"
        case .outside: "outside"
        }
    }
}
