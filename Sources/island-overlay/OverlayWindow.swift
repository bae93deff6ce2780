import ArgumentParser
import CGtk
import CPangoCairo
import Foundation
import IslandOverlay

/// The island's window, placed: a layer surface at the top centre on Wayland, an
/// override-redirect window there on X11, with a drawing area that takes the pointer. Hosted
/// (`--hosted`), an ordinary top-level window of the canvas's size that the desktop's shell
/// places and stacks (the GNOME Shell extension, through Meta.WaylandClient).
@MainActor struct OverlayWindow {
    let widget: UnsafeMutablePointer<GtkWidget>
    let area: UnsafeMutablePointer<GtkWidget>
    let wayland: Bool
    /// Placed by the desktop's shell, which speaks on standard input (`OverlayDesktopState`).
    let hosted: Bool
    /// On X11 with no compositing manager, alpha is not blended: the window itself is cut to
    /// the shapes as they are drawn now (X Shape), or its transparent parts would show black.
    let needsWindowShape: Bool
    let canvas: (width: Double, height: Double)
    /// The compositor's wlr-layer-shell version, as bound (0: not placed through layer-shell).
    let layerShellVersion: UInt32
    /// The backend and placement, for the log (the output is OverlayPlacement's to say).
    let description: String

    /// What the window is, as the decisions about it need it.
    var plan: OverlayWindowPlan {
        OverlayWindowPlan(
            wayland: wayland, hosted: hosted, layerShellVersion: layerShellVersion, needsWindowShape: needsWindowShape,
            canvas: canvas)
    }

