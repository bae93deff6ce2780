import CPangoCairo
import Foundation
import IslandCore
import IslandPresenter
import FreeDesktop

/// Draws symbols that are icon names (`battery-good-symbolic`) into a cairo context (passed as
/// the `cairo_t *`); returns false when it has no such icon, and the painter draws a glyph.
package protocol OverlayIconSource {
    func draw(icon name: String, cairo: OpaquePointer, rect: OverlayRect, color: OverlayColor, scale: Int) -> Bool
}

/// Measures text with Pango, as the painter draws it.
package final class PangoMetrics: TextMetrics {
    private let context: OpaquePointer
    private let style: OverlayStyle
    private var cache: [String: Double] = [:]

    package init(style: OverlayStyle = OverlayStyle()) {
        self.style = style
        let fontMap = pango_cairo_font_map_get_default()
        context = pango_font_map_create_context(fontMap)
        OverlayPainter.unhintMetrics(context)
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(context)) }

    package func width(of text: String, font: OverlayFont) -> Double {
        let key = "\(font)\u{0}\(text)"
        if let known = cache[key] { return known }
        let layout = pango_layout_new(context)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        OverlayPainter.configure(layout, text: text, font: font, style: style)
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout, &ink, &logical)
        let width = Double(logical.width)
        if cache.count > 4096 { cache.removeAll() }
        cache[key] = width
        return width
    }
}

