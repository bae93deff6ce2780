import Foundation

/// A damped spring, solved in closed form: a step of any length lands exactly where the
/// spring would be then, so a late frame is as stable as a punctual one. Pure; time is an
/// argument. `response` is the period of the undamped oscillation (SwiftUI's meaning);
/// `dampingRatio` below 1 overshoots a little (0.8: about 1.5 % of the distance, once, with
/// no visible second swing).
package struct Spring: Sendable, Hashable {
    package var value: Double
    package var velocity: Double = 0
    package var target: Double
    package var response: Double
    package var dampingRatio: Double

    package static let defaultDampingRatio = 0.8

    package init(_ value: Double, response: Double = 0.4, dampingRatio: Double = Spring.defaultDampingRatio) {
        self.value = value
        self.target = value
        self.response = response
        self.dampingRatio = dampingRatio
    }

    package var isSettled: Bool { abs(value - target) < 0.05 && abs(velocity) < 0.5 }

    /// Advances by `dt` seconds.
    package mutating func step(_ dt: Double) {
        guard dt > 0, dt.isFinite, value.isFinite, velocity.isFinite, target.isFinite else {
            if !(value.isFinite && velocity.isFinite) { value = target; velocity = 0 }
            return
        }
        let t = min(dt, 10)
        let omega = 2 * Double.pi / max(0.01, response)
        let zeta = max(0.05, dampingRatio)
        let x0 = value - target, v0 = velocity
        let x: Double, v: Double
        if zeta < 1 {
            let damped = omega * (1 - zeta * zeta).squareRoot()
            let decay = exp(-zeta * omega * t)
            let a = x0, b = (v0 + zeta * omega * x0) / damped
            let c = cos(damped * t), s = sin(damped * t)
            x = decay * (a * c + b * s)
            v = decay * ((b * damped - zeta * omega * a) * c - (a * damped + zeta * omega * b) * s)
        } else {
            // Critically damped (and anything stiffer is treated as such).
            let decay = exp(-omega * t)
            let b = v0 + omega * x0
            x = (x0 + b * t) * decay
            v = (v0 - omega * b * t) * decay
        }
        value = target + x
        velocity = v
        if isSettled { value = target; velocity = 0 }
    }
}