    /// Opens the display and places the window; fails with 69 where the island cannot be placed.
    init(config: OverlayConfig, hosted: Bool, maxHeight: Double? = nil, environment: [String: String]) throws {
        // The island is painted with cairo in memory; GL is never used, and GDK's probing for it on
        // X11 maps Mesa (llvmpipe: about 50 MiB). A user's own GDK_GL wins.
        if environment["GDK_GL"] == nil { setenv("GDK_GL", "disable", 1) }
        guard gtk_init_check(nil, nil) != 0, let display = gdk_display_get_default() else {
            throw fail("cannot open a display (neither WAYLAND_DISPLAY nor DISPLAY works)", status: 69)
        }
        wayland = island_is_wayland(display) != 0
        self.hosted = hosted
        let x11 = island_is_x11(display) != 0
        if wayland, !hosted, gtk_layer_is_supported() == 0 { throw fail(OverlayWindowPlan.noLayerShell(environment), status: 69) }
        guard wayland || x11 else { throw fail("unsupported display backend: neither Wayland nor X11", status: 69) }
        layerShellVersion = wayland && !hosted ? UInt32(gtk_layer_get_protocol_version()) : 0

        // Sized for the first monitor and as wide as the expanded island may grow on the widest
        // monitor there is at the start; OverlayPlacement then fits it to the island's monitor
        // before it is shown, and again as monitors change (hosted, the host says the room).
        var geometry = GdkRectangle()
        if let monitor = gdk_display_get_monitor(display, 0) { gdk_monitor_get_geometry(monitor, &geometry) }
        canvas = OverlayWindowPlan.canvas(
            config: config, monitorHeight: Int(geometry.height), outputWidth: Self.widestMonitor(),
            hosted: hosted, maxHeight: maxHeight)

        let window = gtk_window_new(x11 && !hosted ? GTK_WINDOW_POPUP : GTK_WINDOW_TOPLEVEL)!
        widget = window
        gtk_window_set_title(island_window(window), "Island")
        gtk_window_set_decorated(island_window(window), 0)
        gtk_window_set_resizable(island_window(window), 0)
        gtk_widget_set_app_paintable(window, 1)
        if let screen = gtk_widget_get_screen(window), let visual = gdk_screen_get_rgba_visual(screen) {
            gtk_widget_set_visual(window, visual)
        } else {
            log("no RGBA visual (no compositing manager?): the island's corners will not be transparent")
        }
        gtk_widget_set_size_request(window, Int32(canvas.width), Int32(canvas.height))

        if hosted {
            // The host places and stacks it. These hints say the same to an X11 window manager
            // (GNOME on Xorg); on Wayland the extension does it through Mutter.
            let w = island_window(window)
            gtk_window_set_skip_taskbar_hint(w, 1)
            gtk_window_set_skip_pager_hint(w, 1)
            gtk_window_set_keep_above(w, 1)
            gtk_window_stick(w)
            gtk_window_set_focus_on_map(w, 0)
            gtk_window_set_type_hint(w, GDK_WINDOW_TYPE_HINT_UTILITY)
            needsWindowShape = false
        } else if wayland {
            let w = island_window(window)
            gtk_layer_init_for_window(w)
            gtk_layer_set_namespace(w, "island-overlay")
            gtk_layer_set_layer(w, Self.layer(config.layer))
            gtk_layer_set_anchor(w, GTK_LAYER_SHELL_EDGE_TOP, 1)
            gtk_layer_set_margin(w, GTK_LAYER_SHELL_EDGE_TOP, Int32(config.marginTop))
            gtk_layer_set_exclusive_zone(w, 0)
            // Only while open, as the controller asks (OverlayPlacement.keyboard).
            gtk_layer_set_keyboard_mode(w, GTK_LAYER_SHELL_KEYBOARD_MODE_NONE)
            needsWindowShape = false
        } else {
            gtk_window_set_type_hint(island_window(window), GDK_WINDOW_TYPE_HINT_NOTIFICATION)
            needsWindowShape = gtk_widget_get_screen(window).map { gdk_screen_is_composited($0) == 0 } ?? true
        }

        area = gtk_drawing_area_new()!
        island_accessible_install(area)
        gtk_container_add(island_container(window), area)
        let pointer = GDK_BUTTON_PRESS_MASK.rawValue | GDK_POINTER_MOTION_MASK.rawValue | GDK_ENTER_NOTIFY_MASK.rawValue | GDK_LEAVE_NOTIFY_MASK.rawValue
        gtk_widget_add_events(area, Int32(pointer))
        gtk_widget_add_events(window, Int32(GDK_KEY_PRESS_MASK.rawValue | GDK_FOCUS_CHANGE_MASK.rawValue))
        if let context = gtk_widget_get_style_context(area) { gtk_style_context_add_class(context, "island-overlay") }

        description = OverlayWindowPlan(
            wayland: wayland, hosted: hosted, layerShellVersion: layerShellVersion,
            needsWindowShape: needsWindowShape, canvas: canvas
        ).description(config: config)
    }

    /// The width of GDK's widest monitor now, in logical pixels; nil with none.
    static func widestMonitor() -> Int? {
        guard let display = gdk_display_get_default() else { return nil }
        return (0..<gdk_display_get_n_monitors(display)).compactMap { index -> Int? in
            var geometry = GdkRectangle()
            guard let monitor = gdk_display_get_monitor(display, index) else { return nil }
            gdk_monitor_get_geometry(monitor, &geometry)
            return geometry.width > 0 ? Int(geometry.width) : nil
        }.max()
    }

    static func layer(_ layer: OverlayConfig.Layer) -> GtkLayerShellLayer {
        switch layer {
        case .background: GTK_LAYER_SHELL_LAYER_BACKGROUND
        case .bottom: GTK_LAYER_SHELL_LAYER_BOTTOM
        case .top: GTK_LAYER_SHELL_LAYER_TOP
        case .overlay: GTK_LAYER_SHELL_LAYER_OVERLAY
        }
    }
}

