/// A critically damped spring: moves a value to its target in about `response` seconds with
/// no overshoot past what the eye reads as settling. Pure; time is an argument.
public struct Spring: Sendable, Hashable {
    public var value: Double
    public var velocity: Double = 0
    public var target: Double
    public var response: Double

    public init(_ value: Double, response: Double = 0.4) {
        self.value = value
        self.target = value
        self.response = response
    }

    public var isSettled: Bool { abs(value - target) < 0.05 && abs(velocity) < 0.5 }

    /// Advances by `dt` seconds (split in small steps, so a late frame stays stable).
    public mutating func step(_ dt: Double) {
        guard dt > 0, dt.isFinite else { return }
        let omega = 2 * Double.pi / max(0.01, response)
        var left = min(dt, 1)
        while left > 0 {
            let h = min(left, 1.0 / 240)
            let acceleration = -omega * omega * (value - target) - 2 * omega * velocity
            velocity += acceleration * h
            value += velocity * h
            left -= h
        }
        if isSettled { value = target; velocity = 0 }
    }
}

/// The island's motion between frames: each shape's rectangle and radius follow springs;
/// content that changed crossfades, and a number that changed in place rolls. With motion
/// off (reduced motion), every change is immediate.
public struct OverlayMotion: Sendable {
    struct ShapeSprings: Sendable {
        var x: Spring, y: Spring, width: Spring, height: Spring, radius: Spring, opacity: Spring
        init(_ shape: OverlayShape, opacity: Double, response: Double) {
            x = Spring(shape.rect.x, response: response)
            y = Spring(shape.rect.y, response: response)
            width = Spring(shape.rect.width, response: response)
            height = Spring(shape.rect.height, response: response)
            radius = Spring(shape.radius, response: response)
            self.opacity = Spring(opacity, response: response * 0.6)
        }
        var all: [Spring] { [x, y, width, height, radius, opacity] }
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
    }

    public var enabled: Bool
    public let response: Double
    public private(set) var target: OverlayFrame?
    /// The frame before the last change, fading out while the target fades in.
    public private(set) var previous: OverlayFrame?
    /// 0 → 1 as the content of `target` replaces that of `previous`.
    public private(set) var fade = 1.0
    private var springs: [String: ShapeSprings] = [:]
    /// Shapes of the previous frame that the target no longer has, shrinking away.
    private var leaving: [String: OverlayShape] = [:]

    public init(enabled: Bool = true, response: Double = 0.4) {
        self.enabled = enabled
        self.response = response
    }

    public var isAnimating: Bool {
        enabled && (fade < 1 || springs.values.contains { $0.all.contains { !$0.isSettled } })
    }

    /// Whether a shape is between two places: growing, shrinking, moving or leaving. Content
    /// that only crossfades in still shapes is not moving (what a click may act on, issue #25).
    public var shapesMoving: Bool {
        enabled && (!leaving.isEmpty || springs.values.contains { s in [s.x, s.y, s.width, s.height, s.radius].contains { !$0.isSettled } })
    }

    /// Sets the frame to move to. The same geometry with new content only crossfades.
    /// - Parameter animated: false for a clock tick: the new content replaces the old at once
    ///   (a ticking timer redraws once a second, not for a crossfade), unless the shapes moved.
    public mutating func show(_ frame: OverlayFrame, animated: Bool = true) {
        defer { target = frame }
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
            previous = current
            fade = 0
        }
        var next: [String: ShapeSprings] = [:]
        for shape in frame.shapes {
            if let existing = springs[shape.id] {
                next[shape.id] = existing.retarget(shape, opacity: 1)
            } else {
                // A new shape grows out of the island (or from its own place when there is none).
                let origin = springs["island"].map { s in
                    OverlayShape(id: shape.id, kind: shape.kind, rect: .init(x: s.x.value, y: s.y.value, width: s.width.value, height: s.height.value), radius: s.radius.value)
                } ?? OverlayShape(id: shape.id, kind: shape.kind, rect: .init(x: shape.rect.midX, y: shape.rect.y, width: 0, height: shape.rect.height), radius: shape.radius)
                next[shape.id] = ShapeSprings(origin, opacity: 0, response: response).retarget(shape, opacity: 1)
            }
            leaving[shape.id] = nil
        }
        for (id, springs) in springs where next[id] == nil {
            if let old = current.shape(id) ?? leaving[id] {
                var shrink = old
                shrink.rect = .init(x: old.rect.midX, y: old.rect.y, width: 0, height: min(old.rect.height, OverlayLayout.pillHeight))
                next[id] = springs.retarget(shrink, opacity: 0)
                leaving[id] = old
            }
        }
        springs = next
    }

    public mutating func step(_ dt: Double) {
        guard enabled else { return }
        for id in springs.keys { springs[id]!.step(dt) }
        fade = min(1, fade + dt / (response * 0.6))
        if fade >= 1 { previous = nil }
        for (id, s) in springs where leaving[id] != nil && s.opacity.isSettled && s.opacity.value == 0 {
            springs[id] = nil
            leaving[id] = nil
        }
    }

    /// The shapes as they are now, mid-motion: each with its current rectangle, radius and opacity.
    public var shapes: [(shape: OverlayShape, opacity: Double)] {
        guard let target else { return [] }
        var result: [(OverlayShape, Double)] = []
        let ordered = target.shapes + leaving.values.sorted { $0.id < $1.id }
        for shape in ordered {
            guard let s = springs[shape.id], enabled else {
                if target.shapes.contains(shape) { result.append((shape, 1)) }
                continue
            }
            var moving = shape
            moving.rect = .init(x: s.x.value, y: s.y.value, width: max(0, s.width.value), height: max(0, s.height.value))
            moving.radius = max(0, min(s.radius.value, moving.rect.height / 2, moving.rect.width / 2))
            result.append((moving, min(1, max(0, s.opacity.value))))
        }
        return result
    }
}
