import CPangoCairo
import Foundation
import FreeDesktop
import IslandCore
package import IslandPresenter

/// The island drawn once, off-screen, as a document: the form the scene shows with the list
/// open under it, laid out by `OverlayLayout` and painted by `OverlayPainter` onto a cairo SVG
/// surface — the overlay's own geometry and painter, so the SVG cannot disagree with the screen
/// (docs/design.md §10, "One painter").
///
/// Cairo writes shapes and glyph outlines, never text: producer text reaches the document only
/// as the `<title>` and `<desc>` added here, neutralised, bounded and XML-escaped.
package enum OverlaySnapshot {
    /// The room the list may grow to under the island: the cards that do not fit are counted,
    /// not drawn.
    package static let canvasHeight = 2400.0
    static let top = 8.0
    /// At most this many bytes of SVG: cairo's output for the bounded frame is far below it.
    static let maximumBytes = 32 << 20
    /// The description's bounds: lines and scalars in all.
    static let maximumDescriptionLines = 64
    static let maximumDescriptionScalars = 8192
    static let maximumLineScalars = ViewPlacement.maximumLineScalars

    /// The layout a snapshot uses: the overlay's, on its own canvas width, at the default size.
    package static func layout(metrics: any TextMetrics) -> OverlayLayout {
        OverlayLayout(canvasHeight: canvasHeight, top: top, metrics: metrics)
    }

    /// The frame a snapshot draws.
    package static func frame(_ scene: IslandScene, metrics: any TextMetrics) -> OverlayFrame {
        layout(metrics: metrics).frame(scene, listOpen: true)
    }

    /// Where the document shows the frame: the canvas's width, as the gallery's images, and the
    /// height the frame takes.
    package static func crop(of frame: OverlayFrame, canvasWidth: Double) -> OverlayRect {
        OverlayRect(x: 0, y: 0, width: canvasWidth, height: max(top, (frame.bounds.maxY + top).rounded(.up)))
    }

    /// The scene as a standalone SVG document; nil when cairo could not write it.
    package static func svg(_ scene: IslandScene, painter: OverlayPainter = OverlayPainter()) -> String? {
        let layout = layout(metrics: painter.metrics)
        let frame = layout.frame(scene, listOpen: true)
        guard let drawing = painter.svg(frame, crop: crop(of: frame, canvasWidth: layout.canvasWidth)) else { return nil }
        return titled(drawing, title: "Island: \(scene.mode.rawValue)", description: description(of: frame))
    }

    /// The text the frame draws, as lines: the pieces of one region (a symbol and its label,
    /// a row of a card) on one line, each button and each progress (as a percentage) on its
    /// own; what a screen reader reads for
    /// the picture, as the old SVG's text elements said it.
    static func description(of frame: OverlayFrame) -> [String] {
        var lines: [String] = []
        var slot: String?
        for placed in frame.content {
            let piece: String
            var alone = false
            switch placed.primitive {
            case .text(let text, _, _, _): piece = text
            case .symbol(let name): piece = IconName.isValid(name) ? RenderedView.symbol(name).displayText : name
            case .button(_, let label, _): (piece, alone) = (label, true)
            // Progress says how far it is, on a line of its own, as a screen reader would.
            case .bar(let progress, _): (piece, alone) = (Self.percent(progress.fraction), true)
            case .ring(let fraction, _): (piece, alone) = (Self.percent(fraction), true)
            case .dismiss: continue
            // What a picture shows is no text, and its path is never said: only that it is one.
            case .image: (piece, alone) = ("Picture", true)
            }
            guard !piece.isEmpty else { continue }
            if !alone, placed.slot == slot, let last = lines.popLast() {
                lines.append(last + " " + piece)
            } else {
                lines.append(piece)
            }
            slot = alone ? nil : placed.slot
        }
        return lines
    }

    static func percent(_ fraction: Double) -> String { "\(Int((RenderedProgress.unit(fraction) * 100).rounded()))%" }

    /// The points of the outline the painter draws for `shape` (its move, each line end and
    /// curve control point, in order, as cairo holds them): what the SVG's path for the shape
    /// says, for tests that compare the two without knowing how corners are drawn.
    package static func outline(of shape: OverlayShape, painter: OverlayPainter) -> [(x: Double, y: Double)] {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1)
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        painter.roundedPath(shape.rect, radius: shape.radius, cr: cr)
        guard let path = cairo_copy_path(cr) else { return [] }
        defer { cairo_path_destroy(path) }
        var points: [(x: Double, y: Double)] = []
        var index = 0
        while index < Int(path.pointee.num_data) {
            let header = path.pointee.data[index].header
            // The first subpath only: cairo starts another at the start point after a close.
            if header.type == CAIRO_PATH_MOVE_TO, !points.isEmpty { break }
            for offset in stride(from: 1, to: Int(header.length), by: 1) {
                let point = path.pointee.data[index + offset].point
                points.append((point.x, point.y))
            }
            index += max(1, Int(header.length))
        }
        return points
    }

    /// Cairo's document with a `<title>` and a `<desc>` as the first children of `<svg>`: what
    /// a screen reader (and a test) reads, since the drawing holds no text element. Nil when the
    /// document has no `<svg …>` start tag to put them in.
    static func titled(_ document: String, title: String, description: [String]) -> String? {
        guard let open = document.range(of: "<svg"), let end = document[open.upperBound...].firstIndex(of: ">") else { return nil }
        var lines: [String] = []
        var scalars = 0
        for line in description.prefix(maximumDescriptionLines) {
            let shown = oneLine(line)
            guard !shown.isEmpty else { continue }
            scalars += shown.unicodeScalars.count
            if scalars > maximumDescriptionScalars { break }
            lines.append(shown)
        }
        let head = "\n<title>\(escape(oneLine(title)))</title>\n<desc>\(lines.map(escape).joined(separator: "\n"))</desc>"
        var out = document
        out.insert(contentsOf: head, at: document.index(after: end))
        return out
    }

    /// A producer string as one line of the description: the layout's own rule for a line of
    /// producer text (`ViewPlacement.sanitizedLine`: controls and line breaks as spaces, at most
    /// `maximumLineScalars` scalars, no bidi controls, bounded clusters), trimmed.
    static func oneLine(_ text: String) -> String {
        ViewPlacement.sanitizedLine(text).trimmingCharacters(in: .whitespaces)
    }

    /// Text as XML character data: markup characters become entities, and characters XML 1.0
    /// forbids (C0 controls, U+FFFE, U+FFFF) U+FFFD, so the document is well-formed and holds
    /// no control character a terminal reads when it is written to standard output.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out.unicodeScalars.append(scalar)
            case "\t", "\r", "\u{7F}"..."\u{9F}": out += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            default:
                let v = scalar.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

