extension LayoutRenderer {
    func render(_ progress: LayoutProgress) -> RenderedProgress {
        let (fraction, total) = measure(progress.measure)
        // Lengths are any positive finite numbers, and their sum can overflow to infinity:
        // they are added in units of the longest one, which keeps the sum finite (at most the
        // number of segments) and every ratio the same.
        let longest = progress.segments.lazy.map(\.length).max() ?? 1
        let segmentsLength = progress.segments.reduce(0) { $0 + $1.length / longest }
        // Android's ProgressStyle: with segments, points are placed along their total length.
        let scale = progress.segments.isEmpty ? total : segmentsLength
        let pointUnit = progress.segments.isEmpty ? 1 : longest
        var start = 0.0
        let segments = progress.segments.map { segment in
            let length = segment.length / longest
            defer { start += length }
            return RenderedProgress.Segment(start: start / segmentsLength, end: (start + length) / segmentsLength, color: segment.color)
        }
        let points: [RenderedProgress.Point] =
            scale > 0 ? progress.points.map { .init(position: Self.unit($0.position / pointUnit / scale), color: $0.color) } : []
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

    private static func unit(_ value: Double) -> Double { RenderedProgress.unit(value) }
}
