extension LayoutRenderer {
    func render(_ progress: LayoutProgress) -> RenderedProgress {
        let (fraction, total) = measure(progress.measure)
        let segmentsLength = progress.segments.reduce(0) { $0 + $1.length }
        // Android's ProgressStyle: with segments, points are placed along their total length.
        let scale = progress.segments.isEmpty ? total : segmentsLength
        var start = 0.0
        let segments = progress.segments.map { segment in
            defer { start += segment.length }
            return RenderedProgress.Segment(start: start / segmentsLength, end: (start + segment.length) / segmentsLength, color: segment.color)
        }
        let points: [RenderedProgress.Point] =
            scale > 0 ? progress.points.map { .init(position: Self.unit($0.position / scale), color: $0.color) } : []
        return RenderedProgress(fraction: fraction, segments: segments, points: points)
    }

    /// The fraction done, and the scale points are measured on.
    private func measure(_ measure: LayoutProgress.Measure) -> (fraction: Double, scale: Double) {
        switch measure {
        case .value(let value, let total):
            guard let value = resolve(value), let total = resolve(total), total > 0 else { return (0, 0) }
            return (Self.unit(value / total), total)
        case .timeRange(let from, let to):
            guard let from = resolve(from), let to = resolve(to) else { return (0, 1) }
            guard to > from else { return (now >= to ? 1 : 0, 1) }
            return (Self.unit((now - from) / (to - from)), 1)
        }
    }

    /// Clamped to 0…1; NaN counts as 0.
    private static func unit(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }
}