/// The bridge between the island and the detached bubble while they are close: the "gooey"
/// neck of a metaball, drawn in the island's colour, so the bubble splits from the pill and
/// merges back into it instead of appearing beside it. Each end is the circle of its shape's
/// rounded corner nearest the other shape.
package struct OverlayNeck: Sendable, Hashable {
    package struct Circle: Sendable, Hashable {
        package var x: Double, y: Double, radius: Double
    }
    package var from: Circle
    package var to: Circle
    /// How far the necked shapes' edges may be apart before the neck has thinned to nothing.
    package var reach: Double

    /// The neck between two shapes, or nil when they are too far apart (it has snapped), one
    /// holds the other, or either is too small to have a neck.
    package static func between(_ a: OverlayShape, _ b: OverlayShape, reach: Double) -> OverlayNeck? {
        guard let first = cornerCircle(a, toward: b), let second = cornerCircle(b, toward: a) else { return nil }
        let distance = hypot(second.x - first.x, second.y - first.y)
        let gap = distance - first.radius - second.radius
        guard gap < reach, distance > abs(first.radius - second.radius) + 0.5 else { return nil }
        let neck = OverlayNeck(from: first, to: second, reach: reach)
        return neck.sides == nil ? nil : neck
    }

    /// The circle of `shape`'s rounding nearest to `other`'s centre.
    static func cornerCircle(_ shape: OverlayShape, toward other: OverlayShape) -> Circle? {
        let rect = shape.rect
        let radius = max(0, min(shape.radius, rect.width / 2, rect.height / 2))
        guard radius >= 2 else { return nil }
        let x = min(max(other.rect.midX, rect.x + radius), rect.maxX - radius)
        let y = min(max(other.rect.midY, rect.y + radius), rect.maxY - radius)
        return Circle(x: x, y: y, radius: radius)
    }

    package typealias Point = (x: Double, y: Double)

    /// The neck's two sides, each a cubic curve (start, control, control, end) from the
    /// island's circle to the bubble's: the upper one from `from` to `to`, the lower one back.
    /// Their ends lie on the circles, so the closed path through them (across each circle)
    /// is the neck's body. Nil once the neck has thinned to nothing.
    package var sides: (upper: [Point], lower: [Point])? {
        let (r1, r2) = (from.radius, to.radius)
        let d = hypot(to.x - from.x, to.y - from.y)
        guard d > 0.001 else { return nil }
        // The spread of the neck's feet on each circle: wide while the shapes overlap, none at
        // the edge of its reach, where it has thinned to a line.
        let thinning = max(0, min(1, (d - r1 - r2) / max(0.001, reach)))
        let spread = 0.5 * (1 - thinning * thinning * (3 - 2 * thinning))
        // Below this the neck would be a hairline: it snaps.
        guard spread > 0.1 else { return nil }
        var u1 = 0.0, u2 = 0.0
        if d < r1 + r2 {
            u1 = acos(max(-1, min(1, (r1 * r1 + d * d - r2 * r2) / (2 * r1 * d))))
            u2 = acos(max(-1, min(1, (r2 * r2 + d * d - r1 * r1) / (2 * r2 * d))))
        }
        let between = atan2(to.y - from.y, to.x - from.x)
        let maxSpread = acos(max(-1, min(1, (r1 - r2) / d)))
        let angle1 = between + u1 + (maxSpread - u1) * spread
        let angle2 = between - u1 - (maxSpread - u1) * spread
        let angle3 = between + Double.pi - u2 - (Double.pi - u2 - maxSpread) * spread
        let angle4 = between - Double.pi + u2 + (Double.pi - u2 - maxSpread) * spread
        func along(_ p: Point, _ angle: Double, _ length: Double) -> Point {
            (p.x + cos(angle) * length, p.y + sin(angle) * length)
        }
        let p1 = along((from.x, from.y), angle1, r1), p2 = along((from.x, from.y), angle2, r1)
        let p3 = along((to.x, to.y), angle3, r2), p4 = along((to.x, to.y), angle4, r2)
        // Handles along the circles' tangents, shorter as the feet come together.
        let base = min(spread * 2.4, hypot(p3.x - p1.x, p3.y - p1.y) / (r1 + r2))
        let handle = base * min(1, d * 2 / (r1 + r2))
        let h1 = along(p1, angle1 - Double.pi / 2, r1 * handle), h2 = along(p2, angle2 + Double.pi / 2, r1 * handle)
        let h3 = along(p3, angle3 + Double.pi / 2, r2 * handle), h4 = along(p4, angle4 - Double.pi / 2, r2 * handle)
        return ([p1, h1, h3, p3], [p4, h4, h2, p2])
    }
}

