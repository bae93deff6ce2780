import CPangoCairo
import Foundation
import IslandCore
import IslandPresenter
import FreeDesktop

/// Draws symbols that are icon names (`battery-good-symbolic`) into a cairo context (passed as
/// the `cairo_t *`); returns false when it has no such icon, and the painter draws a glyph.
public protocol OverlayIconSource {
    func draw(icon name: String, cairo: OpaquePointer, rect: OverlayRect, color: OverlayColor, scale: Int) -> Bool
}

/// Measures text with Pango, as the painter draws it.
public final class PangoMetrics: TextMetrics {
    private let context: OpaquePointer
    private let style: OverlayStyle
    private var cache: [String: Double] = [:]

    public init(style: OverlayStyle = OverlayStyle()) {
        self.style = style
        let fontMap = pango_cairo_font_map_get_default()
        context = pango_font_map_create_context(fontMap)
        OverlayPainter.unhintMetrics(context)
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(context)) }

    public func width(of text: String, font: OverlayFont) -> Double {
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
public final class OverlayPainter {
    public var style: OverlayStyle
    public var icons: (any OverlayIconSource)?
    public let metrics: PangoMetrics

    public init(style: OverlayStyle = OverlayStyle(), icons: (any OverlayIconSource)? = ThemeIconSource()) {
        self.style = style
        self.icons = icons
        self.metrics = PangoMetrics(style: style)
    }

    /// Paints a settled frame.
    public func paint(_ frame: OverlayFrame, cairo cr: OpaquePointer, hovered: OverlayRect? = nil, scale: Int = 1) {
        var motion = OverlayMotion(enabled: false)
        motion.show(frame)
        paint(motion, cairo: cr, hovered: hovered, scale: scale)
    }

    /// Paints the motion's current state: shapes where their springs are, the new content
    /// fading in over the old, numbers that changed in place rolling up.
    public func paint(_ motion: OverlayMotion, cairo cr: OpaquePointer, hovered: OverlayRect? = nil, scale: Int = 1) {
        guard let target = motion.target else { return }
        let shapes = motion.shapes
        for (shape, opacity) in shapes where opacity > 0.001 {
            fillShape(shape, opacity: opacity, cr: cr)
        }
        cairo_save(cr)
        // Content stays inside the shapes while they grow or shrink.
        for (shape, _) in shapes { roundedPath(shape.rect, radius: shape.radius, cr: cr) }
        cairo_clip(cr)
        let fade = motion.enabled ? motion.fade : 1
        let previous = motion.enabled ? motion.previous : nil
        let old = Dictionary((previous?.content ?? []).map { ($0.slot, $0) }, uniquingKeysWith: { a, _ in a })
        let new = Set(target.content.map(\.slot))
        for placed in target.content {
            if fade < 1, let before = old[placed.slot], before != placed, Self.rolls(before.primitive, placed.primitive) {
                // A number rolls: the old one moves up and out, the new one comes from below.
                let distance = placed.rect.height * 0.8
                draw(before, alpha: 1 - fade, dy: -distance * fade, hovered: hovered, scale: scale, cr: cr)
                draw(placed, alpha: fade, dy: distance * (1 - fade), hovered: hovered, scale: scale, cr: cr)
            } else if fade < 1, old[placed.slot] == placed {
                draw(placed, alpha: 1, dy: 0, hovered: hovered, scale: scale, cr: cr)
            } else {
                draw(placed, alpha: fade, dy: 0, hovered: hovered, scale: scale, cr: cr)
            }
        }
        if fade < 1, let previous {
            for placed in previous.content where !new.contains(placed.slot) || !target.content.contains(where: { $0.slot == placed.slot && ($0 == placed || Self.rolls(placed.primitive, $0.primitive)) }) {
                draw(placed, alpha: 1 - fade, dy: 0, hovered: hovered, scale: scale, cr: cr)
            }
        }
        cairo_restore(cr)
    }

    /// Both are texts with digits in them: what a timer or a count shows.
    static func rolls(_ a: OverlayPrimitive, _ b: OverlayPrimitive) -> Bool {
        guard case .text(let x, _, _, _) = a, case .text(let y, _, _, _) = b else { return false }
        return x.contains(where: \.isNumber) && y.contains(where: \.isNumber)
    }

    // MARK: Shapes

    private func fillShape(_ shape: OverlayShape, opacity: Double, cr: OpaquePointer) {
        guard shape.rect.width > 0.5, shape.rect.height > 0.5 else { return }
        let fill: OverlayColor =
            switch shape.kind {
            case .island, .bubble: style.background
            case .panel: style.panel
            case .card: shape.fill.map(OverlayColor.init) ?? style.card
            }
        roundedPath(shape.rect, radius: shape.radius, cr: cr)
        setColor(fill.with(alpha: fill.alpha * opacity), cr)
        cairo_fill_preserve(cr)
        if shape.kind == .island || shape.kind == .bubble {
            // The island and the bubble alike: a 1 px line inside the edge, the style's quiet
            // keyline (mostly white, a little of the tint).
            let keyline = style.keyline(tint: shape.keyline)
            setColor(keyline.with(alpha: keyline.alpha * opacity), cr)
            cairo_save(cr)
            cairo_clip_preserve(cr)
            cairo_set_line_width(cr, 2)
            cairo_stroke(cr)
            cairo_restore(cr)
        }
        cairo_new_path(cr)
    }

    /// Continuous ("squircle") corners: each corner a cubic curve starting 1.28 × the radius
    /// from the corner, as the SVG presenter draws them.
    func roundedPath(_ rect: OverlayRect, radius: Double, cr: OpaquePointer) {
        let (x, y, w, h) = (rect.x, rect.y, rect.width, rect.height)
        guard w > 0, h > 0 else { return }
        let r = max(0, min(radius, w / 2, h / 2))
        let s = min(r * 1.28, w / 2, h / 2)
        let k = s * 0.36
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

    private func draw(_ placed: OverlayPlaced, alpha: Double, dy: Double, hovered: OverlayRect?, scale: Int, cr: OpaquePointer) {
        guard alpha > 0.001 else { return }
        var rect = placed.rect
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
            drawBar(progress, tint: tint, rect: rect, cr: cr)
        case .ring(let fraction, let tint):
            drawRing(fraction, tint: tint, rect: rect, cr: cr)
        case .button(_, let label, let symbol):
            roundedPath(rect, radius: rect.height / 2, cr: cr)
            setColor(hovered == placed.rect ? style.buttonHover : style.button, cr)
            cairo_fill(cr)
            if let symbol {
                // An icon button: the symbol alone, its label is its accessible name.
                let side = (rect.height * 0.52).rounded()
                drawSymbol(symbol, rect: .init(x: rect.midX - side / 2, y: rect.midY - side / 2, width: side, height: side), color: style.foreground,
                           scale: scale, cr: cr)
            } else if !label.isEmpty {
                drawText(label, font: .body, color: style.foreground, alignment: .center,
                         rect: .init(x: rect.x + rect.height / 3, y: rect.y, width: max(1, rect.width - rect.height * 2 / 3), height: rect.height), cr: cr)
            }
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

    /// What Pango is given for one string (issue #25): at most `ViewPlacement.maximumClusters`
    /// clusters (the layout already neutralized producer text: no bidi controls, at most 12
    /// scalars per cluster), in one paragraph, its direction isolated in FSI … PDI so that
    /// right-to-left text cannot reorder what is drawn beside it.
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
        pango_layout_set_width(layout, island_pango_units(min(rect.width, 10_000)))
        pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
        pango_layout_set_alignment(layout, alignment == .center ? PANGO_ALIGN_CENTER : alignment == .trailing ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT)
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
            let glyph = RenderedView.symbol(name).displayText
            if !glyph.isEmpty { drawGlyph(glyph, rect: square, color: color, cr: cr) }
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

    private func drawBar(_ progress: RenderedProgress, tint: LayoutColor?, rect: OverlayRect, cr: OpaquePointer) {
        let fill = tint.map(OverlayColor.init) ?? style.accent
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
                roundedPath(.init(x: rect.x, y: rect.y, width: max(rect.height, progress.fraction * rect.width), height: rect.height), radius: rect.height / 2, cr: cr)
                setColor(fill, cr)
                cairo_fill(cr)
            } else {
                // With segments, each done part takes its segment's own colour, fully.
                cairo_save(cr)
                cairo_rectangle(cr, rect.x, rect.y - 1, progress.fraction * rect.width, rect.height + 2)
                cairo_clip(cr)
                for segment in progress.segments {
                    let start = rect.x + segment.start * rect.width, end = rect.x + segment.end * rect.width
                    roundedPath(.init(x: start, y: rect.y, width: max(0, end - start - (segment.end < 1 ? 2 : 0)), height: rect.height), radius: rect.height / 2, cr: cr)
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

    private func drawRing(_ fraction: Double, tint: LayoutColor?, rect: OverlayRect, cr: OpaquePointer) {
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
        setColor(tint.map(OverlayColor.init) ?? style.accent, cr)
        cairo_stroke(cr)
    }

    private func setColor(_ color: OverlayColor, _ cr: OpaquePointer) {
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
    }

    // MARK: Off-screen

    /// Renders the frame into a PNG of `rect` (logical pixels) at `scale`, with no display.
    /// Returns false when the file could not be written.
    @discardableResult
    public func writePNG(_ frame: OverlayFrame, crop rect: OverlayRect, scale: Int = 1, background: OverlayColor? = nil, to path: String) -> Bool {
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