/// The built-in dark style, then the user's overlay.css over it.
@MainActor func loadStyle(_ widget: UnsafeMutablePointer<GtkWidget>, userCSS path: String) {
    guard let screen = gtk_widget_get_screen(widget) else { return }
    let builtIn = gtk_css_provider_new()
    gtk_css_provider_load_from_data(builtIn, OverlayStyle.builtInCSS, -1, nil)
    gtk_style_context_add_provider_for_screen(screen, OpaquePointer(builtIn), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    guard let text = readConfigurationFile(path, what: "style sheet") else { return }
    if let refusal = OverlayStyle.refusal(ofUserCSS: text) {
        log("\(path): \(refusal); using the built-in style")
        return
    }
    let user = gtk_css_provider_new()
    var error: UnsafeMutablePointer<GError>?
    if gtk_css_provider_load_from_data(user, text, -1, &error) == 0 {
        log("\(path): \(error.map { String(cString: $0.pointee.message) } ?? "cannot load"); using the built-in style")
        if let error { g_error_free(error) }
        return
    }
    gtk_style_context_add_provider_for_screen(screen, OpaquePointer(user), guint(GTK_STYLE_PROVIDER_PRIORITY_USER))
    log("style from \(path)")
}

/// The island's named colours, as the style sheets set them.
@MainActor func readStyle(_ widget: UnsafeMutablePointer<GtkWidget>) -> OverlayStyle {
    var style = OverlayStyle()
    guard let context = gtk_widget_get_style_context(widget) else { return style }
    for (name, keyPath) in OverlayStyle.colorNames {
        var color = GdkRGBA()
        if gtk_style_context_lookup_color(context, name, &color) != 0 {
            style[keyPath: keyPath] = OverlayColor(red: color.red, green: color.green, blue: color.blue, alpha: color.alpha)
        }
    }
    return style
}

/// Icons through GtkIconTheme: the user's theme, symbolic icons recoloured by GTK.
final class GtkIconSource: OverlayIconSource {
    private var cache: [String: OpaquePointer?] = [:]

    func draw(icon name: String, cairo cr: OpaquePointer, rect: OverlayRect, color: OverlayColor, scale: Int) -> Bool {
        let size = Int32(max(8, min(256, rect.height.rounded())))
        let key = "\(name)@\(size)x\(scale)#\(color)"
        let pixbuf: OpaquePointer?
        if let cached = cache[key] {
            pixbuf = cached
        } else {
            pixbuf = load(name, size: size, scale: Int32(scale), color: color)
            // Icon names come from producers: the cache is bounded, and what it drops is freed.
            if cache.count > 256 {
                for case let old? in cache.values { g_object_unref(UnsafeMutableRawPointer(old)) }
                cache.removeAll()
            }
            cache[key] = pixbuf
        }
        guard let pixbuf else { return false }
        let width = Double(gdk_pixbuf_get_width(pixbuf)), height = Double(gdk_pixbuf_get_height(pixbuf))
        guard width > 0, height > 0 else { return false }
        cairo_save(cr)
        cairo_translate(cr, rect.x, rect.y)
        cairo_scale(cr, rect.width / width, rect.height / height)
        gdk_cairo_set_source_pixbuf(cr, pixbuf, 0, 0)
        cairo_paint(cr)
        cairo_restore(cr)
        return true
    }

    private func load(_ name: String, size: Int32, scale: Int32, color: OverlayColor) -> OpaquePointer? {
        guard let theme = gtk_icon_theme_get_default(),
            let info = gtk_icon_theme_lookup_icon_for_scale(theme, name, size, scale, GTK_ICON_LOOKUP_FORCE_SIZE)
        else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        var error: UnsafeMutablePointer<GError>?
        var rgba = GdkRGBA(red: color.red, green: color.green, blue: color.blue, alpha: color.alpha)
        let pixbuf = gtk_icon_info_load_symbolic(info, &rgba, nil, nil, nil, nil, &error)
        if let error { g_error_free(error) }
        return pixbuf
    }
}