extension OverlayPainter {
    /// Paints the frame onto a cairo SVG surface of `rect` (logical pixels, the document's
    /// unit); returns cairo's document, or nil when it failed or grew past the bound.
    package func svg(_ frame: OverlayFrame, crop rect: OverlayRect) -> String? {
        let sink = SVGSink(limit: OverlaySnapshot.maximumBytes)
        let closure = Unmanaged.passRetained(sink)
        defer { closure.release() }
        let write: cairo_write_func_t = { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            let sink = Unmanaged<SVGSink>.fromOpaque(closure).takeUnretainedValue()
            return sink.append(UnsafeBufferPointer(start: data, count: Int(length))) ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR
        }
        let width = max(1, min(8192, rect.width.rounded(.up))), height = max(1, min(8192, rect.height.rounded(.up)))
        guard let surface = cairo_svg_surface_create_for_stream(write, closure.toOpaque(), width, height) else { return nil }
        cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX)
        let cr = cairo_create(surface)!
        cairo_translate(cr, -rect.x, -rect.y)
        paint(frame, cairo: cr)
        let drawn = cairo_status(cr) == CAIRO_STATUS_SUCCESS
        cairo_destroy(cr)
        // The document is complete once the surface is finished.
        cairo_surface_finish(surface)
        let written = cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
        cairo_surface_destroy(surface)
        guard drawn, written, !sink.overflowed else { return nil }
        return String(decoding: sink.bytes, as: UTF8.self)
    }
}

/// Collects cairo's output, up to a bound.
private final class SVGSink {
    var bytes: [UInt8] = []
    let limit: Int
    var overflowed = false

    init(limit: Int) { self.limit = limit }

    func append(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count + data.count <= limit else {
            overflowed = true
            return false
        }
        bytes += data
        return true
    }
}