/// Paints overlay frames with cairo and Pango. Producer text goes through
/// `pango_layout_set_text`, never markup.
package final class OverlayPainter {
    package var style: OverlayStyle
    package var icons: (any OverlayIconSource)?
    /// Pictures (`image` views); give the same one to the layout, which decides what is drawn.
    package let artwork: (any OverlayArtworkSource)?
    package let metrics: PangoMetrics

    package init(
        style: OverlayStyle = OverlayStyle(), icons: (any OverlayIconSource)? = ThemeIconSource(),
        artwork: (any OverlayArtworkSource)? = nil
    ) {
        self.style = style
        self.icons = icons
        self.artwork = artwork
        self.metrics = PangoMetrics(style: style)
    }

    /// Paints a settled frame.
    package func paint(_ frame: OverlayFrame, cairo cr: OpaquePointer, hovered: OverlayRect? = nil, scale: Int = 1) {
        var motion = OverlayMotion(enabled: false)
        motion.show(frame)
        paint(motion, cairo: cr, hovered: hovered, scale: scale)
    }

    /// One piece of content as it is drawn at one moment of a motion: where it is placed in its
    /// own frame, the shape (as it is now) it is clipped to, and how it rides on that shape.
    struct DrawnPiece {
        enum Role: Equatable {
            /// The same in the old frame and the new.
            case kept
            /// Of the frame being left, on its way out.
            case outgoing
            /// Of the frame being shown, on its way in.
            case incoming
            /// A number changing in place: the old one rolls out, the new one in, in its slot.
            case rolling
        }
        var placed: OverlayPlaced
        var role: Role
        /// The shape it is clipped to, where and as large as it is now.
        var shape: OverlayShape
        /// How opaque it is drawn (its own fade times its shape's opacity).
        var alpha: Double
        /// Its centre now, and its size now as a share of its placed size.
        var centre: (x: Double, y: Double)
        var scale: Double

        /// Where its placed rectangle is drawn now.
        var rect: OverlayRect {
            let r = placed.rect
            return OverlayRect(x: centre.x - r.width * scale / 2, y: centre.y - r.height * scale / 2, width: r.width * scale, height: r.height * scale)
        }
    }

    /// The content of the motion's current state, piece by piece, in the order it is drawn:
    /// shape by shape, each shape's content inside it alone.
    func pieces(_ motion: OverlayMotion) -> [DrawnPiece] {
        guard let target = motion.target else { return [] }
        let shapes = motion.shapes
        let previous = motion.enabled ? motion.previous : nil
        let fade = previous == nil ? 1 : motion.fade
        let old = Dictionary((previous?.content ?? []).map { ($0.slot, $0) }, uniquingKeysWith: { a, _ in a })
        // (placed, its shape in its own frame, role, fade alpha, roll offset)
        var pending: [(placed: OverlayPlaced, owner: OverlayShape, role: DrawnPiece.Role, alpha: Double, dy: Double)] = []
        var kept = Set<String>()
        for placed in target.content {
            guard let owner = target.owner(of: placed) else { continue }
            if let before = old[placed.slot], before == placed {
                pending.append((placed, owner, .kept, 1, 0))
                kept.insert(placed.slot)
            } else if let before = old[placed.slot], Self.rolls(before.primitive, placed.primitive) {
                // A number rolls: the old one moves up and out, the new one comes from below.
                let progress = OverlayMotion.smooth(fade), distance = placed.rect.height * 0.8
                pending.append((before, owner, .rolling, 1 - progress, -distance * progress))
                pending.append((placed, owner, .rolling, progress, distance * (1 - progress)))
                kept.insert(placed.slot)
            } else {
                pending.append((placed, owner, .incoming, previous == nil ? 1 : OverlayMotion.incoming(fade), 0))
            }
        }
        if let previous {
            let outgoing = OverlayMotion.outgoing(fade)
            for placed in previous.content where !kept.contains(placed.slot) {
                guard let owner = previous.owner(of: placed) else { continue }
                pending.append((placed, owner, .outgoing, outgoing, 0))
            }
        }
        var result: [DrawnPiece] = []
        for (shape, opacity) in shapes where opacity > 0.001 && !shape.rect.isEmpty {
            for piece in pending where piece.owner.id == shape.id && piece.alpha * opacity > 0.001 {
                // Content rides on its shape: its centre keeps its place in proportion to the
                // shape as the shape moves, grows and shrinks (the bubble carries its symbol
                // out; an expanding island spreads its content out from the middle), and it is
                // never larger than the shape now holds: scaled by the shape's smaller ratio, it
                // stays inside however fast the edge moves. New content in a shape still growing
                // is held back until the shape has mostly arrived.
                let (from, to) = (piece.owner.rect, shape.rect), centre = (x: piece.placed.rect.midX, y: piece.placed.rect.midY)
                let sx = from.width >= 1 ? to.width / from.width : 1, sy = from.height >= 1 ? to.height / from.height : 1
                let x = to.midX + (centre.x - from.midX) * sx
                let y = to.y + (centre.y - from.y) * sy + piece.dy
                let scale = max(0, min(1, sx, sy))
                let arrival = piece.role == .incoming ? OverlayMotion.smooth((scale - 0.4) / 0.5) : 1
                result.append(
                    DrawnPiece(
                        placed: piece.placed, role: piece.role, shape: shape, alpha: piece.alpha * opacity * arrival,
                        centre: (x, y), scale: scale))
            }
        }
        return result
    }

    /// Paints the motion's current state: the shapes where their springs are (the island and
    /// the bubble as one body, with the neck between them), then each piece of content clipped
    /// to the shape it belongs to as that shape is now, and moved with it (`pieces`).
    package func paint(_ motion: OverlayMotion, cairo cr: OpaquePointer, hovered: OverlayRect? = nil, scale: Int = 1) {
        guard motion.target != nil else { return }
        paintShapes(motion.shapes, neck: motion.neck, cr: cr)
        let pieces = pieces(motion)
        var index = 0
        while index < pieces.count {
            // One clip per run of pieces of one shape.
            let shape = pieces[index].shape
            cairo_save(cr)
            cairo_new_path(cr)
            contentPath(shape, cr: cr)
            cairo_clip(cr)
            while index < pieces.count, pieces[index].shape == shape {
                draw(pieces[index], hovered: hovered, scale: scale, cr: cr)
                index += 1
            }
            cairo_restore(cr)
        }
    }

    /// Draws one piece where it is now, at its size and opacity now, within the current clip.
    func draw(_ piece: DrawnPiece, hovered: OverlayRect?, scale: Int, cr: OpaquePointer) {
        guard piece.alpha > 0.001, piece.scale > 0.001 else { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        let r = piece.placed.rect
        cairo_translate(cr, piece.centre.x, piece.centre.y)
        cairo_scale(cr, piece.scale, piece.scale)
        cairo_translate(cr, -r.midX, -r.midY)
        draw(piece.placed, alpha: piece.alpha, dy: 0, hovered: hovered, scale: scale, cr: cr)
    }

    /// A picture's corner radius, as a share of its side.
    static let artworkCornerShare = 0.2

    /// Both are texts with digits in them: what a timer or a count shows.
    static func rolls(_ a: OverlayPrimitive, _ b: OverlayPrimitive) -> Bool {
        guard case .text(let x, _, _, _) = a, case .text(let y, _, _, _) = b else { return false }
        return x.contains(where: \.isNumber) && y.contains(where: \.isNumber)
    }

    // MARK: Shapes

    /// The keyline round the island and the bubble: a line this wide just outside their edge,
    /// in the style's quiet keyline colour (`OverlayStyle.keyline(tint:)`).
    static let keylineWidth = 1.0

    private func fillColor(_ shape: OverlayShape) -> OverlayColor {
        switch shape.kind {
        case .island, .bubble: style.background
        case .panel: style.panel
        case .card: shape.fill.map(OverlayColor.init) ?? style.card
        }
    }

    private func keylineColor(_ tint: LayoutColor?, opacity: Double) -> OverlayColor {
        let color = style.keyline(tint: tint)
        return color.with(alpha: color.alpha * opacity)
    }

    /// The list, then the island and the bubble (and the neck between them) as one body over
    /// it: the list opening comes out from under the island and closes back under it.
    func paintShapes(_ shapes: [(shape: OverlayShape, opacity: Double)], neck: OverlayNeck?, cr: OpaquePointer) {
        for (shape, opacity) in shapes where shape.kind != .island && shape.kind != .bubble && opacity > 0.001 {
            fillShape(shape, opacity: opacity, cr: cr)
        }
        let body = shapes.filter { ($0.shape.kind == .island || $0.shape.kind == .bubble) && !$0.shape.rect.isEmpty }
        if !body.isEmpty { fillBody(body, neck: neck, cr: cr) }
    }

    /// The path of the island, the bubble and the neck, all turning the same way, so that one
    /// fill (non-zero winding) covers their union once.
    func bodyPath(_ body: [OverlayShape], neck: OverlayNeck?, cr: OpaquePointer) {
        for shape in body { roundedPath(shape.rect, radius: shape.radius, cr: cr) }
        if let sides = neck?.sides { neckPath(sides, cr: cr) }
    }

    private func fillBody(_ body: [(shape: OverlayShape, opacity: Double)], neck: OverlayNeck?, cr: OpaquePointer) {
        // One body, one opacity: the island's (what splits off it is as opaque as it is).
        let opacity = body.first { $0.shape.kind == .island }?.opacity ?? body.map(\.opacity).max() ?? 0
        guard opacity > 0.001 else { return }
        let shapes = body.map(\.shape)
        cairo_new_path(cr)
        bodyPath(shapes, neck: neck, cr: cr)
        let fill = style.background
        setColor(fill.with(alpha: fill.alpha * opacity), cr)
        cairo_fill(cr)
        // The keyline follows the body's outline, just outside it: a light line at low alpha
        // shows against dark windows (a black island on a black terminal keeps its edge) and
        // all but vanishes into light ones, where the black shape needs no edge, instead of
        // ringing it. Each shape's edge and the neck's sides are stroked, and only what lies
        // outside the whole body is kept (clips, not an erasing operator, so that cairo's SVG
        // surface draws it as vectors too).
        let k = Self.keylineWidth
        cairo_save(cr)
        // Outside each part in turn: the parts overlap (the bubble tucked in the pill), and one
        // even-odd clip of them all would count their overlap as outside.
        for shape in shapes { clipOutside(cr) { roundedPath(shape.rect, radius: shape.radius, cr: cr) } }
        if let sides = neck?.sides { clipOutside(cr) { neckPath(sides, cr: cr) } }
        for shape in shapes {
            cairo_new_path(cr)
            roundedPath(shape.rect, radius: shape.radius, cr: cr)
            setColor(keylineColor(shape.keyline, opacity: opacity * (shape.stale ? Self.staleKeylineBoost : 1)), cr)
            cairo_set_line_width(cr, 2 * k)
            cairo_set_dash(cr, shape.stale ? Self.staleDashes : [], shape.stale ? Int32(Self.staleDashes.count) : 0, 0)
            cairo_stroke(cr)
        }
        cairo_set_dash(cr, [], 0, 0)
        if let sides = neck?.sides {
            let island = shapes.first { $0.kind == .island }, bubble = shapes.first { $0.kind == .bubble }
            let start = keylineColor((island ?? bubble)?.keyline, opacity: opacity)
            let end = keylineColor((bubble ?? island)?.keyline, opacity: opacity)
            let (a, b) = (sides.upper[0], sides.upper[3])
            let gradient = cairo_pattern_create_linear(a.x, a.y, b.x, b.y)!
            cairo_pattern_add_color_stop_rgba(gradient, 0, start.red, start.green, start.blue, start.alpha)
            cairo_pattern_add_color_stop_rgba(gradient, 1, end.red, end.green, end.blue, end.alpha)
            cairo_new_path(cr)
            for side in [sides.upper, sides.lower] {
                cairo_move_to(cr, side[0].x, side[0].y)
                cairo_curve_to(cr, side[1].x, side[1].y, side[2].x, side[2].y, side[3].x, side[3].y)
            }
            cairo_set_source(cr, gradient)
            cairo_set_line_width(cr, 2 * k)
            cairo_stroke(cr)
            cairo_pattern_destroy(gradient)
        }
        cairo_restore(cr)
        cairo_new_path(cr)
    }

    /// Narrows the clip to what lies outside the path `region` draws (even-odd against a plane
    /// far larger than any canvas): successive calls leave what lies outside all of them.
    private func clipOutside(_ cr: OpaquePointer, _ region: () -> Void) {
        cairo_new_path(cr)
        cairo_rectangle(cr, -1e5, -1e5, 2e5, 2e5)
        region()
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
        cairo_clip(cr)
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
    }

    /// The neck's body: along one side to the bubble, across it, back along the other side and
    /// across the island; turned clockwise on screen, as `roundedPath` turns.
    func neckPath(_ sides: (upper: [OverlayNeck.Point], lower: [OverlayNeck.Point]), cr: OpaquePointer) {
        let (u, l) = (sides.upper, sides.lower)
        let corners = [u[0], u[3], l[0], l[3]]
        let area = zip(corners, corners.dropFirst() + [corners[0]]).reduce(0.0) { $0 + $1.0.x * $1.1.y - $1.1.x * $1.0.y }
        cairo_new_sub_path(cr)
        if area >= 0 {
            cairo_move_to(cr, u[0].x, u[0].y)
            cairo_curve_to(cr, u[1].x, u[1].y, u[2].x, u[2].y, u[3].x, u[3].y)
            cairo_line_to(cr, l[0].x, l[0].y)
            cairo_curve_to(cr, l[1].x, l[1].y, l[2].x, l[2].y, l[3].x, l[3].y)
        } else {
            cairo_move_to(cr, l[3].x, l[3].y)
            cairo_curve_to(cr, l[2].x, l[2].y, l[1].x, l[1].y, l[0].x, l[0].y)
            cairo_line_to(cr, u[3].x, u[3].y)
            cairo_curve_to(cr, u[2].x, u[2].y, u[1].x, u[1].y, u[0].x, u[0].y)
        }
        cairo_close_path(cr)
    }

    private func fillShape(_ shape: OverlayShape, opacity: Double, cr: OpaquePointer) {
        guard shape.rect.width > 0.5, shape.rect.height > 0.5 else { return }
        let fill = fillColor(shape)
        cairo_new_path(cr)
        roundedPath(shape.rect, radius: shape.radius, cr: cr)
        setColor(fill.with(alpha: fill.alpha * opacity), cr)
        cairo_fill(cr)
        if shape.stale {
            // A stale card has the stale island's dashed outline, just inside its edge.
            cairo_save(cr)
            insetPath(shape, by: 0.5 * Self.keylineWidth, cr: cr)
            setColor(keylineColor(nil, opacity: opacity * Self.staleKeylineBoost), cr)
            cairo_set_line_width(cr, Self.keylineWidth)
            cairo_set_dash(cr, Self.staleDashes, Int32(Self.staleDashes.count), 0)
            cairo_stroke(cr)
            cairo_restore(cr)
        }
    }

    /// The mark of a stale activity, the same in every form: its outline dashed, and a little
    /// brighter than a live keyline, so the dashes read.
    static let staleKeylineBoost = 1.5

    static let staleDashes: [Double] = [4, 3]

    /// Where a shape's content may be drawn: inside the shape and, when it has one, inside its
    /// keyline, so that content sliding in or out of a growing shape passes under its edge
    /// instead of cutting through it.
    func contentPath(_ shape: OverlayShape, grownBy growth: Double = 0, cr: OpaquePointer) {
        insetPath(shape, by: (shape.kind == .island || shape.kind == .bubble ? Self.keylineWidth : 0) - growth, cr: cr)
    }

    /// The shape's outline moved `k` inwards (nothing when the shape is no wider than that).
    func insetPath(_ shape: OverlayShape, by k: Double, cr: OpaquePointer) {
        let r = shape.rect
        guard r.width > 2 * k, r.height > 2 * k else { return }
        roundedPath(.init(x: r.x + k, y: r.y + k, width: r.width - 2 * k, height: r.height - 2 * k), radius: max(0, shape.radius - k), cr: cr)
    }

    /// Continuous ("squircle") corners: each corner a cubic curve starting 1.28 × the radius
    /// from the corner, as the SVG presenter draws them, where the sides leave room for it.
    func roundedPath(_ rect: OverlayRect, radius: Double, cr: OpaquePointer) {
        let (x, y, w, h) = (rect.x, rect.y, rect.width, rect.height)
        guard w > 0, h > 0 else { return }
        let r = max(0, min(radius, w / 2, h / 2))
        let s = min(r * 1.28, w / 2, h / 2)
        // Where the side leaves no room for the long continuous corner (a pill's ends, the
        // bubble), the corner becomes a true quarter circle: a circle, not a rounded square.
        let room = r > 0 ? max(0, min(1, (s / r - 1) / 0.28)) : 1
        let k = s * (0.4477 + (0.36 - 0.4477) * room)
        cairo_new_sub_path(cr)
        cairo_move_to(cr, x + s, y)
        cairo_line_to(cr, x + w - s, y)
        cairo_curve_to(cr, x + w - k, y, x + w, y + k, x + w, y + s)
        cairo_line_to(cr, x + w, y + h - s)
        cairo_curve_to(cr, x + w, y + h - k, x + w - k, y + h, x + w - s, y + h)
        cairo_line_to(cr, x + s, y + h)
        cairo_curve_to(cr, x + k, y + h, x, y + h - k, x, y + h - s)
        cairo_line_to(cr, x, y + s)
        cairo_curve_to(cr, x, y + k, x + k, y, x + s, y)
        cairo_close_path(cr)
    }

    // MARK: Content

    /// How much of its opacity content keeps for its standing: a stale or ended activity's is
    /// dimmed, except secondary text, already as dim as it may be while keeping 4.5:1.
    static func dimming(_ placed: OverlayPlaced) -> Double {
        guard placed.standing != .live else { return 1 }
        if case .text(_, _, .secondary, _) = placed.primitive { return 1 }
        return 0.62
    }

    private func draw(_ placed: OverlayPlaced, alpha: Double, dx: Double = 0, dy: Double, hovered: OverlayRect?, scale: Int, cr: OpaquePointer) {
        let alpha = alpha * Self.dimming(placed)
        guard alpha > 0.001 else { return }
        var rect = placed.rect
        rect.x += dx
        rect.y += dy
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_new_path(cr)
        if alpha < 1 { cairo_push_group(cr) }
        let foreground = placed.onLight ? style.foregroundOnLight : style.foreground
        let secondary = placed.onLight ? style.secondaryOnLight : style.secondary
        switch placed.primitive {
        case .text(let text, let font, let ink, let alignment):
            drawText(text, font: font, color: ink == .primary ? foreground : secondary, alignment: alignment, rect: rect, cr: cr)
        case .symbol(let name):
            drawSymbol(name, rect: rect, color: foreground, scale: scale, cr: cr)
        case .bar(let progress, let tint):
            drawBar(progress, tint: tint, final: placed.standing == .ended, rect: rect, cr: cr)
        case .ring(let fraction, let tint):
            drawRing(fraction, tint: tint, final: placed.standing == .ended, rect: rect, cr: cr)
        case .button(_, let label, let symbol):
            roundedPath(rect, radius: rect.height / 2, cr: cr)
            setColor(hovered == placed.rect ? style.buttonHover : style.button, cr)
            cairo_fill(cr)
            if let symbol {
                // An icon button: the symbol alone, its label is its accessible name.
                let side = (rect.height * 0.52).rounded()
                drawSymbol(
                    symbol, rect: .init(x: rect.midX - side / 2, y: rect.midY - side / 2, width: side, height: side), color: style.foreground,
                    scale: scale, cr: cr)
            } else if !label.isEmpty {
                drawText(
                    label, font: .body, color: style.foreground, alignment: .center,
                    rect: .init(x: rect.x + rect.height / 3, y: rect.y, width: max(1, rect.width - rect.height * 2 / 3), height: rect.height), cr: cr)
            }
        case .image(let path):
            // A rounded square, as album art is shown; a quiet tile if the file went away
            // since the layout saw it.
            let side = min(rect.width, rect.height)
            let square = OverlayRect(x: rect.midX - side / 2, y: rect.midY - side / 2, width: side, height: side)
            roundedPath(square, radius: side * Self.artworkCornerShare, cr: cr)
            cairo_clip(cr)
            if artwork?.draw(path, cairo: cr, rect: square, scale: scale) != true {
                setColor(style.button, cr)
                cairo_paint(cr)
            }
            // A hairline of the foreground inside its edge: a dark cover keeps its shape on
            // the black island.
            roundedPath(.init(x: square.x + 0.5, y: square.y + 0.5, width: side - 1, height: side - 1), radius: side * Self.artworkCornerShare - 0.5, cr: cr)
            setColor(style.foreground.with(alpha: 0.14), cr)
            cairo_set_line_width(cr, 1)
            cairo_stroke(cr)
        case .dismiss:
            cairo_arc(cr, rect.midX, rect.midY, rect.width / 2, 0, 2 * Double.pi)
            setColor(hovered == placed.rect ? style.buttonHover : style.button, cr)
            cairo_fill(cr)
            let d = rect.width * 0.17
            cairo_move_to(cr, rect.midX - d, rect.midY - d)
            cairo_line_to(cr, rect.midX + d, rect.midY + d)
            cairo_move_to(cr, rect.midX + d, rect.midY - d)
            cairo_line_to(cr, rect.midX - d, rect.midY + d)
            setColor(style.foreground, cr)  // on the button's own dark fill, light or dark card alike
            cairo_set_line_width(cr, max(1.5, rect.width * 0.075))
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
            cairo_stroke(cr)
        }
        if alpha < 1 {
            cairo_pop_group_to_source(cr)
            cairo_paint_with_alpha(cr, alpha)
        }
    }

    static func configure(_ layout: OpaquePointer, text: String, font: OverlayFont, style: OverlayStyle) {
        let description = pango_font_description_from_string(style.fontDescription(font))
        pango_layout_set_font_description(layout, description)
        pango_font_description_free(description)
        // Producer text, as plain text: no markup is ever parsed; bounded and isolated.
        pango_layout_set_text(layout, shaped(text), -1)
        pango_layout_set_single_paragraph_mode(layout, 1)
        if font == .digits || font == .largeDigits {
            // Tabular figures: a ticking timer does not shift its neighbours.
            let attributes = pango_attr_list_new()
            pango_attr_list_insert(attributes, pango_attr_font_features_new("tnum"))
            pango_layout_set_attributes(layout, attributes)
            pango_attr_list_unref(attributes)
        }
    }

    /// What Pango is given for one string, bounded whatever a producer sends: at most
    /// `ViewPlacement.maximumClusters` clusters (the layout already neutralized producer text: no
    /// bidi controls, at most 12 scalars per cluster), in one paragraph, its direction isolated in
    /// FSI … PDI so that right-to-left text cannot reorder what is drawn beside it.
    static func shaped(_ text: String) -> String {
        ViewPlacement.isolated(ViewPlacement.boundedClusters(text))
    }

    /// Text is measured and drawn with unhinted metrics: a glyph's advance then does not depend
    /// on the output's scale, so the widths the layout measured are the widths a scale-2 output
    /// draws. (Hinted, a line at scale 2 grows about a pixel every other letter and is
    /// ellipsized though it fits.)
    static func unhintMetrics(_ context: OpaquePointer) {
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        pango_cairo_context_set_font_options(context, options)
        cairo_font_options_destroy(options)
    }

    private func drawText(_ text: String, font: OverlayFont, color: OverlayColor, alignment: OverlayAlignment, rect: OverlayRect, cr: OpaquePointer) {
        guard !text.isEmpty, rect.width >= 1 else { return }
        let layout = pango_cairo_create_layout(cr)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        if let context = pango_layout_get_context(layout) {
            Self.unhintMetrics(context)
            pango_cairo_update_context(cr, context)
            pango_layout_context_changed(layout)
        }
        Self.configure(layout, text: text, font: font, style: style)
        // The paragraph's direction is its text's (first strong character), set rather than
        // guessed: the text is wrapped in an isolate, and an Arabic line starts at the right,
        // its ellipsis at the left.
        let rightToLeft = ViewPlacement.isRightToLeft(text)
        pango_layout_set_auto_dir(layout, 0)
        if let context = pango_layout_get_context(layout) {
            pango_context_set_base_dir(context, rightToLeft ? PANGO_DIRECTION_RTL : PANGO_DIRECTION_LTR)
            pango_layout_context_changed(layout)
        }
        pango_layout_set_width(layout, island_pango_units(min(rect.width, 10_000)))
        pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
        let start = rightToLeft ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT
        pango_layout_set_alignment(layout, alignment == .center ? PANGO_ALIGN_CENTER : alignment == .trailing ? PANGO_ALIGN_RIGHT : start)
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout, &ink, &logical)
        setColor(color, cr)
        cairo_move_to(cr, rect.x, (rect.midY - Double(logical.height) / 2).rounded())
        pango_cairo_show_layout(cr, layout)
    }

    private func drawSymbol(_ name: String, rect: OverlayRect, color: OverlayColor, scale: Int, cr: OpaquePointer) {
        let side = min(rect.width, rect.height)
        let square = OverlayRect(x: rect.midX - side / 2, y: rect.midY - side / 2, width: side, height: side)
        if IconName.isValid(name) {
            if let icons, icons.draw(icon: name, cairo: cr, rect: square, color: color, scale: scale) { return }
            // An icon neither the theme nor the glyph table knows draws nothing: a bullet in
            // its place would say something the activity did not.
            let glyph = RenderedView.symbol(name).displayText
            if !glyph.isEmpty, glyph != RenderedView.unknownIconGlyph { drawGlyph(glyph, rect: square, color: color, cr: cr) }
            return
        }
        drawGlyph(name, rect: square, color: color, cr: cr)
    }

    /// An emoji or other glyph fitted to a square: Pango picks Noto Color Emoji for emoji.
    private func drawGlyph(_ text: String, rect: OverlayRect, color: OverlayColor, cr: OpaquePointer) {
        let layout = pango_cairo_create_layout(cr)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = pango_font_description_from_string(style.fontFamily)
        pango_font_description_set_absolute_size(description, Double(island_pango_units(max(1, rect.height * 0.78))))
        pango_layout_set_font_description(layout, description)
        pango_font_description_free(description)
        pango_layout_set_text(layout, Self.shaped(text), -1)
        pango_layout_set_single_paragraph_mode(layout, 1)
        pango_layout_set_width(layout, island_pango_units(max(rect.width, rect.height) * 2))
        pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout, &ink, &logical)
        setColor(color, cr)
        cairo_move_to(cr, rect.midX - Double(logical.width) / 2, rect.midY - Double(logical.height) / 2)
        pango_cairo_show_layout(cr, layout)
    }

    /// `final`: the progress of an ended activity, in the secondary colour: where it stopped,
    /// not a live accent.
    private func drawBar(_ progress: RenderedProgress, tint: LayoutColor?, final: Bool, rect: OverlayRect, cr: OpaquePointer) {
        let fill = final ? style.secondary : tint.map(OverlayColor.init) ?? style.accent
        roundedPath(rect, radius: rect.height / 2, cr: cr)
        setColor(style.track, cr)
        cairo_fill(cr)
        for segment in progress.segments {
            let start = rect.x + segment.start * rect.width, end = rect.x + segment.end * rect.width
            let segmentRect = OverlayRect(x: start, y: rect.y, width: max(0, end - start - (segment.end < 1 ? 2 : 0)), height: rect.height)
            roundedPath(segmentRect, radius: rect.height / 2, cr: cr)
            setColor((segment.color.map(OverlayColor.init) ?? style.secondary).with(alpha: 0.45), cr)
            cairo_fill(cr)
        }
        if progress.fraction > 0 {
            if progress.segments.isEmpty {
                roundedPath(
                    .init(x: rect.x, y: rect.y, width: max(rect.height, progress.fraction * rect.width), height: rect.height), radius: rect.height / 2, cr: cr)
                setColor(fill, cr)
                cairo_fill(cr)
            } else {
                // With segments, each done part takes its segment's own colour, fully.
                cairo_save(cr)
                cairo_rectangle(cr, rect.x, rect.y - 1, progress.fraction * rect.width, rect.height + 2)
                cairo_clip(cr)
                for segment in progress.segments {
                    let start = rect.x + segment.start * rect.width, end = rect.x + segment.end * rect.width
                    roundedPath(
                        .init(x: start, y: rect.y, width: max(0, end - start - (segment.end < 1 ? 2 : 0)), height: rect.height), radius: rect.height / 2, cr: cr
                    )
                    setColor(segment.color.map(OverlayColor.init) ?? fill, cr)
                    cairo_fill(cr)
                }
                cairo_restore(cr)
            }
        }
        for point in progress.points {
            let px = rect.x + min(rect.width - rect.height / 2, max(rect.height / 2, point.position * rect.width))
            cairo_arc(cr, px, rect.midY, rect.height * 0.75, 0, 2 * Double.pi)
            setColor(style.background, cr)
            cairo_fill_preserve(cr)
            setColor(point.color.map(OverlayColor.init) ?? style.foreground, cr)
            cairo_set_line_width(cr, 2)
            cairo_stroke(cr)
        }
    }

    private func drawRing(_ fraction: Double, tint: LayoutColor?, final: Bool, rect: OverlayRect, cr: OpaquePointer) {
        // The stroke grows with the ring: a ring in the bubble or at Size=large stays as bold.
        let side = min(rect.width, rect.height), line = max(2.5, side * 0.16)
        let radius = side / 2 - line / 2 - 0.5
        guard radius > 1 else { return }
        cairo_set_line_width(cr, line)
        cairo_arc(cr, rect.midX, rect.midY, radius, 0, 2 * Double.pi)
        setColor(style.track, cr)
        cairo_stroke(cr)
        let unit = RenderedProgress.unit(fraction)
        guard unit > 0 else { return }
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_arc(cr, rect.midX, rect.midY, radius, -Double.pi / 2, -Double.pi / 2 + 2 * Double.pi * unit)
        setColor(final ? style.secondary : tint.map(OverlayColor.init) ?? style.accent, cr)
        cairo_stroke(cr)
    }

    private func setColor(_ color: OverlayColor, _ cr: OpaquePointer) {
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
    }

    // MARK: Off-screen

    /// Renders the frame into a PNG of `rect` (logical pixels) at `scale`, with no display.
    /// Returns false when the file could not be written.
    @discardableResult
    package func writePNG(_ frame: OverlayFrame, crop rect: OverlayRect, scale: Int = 1, background: OverlayColor? = nil, to path: String) -> Bool {
        let width = Int32(max(1, min(8192, (rect.width * Double(scale)).rounded(.up))))
        let height = Int32(max(1, min(8192, (rect.height * Double(scale)).rounded(.up))))
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height)
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        if let background {
            setColor(background, cr)
            cairo_paint(cr)
        }
        cairo_scale(cr, Double(scale), Double(scale))
        cairo_translate(cr, -rect.x, -rect.y)
        paint(frame, cairo: cr, scale: scale)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        return cairo_surface_write_to_png(surface, path) == CAIRO_STATUS_SUCCESS
    }
}