/// The island's motion between frames: each shape's rectangle and radius follow springs;
/// content that changed crossfades inside its shape, and a number that changed in place rolls.
/// The detached bubble is born at the pill's trailing end and moves out (split), and moves
/// back into the pill when it goes (merge), with a neck between them while they are close.
/// With motion off (reduced motion), every change is immediate.
package struct OverlayMotion: Sendable {
    struct ShapeSprings: Sendable {
        var x: Spring, y: Spring, width: Spring, height: Spring, radius: Spring, opacity: Spring
        init(_ shape: OverlayShape, opacity: Double, response: Double) {
            x = Spring(shape.rect.x, response: response)
            y = Spring(shape.rect.y, response: response)
            width = Spring(shape.rect.width, response: response)
            height = Spring(shape.rect.height, response: response)
            radius = Spring(shape.radius, response: response)
            // Opacity does not overshoot: it is clamped to 0…1 and would stick at the ends.
            // Quick: a shape is seen for what it is at once, never as a translucent ghost.
            self.opacity = Spring(opacity, response: response * 0.35, dampingRatio: 1)
        }
        var geometry: [Spring] { [x, y, width, height, radius] }
        var all: [Spring] { geometry + [opacity] }
        mutating func step(_ dt: Double) {
            x.step(dt); y.step(dt); width.step(dt); height.step(dt); radius.step(dt); opacity.step(dt)
        }
        func retarget(_ shape: OverlayShape, opacity target: Double) -> ShapeSprings {
            var copy = self
            copy.x.target = shape.rect.x; copy.y.target = shape.rect.y
            copy.width.target = shape.rect.width; copy.height.target = shape.rect.height
            copy.radius.target = shape.radius; copy.opacity.target = target
            return copy
        }
        var rect: OverlayRect { OverlayRect(x: x.value, y: y.value, width: max(0, width.value), height: max(0, height.value)) }
    }

    package var enabled: Bool
    package let response: Double
    package private(set) var target: OverlayFrame?
    /// The frame before the last change, fading out while the target fades in.
    package private(set) var previous: OverlayFrame?
    /// 0 → 1 as the content of `target` replaces that of `previous`.
    package private(set) var fade = 1.0
    private var springs: [String: ShapeSprings] = [:]
    /// Shapes of the previous frames that the target no longer has, on their way out.
    private var leaving: [String: OverlayShape] = [:]
    /// How far apart the island and the bubble are when both rest, less a margin: the neck is
    /// gone before they get there, so it never shows on a still island.
    private var neckReach = 6.0

    package init(enabled: Bool = true, response: Double = 0.4) {
        self.enabled = enabled
        self.response = response
    }

    package var isAnimating: Bool {
        enabled && (fade < 1 || springs.values.contains { $0.all.contains { !$0.isSettled } })
    }

    /// Whether a shape is between two places: growing, shrinking, moving or leaving. Content
    /// that only crossfades in still shapes is not moving: a click may act on it.
    package var shapesMoving: Bool {
        enabled && (!leaving.isEmpty || springs.values.contains { $0.geometry.contains { !$0.isSettled } })
    }

    /// Sets the frame to move to. The same geometry with new content only crossfades.
    /// - Parameter animated: false for a clock tick: the new content replaces the old at once
    ///   (a ticking timer redraws once a second, not for a crossfade), unless the shapes moved.
    package mutating func show(_ frame: OverlayFrame, animated: Bool = true) {
        defer {
            target = frame
            if let island = frame.shape("island"), let bubble = frame.shape("bubble") {
                neckReach = max(0, min(bubble.rect.height / 2, 0.8 * (bubble.rect.x - island.rect.maxX)))
            }
        }
        if !animated, let current = target, current.shapes == frame.shapes {
            previous = nil
            fade = 1
            return
        }
        guard enabled, let current = target else {
            springs = [:]
            leaving = [:]
            for shape in frame.shapes { springs[shape.id] = ShapeSprings(shape, opacity: 1, response: response) }
            fade = 1
            previous = nil
            return
        }
        if current.content != frame.content {
            // What is on screen now fades out. While a fade's new content has not begun to
            // show, the old one goes on fading out from where it is instead (no flash back to
            // full), and the newest content comes in when that fade's would have.
            if previous == nil || fade >= 0.36 {
                previous = current
                fade = 0
            }
        }
        var next: [String: ShapeSprings] = [:]
        for shape in frame.shapes {
            if let existing = springs[shape.id] {
                next[shape.id] = existing.retarget(shape, opacity: 1)
            } else {
                // The island as it is now (or as it starts, when it arrives with this change).
                let island = next["island"] ?? springs["island"]
                let origin = Self.origin(of: shape, island: island?.shapeNow(id: "island", kind: .island), panel: frame.shape("panel")?.rect)
                // What comes out of the island is as opaque as the island is.
                let opacity = origin.opacity ?? island?.opacity.value ?? 1
                next[shape.id] = ShapeSprings(origin.shape, opacity: opacity, response: response).retarget(shape, opacity: 1)
            }
            leaving[shape.id] = nil
        }
        let islandTarget = frame.shape("island")
        let panelNow = springs["panel"]?.rect
        for (id, springs) in springs where next[id] == nil {
            guard let old = current.shape(id) ?? leaving[id] else { continue }
            let away = Self.destination(of: springs.shapeNow(id: id, kind: old.kind), island: islandTarget, panel: panelNow)
            next[id] = springs.retarget(away.shape, opacity: away.opacity)
            leaving[id] = old
        }
        springs = next
    }

    /// Where a shape that appears starts, and at what opacity (nil: the island's): the bubble
    /// inside the pill's trailing end (it splits off from there); the list's panel out from
    /// under the island, and each card in it where the panel's shrinking would put it, so the
    /// list grows out of the island as one body; an island from nothing as a point at its top
    /// centre, as opaque as it will be: a shape growing, never a translucent blob.
    static func origin(of shape: OverlayShape, island: OverlayShape?, panel: OverlayRect? = nil) -> (shape: OverlayShape, opacity: Double?) {
        var start = shape
        switch (shape.kind, island) {
        case (.bubble, let island?):
            start.rect = tucked(shape.rect, into: island)
            start.radius = start.rect.height / 2
            return (start, nil)
        case (.panel, let island?):
            start.rect = island.rect
            start.radius = island.radius
            return (start, nil)
        case (.card, let island?):
            start.rect = panel.map { mapped(shape.rect, from: $0, to: island.rect) } ?? island.rect
            start.radius = min(shape.radius, start.rect.height / 2, start.rect.width / 2)
            return (start, nil)
        default:
            start.rect = dot(shape.rect)
            start.radius = start.rect.height / 2
            return (start, 1)
        }
    }

    /// Where a shape that goes is headed: the bubble back into the island's trailing end
    /// (merging), the panel back under the island and each card with it (`panel`: the panel
    /// as it is now), anything else to a point, fading.
    static func destination(of shape: OverlayShape, island: OverlayShape?, panel: OverlayRect? = nil) -> (shape: OverlayShape, opacity: Double) {
        var end = shape
        switch shape.kind {
        case .bubble where island != nil:
            end.rect = tucked(shape.rect, into: island!)
            end.radius = min(shape.rect.width, shape.rect.height) / 2
            return (end, 1)
        case .panel, .card:
            guard let island else {
                end.rect = dot(shape.rect)
                end.radius = end.rect.height / 2
                return (end, 0)
            }
            end.rect = shape.kind == .card ? panel.map { mapped(shape.rect, from: $0, to: island.rect) } ?? island.rect : island.rect
            end.radius = min(island.radius, end.rect.height / 2, end.rect.width / 2)
            // Under the island when it gets there: as opaque as it is, and hidden.
            return (end, 1)
        default:
            end.rect = dot(shape.rect)
            end.radius = end.rect.height / 2
            return (end, 0)
        }
    }

    /// `rect` as it lies in `from`, moved and scaled into `to` (each axis in proportion).
    static func mapped(_ rect: OverlayRect, from: OverlayRect, to: OverlayRect) -> OverlayRect {
        let sx = from.width > 0 ? to.width / from.width : 0, sy = from.height > 0 ? to.height / from.height : 0
        return OverlayRect(x: to.x + (rect.x - from.x) * sx, y: to.y + (rect.y - from.y) * sy, width: rect.width * sx, height: rect.height * sy)
    }

    /// A circle of `rect`'s size (its smaller side) inside `island`, as near to `rect` as the
    /// island's rounded corners allow: where the bubble hides when it is part of the island.
    static func tucked(_ rect: OverlayRect, into island: OverlayShape) -> OverlayRect {
        let side = max(0, min(rect.width, rect.height, island.rect.width, island.rect.height))
        let corner = max(0, min(island.radius, island.rect.width / 2, island.rect.height / 2))
        // A circle in a rounded corner of radius R touches it when its centre is R − r from the
        // corner's centre: inset by (R − r)(1 − 1/√2) on both axes.
        let inset = max(0, corner - side / 2) * (1 - 1 / 2.0.squareRoot())
        let x = min(max(rect.x, island.rect.x + inset), island.rect.maxX - side - inset)
        let y = min(max(rect.y, island.rect.y + inset), island.rect.maxY - side - inset)
        return OverlayRect(x: x, y: y, width: side, height: side)
    }

    /// A point (a few pixels across) at the top centre of `rect`: where an island comes from
    /// and goes to.
    static func dot(_ rect: OverlayRect) -> OverlayRect {
        let side = min(rect.width, rect.height, 6)
        return OverlayRect(x: rect.midX - side / 2, y: rect.y + min(rect.height, OverlayLayout.pillHeight) / 2 - side / 2, width: side, height: side)
    }

    package mutating func step(_ dt: Double) {
        guard enabled else { return }
        for id in springs.keys { springs[id]!.step(dt) }
        fade = min(1, fade + dt / Self.fadeDuration(response))
        if fade >= 1 { previous = nil }
        for (id, s) in springs where leaving[id] != nil && s.all.allSatisfy(\.isSettled) {
            springs[id] = nil
            leaving[id] = nil
        }
    }

    /// 0.3 s at the default response: the old content is gone in its first third (100 ms),
    /// the new comes in from 108 ms to 255 ms.
    static func fadeDuration(_ response: Double) -> Double { response * 0.75 }

    /// How opaque the new content is at `fade`: it starts once the old has gone and the shape
    /// has come most of the way (a spring of this response has covered about 55 % of it by
    /// then, 90 % by the middle of the fade-in), so the two are never read on top of each other.
    package static func incoming(_ fade: Double) -> Double { smooth((fade - 0.36) / 0.5) }

    /// How opaque the old content still is at `fade`: it scales and fades out with its shape
    /// within the first third of the fade, before a moving edge could reach it.
    package static func outgoing(_ fade: Double) -> Double { 1 - smooth(fade * 3) }

    static func smooth(_ x: Double) -> Double {
        let t = max(0, min(1, x))
        return t * t * (3 - 2 * t)
    }

    /// The shapes as they are now, mid-motion: each with its current rectangle, radius and
    /// opacity; the target's shapes first, in its order, then those on their way out.
    package var shapes: [(shape: OverlayShape, opacity: Double)] {
        guard let target else { return [] }
        var result: [(OverlayShape, Double)] = []
        let ordered = target.shapes + leaving.values.sorted { $0.id < $1.id }
        for shape in ordered {
            guard let s = springs[shape.id], enabled else {
                if target.shapes.contains(shape) { result.append((shape, 1)) }
                continue
            }
            var moving = shape
            moving.rect = s.rect
            moving.radius = max(0, min(s.radius.value, moving.rect.height / 2, moving.rect.width / 2))
            // A bubble merging back is becoming part of the island: it takes the island's keyline.
            if shape.kind == .bubble, leaving[shape.id] != nil { moving.keyline = target.shape("island")?.keyline }
            result.append((moving, min(1, max(0, s.opacity.value))))
        }
        return result
    }

    /// The neck between the island and the bubble as they are now, if they are close enough.
    package var neck: OverlayNeck? {
        guard enabled else { return nil }
        let now = shapes
        guard let island = now.first(where: { $0.shape.id == "island" })?.shape,
            let bubble = now.first(where: { $0.shape.id == "bubble" })?.shape
        else { return nil }
        return OverlayNeck.between(island, bubble, reach: neckReach)
    }

    /// The shape with `id` as it is now, if it is on screen.
    package func shape(_ id: String) -> (shape: OverlayShape, opacity: Double)? {
        shapes.first { $0.shape.id == id }
    }
}

extension OverlayMotion.ShapeSprings {
    func shapeNow(id: String, kind: OverlayShape.Kind) -> OverlayShape {
        OverlayShape(id: id, kind: kind, rect: rect, radius: max(0, min(radius.value, rect.width / 2, rect.height / 2)))
    }
}

extension OverlayFrame {
    /// The shape a placed piece of content belongs to, and is clipped to: the innermost shape
    /// that holds the content's centre (a card before the panel around it).
    package func owner(of placed: OverlayPlaced) -> OverlayShape? {
        let x = placed.rect.midX, y = placed.rect.midY
        return shapes.filter { $0.rect.contains(x: x, y: y) }.min { $0.rect.width * $0.rect.height < $1.rect.width * $1.rect.height }
    }
}
