import CGtk
import Foundation
import IslandOverlay
import IslandPaths
import IslandPresenter

let usage = """
    Usage: island-overlay [--socket PATH] [--config FILE] [--css FILE]
           island-overlay --toggle-list
           island-overlay --render-gallery DIR [--layouts DIR] [--scale N]

    The Dynamic Island on screen: a black capsule at the top centre that shows the Live
    Activities of islandd as the TUI and the bars do (compact, minimal with a detached bubble,
    expanded, alerts, and the list of every activity as a panel under the island), and morphs
    between them. It is a presenter: it subscribes to the daemon, and reconnects when the
    daemon restarts.

    Mouse and keys:
      click the compact or minimal island     expand that activity
      click in the expanded island or alert   tap: the app is told, and the URL opens
      click a button                          press it (the app's Watch sees the action)
      secondary click on the island           open or close the list
      click × on a card in the list           dismiss that activity
      Escape, focus lost, pointer away        collapse, close the list (clicks outside the
                                              island reach the windows below)
    On X11 the island is an override-redirect window and takes no keyboard focus: Escape and
    focus loss do not reach it there; the pointer staying away (CollapseAfter=), the daemon's
    timeout or --toggle-list close what opened.
    With gtk-enable-animations=false (reduced motion) or Motion=off, nothing animates.

    Options:
      --socket PATH        the daemon's socket (default: $ISLAND_SOCKET, else
                           $XDG_RUNTIME_DIR/island/islandd.sock)
      --config FILE        default: $XDG_CONFIG_HOME/island/overlay.conf
      --css FILE           default: $XDG_CONFIG_HOME/island/overlay.css
      --toggle-list        open or close the list of the running overlay (for bars and key
                           bindings): sends SIGUSR1 to the pid in $XDG_RUNTIME_DIR/island/overlay.pid
      --render-gallery DIR draw every form of the five example apps to DIR/*.png, off-screen
                           (no display); --layouts DIR: the example layouts (default:
                           ./packaging/layouts, else /usr/share/island/layouts); --scale N: 1-4;
                           times of day in UTC unless TZ is set
      --help, --version

    overlay.conf:
      [Overlay]
      Output=NAME          the monitor: its model/connector name or its number (0, 1, ...);
                           default: the compositor's choice (Wayland), the primary (X11)
      Layer=top            background, bottom, top (default; fullscreen windows cover it) or overlay
      MarginTop=8          pixels between the top of the screen and the island
      Opener=gio open      the program a tap's URL is given to, as one last argument, with no
                           shell; default: gio open, else xdg-open
      CollapseAfter=4      seconds the pointer stays off the expanded island (or the open
                           list) before it collapses (closes); 0: never
      Motion=auto          auto: follow GTK's gtk-enable-animations (on Wayland GTK reads it from
                           GSettings org.gnome.desktop.interface enable-animations); on; off

    overlay.css: GTK CSS over the built-in dark style. The colours are named:
      @define-color island_background #000000;   island_foreground, island_secondary,
      island_accent (progress and rings without a tint), island_button, island_button_hover,
      island_track, island_panel (the list), island_card

    Placement: on Wayland compositors with wlr-layer-shell (sway, Hyprland, river, niri, KDE,
    COSMIC, labwc, Wayfire) a layer surface anchored top-centre, no exclusive zone; on X11 an
    override-redirect RGBA window at the top centre. Input is taken only where the island is
    drawn. GNOME on Wayland has no layer-shell: the overlay says so and exits with status 69.

    A click acts on what is on screen: a tap, a button or a dismissal does nothing for the app
    while the island morphs, nor until what was clicked has stood still in view for 500 ms
    (against another app moving its content under the pointer). Every form's size is bounded
    (the expanded island is at most 160 px tall) and what does not fit is cut, not drawn.

    Environment: ISLAND_OVERLAY_FRAME_LOG=1 logs every frame painted and its paint time
    ("frame N us animating|settled FORM"), the accessible regions, when the targets on screen
    become clickable ("actionable: tap ID; button ID ACTION; ...") and clicks ignored because
    they came too early, on stderr. ISLAND_OVERLAY_CLICK_SETTLE_MS=N (tests on a slow machine):
    a longer wait than 500 ms before a target may be clicked; never a shorter one.

    Exit status: 0 on SIGTERM/SIGINT, 64 bad usage, 69 no way to place the island (no
    layer-shell on Wayland, or no display), 1 --toggle-list found no running overlay.
    """

struct Options {
    var socket: String?
    var configPath: String?
    var cssPath: String?
    var toggleList = false
    var gallery: String?
    var layouts: String?
    var scale = 1
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 1
    func value(_ name: String) -> String {
        index += 1
        guard index < arguments.count else { fail("\(name) needs a value", status: 64) }
        return arguments[index]
    }
    while index < arguments.count {
        let argument = arguments[index]
        switch argument {
        case "--help", "-h":
            print(usage)
            exit(0)
        case "--version":
            print("island-overlay 0.1.0")
            exit(0)
        case "--socket": options.socket = value(argument)
        case "--config": options.configPath = value(argument)
        case "--css": options.cssPath = value(argument)
        case "--toggle-list": options.toggleList = true
        case "--render-gallery": options.gallery = value(argument)
        case "--layouts": options.layouts = value(argument)
        case "--scale":
            guard let scale = Int(value(argument)), (1...4).contains(scale) else { fail("--scale must be 1-4", status: 64) }
            options.scale = scale
        default:
            fail("unknown argument \(argument) (try --help)", status: 64)
        }
        index += 1
    }
    return options
}

func fail(_ message: String, status: Int32) -> Never {
    log(message)
    exit(status)
}

let environment = ProcessInfo.processInfo.environment
let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? "") + "/.config"
let runtimeDirectory = environment["XDG_RUNTIME_DIR"].map { $0 + "/island" }
let pidPath = runtimeDirectory.map { $0 + "/overlay.pid" }

let options = parseOptions(CommandLine.arguments)

if let directory = options.gallery {
    // Times of day in the default layout: the same images wherever they are drawn, unless a
    // zone is asked for.
    if environment["TZ"] == nil { setenv("TZ", "UTC", 1) }
    do {
        let files = try OverlayGallery.render(to: directory, layoutsDirectory: options.layouts ?? OverlayGallery.defaultLayoutsDirectory(),
                                              scale: options.scale)
        for file in files { print(file) }
        exit(0)
    } catch {
        fail("cannot render the gallery: \(error)", status: 1)
    }
}

if options.toggleList {
    guard let pidPath, let text = try? String(contentsOfFile: pidPath, encoding: .utf8),
          let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
        fail("no running overlay (no \(pidPath ?? "$XDG_RUNTIME_DIR/island/overlay.pid"))", status: 1)
    }
    // Only an island-overlay of ours: a stale pid may now be someone else's process.
    let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    guard comm == "island-overlay", kill(pid, SIGUSR1) == 0 else { fail("no running overlay (pid \(pid) is not island-overlay)", status: 1) }
    exit(0)
}

app.options = options
let configPath = options.configPath ?? configHome + "/island/overlay.conf"
if let text = try? String(contentsOfFile: configPath, encoding: .utf8) {
    app.config = OverlayConfig(text: text, path: configPath)
    log("configuration from \(configPath)")
    for warning in app.config.warnings { log(warning) }
}

func run() -> Never {
    // The island is painted with cairo in memory; GL is never used, and GDK's probing for it on
    // X11 maps Mesa (llvmpipe: about 50 MiB). A user's own GDK_GL wins.
    if environment["GDK_GL"] == nil { setenv("GDK_GL", "disable", 1) }
    guard gtk_init_check(nil, nil) != 0, let display = gdk_display_get_default() else {
        fail("cannot open a display (neither WAYLAND_DISPLAY nor DISPLAY works)", status: 69)
    }
    let wayland = island_is_wayland(display) != 0
    let x11 = island_is_x11(display) != 0
    if wayland, gtk_layer_is_supported() == 0 {
        fail("""
            this Wayland compositor has no wlr-layer-shell (GNOME's Mutter does not offer it), so the island \
            cannot be placed above other windows; not opening a window. Use island-presenter (tui, or a bar \
            module), or run on a compositor with layer-shell (sway, Hyprland, KDE, COSMIC, ...).
            """, status: 69)
    }
    guard wayland || x11 else { fail("unsupported display backend: neither Wayland nor X11", status: 69) }

    let monitor = chooseMonitor(display, x11: x11)
    var geometry = GdkRectangle()
    if let monitor { gdk_monitor_get_geometry(monitor, &geometry) }
    app.scale = monitor.map { gdk_monitor_get_scale_factor($0) } ?? 1
    let monitorName = monitor.flatMap { gdk_monitor_get_model($0) }.map { String(cString: $0) } ?? "(compositor's choice)"
    app.canvas = (440, max(200, min(720, Double(geometry.height > 0 ? geometry.height : 720) - app.config.marginTop)))

    let window = gtk_window_new(x11 ? GTK_WINDOW_POPUP : GTK_WINDOW_TOPLEVEL)!
    app.window = window
    gtk_window_set_title(island_window(window), "Island")
    gtk_window_set_decorated(island_window(window), 0)
    gtk_window_set_resizable(island_window(window), 0)
    gtk_widget_set_app_paintable(window, 1)
    if let screen = gtk_widget_get_screen(window), let visual = gdk_screen_get_rgba_visual(screen) {
        gtk_widget_set_visual(window, visual)
    } else {
        log("no RGBA visual (no compositing manager?): the island's corners will not be transparent")
    }
    gtk_widget_set_size_request(window, Int32(app.canvas.width), Int32(app.canvas.height))

    if wayland {
        let w = island_window(window)
        gtk_layer_init_for_window(w)
        gtk_layer_set_namespace(w, "island-overlay")
        let layer: GtkLayerShellLayer = switch app.config.layer {
        case .background: GTK_LAYER_SHELL_LAYER_BACKGROUND
        case .bottom: GTK_LAYER_SHELL_LAYER_BOTTOM
        case .top: GTK_LAYER_SHELL_LAYER_TOP
        case .overlay: GTK_LAYER_SHELL_LAYER_OVERLAY
        }
        gtk_layer_set_layer(w, layer)
        gtk_layer_set_anchor(w, GTK_LAYER_SHELL_EDGE_TOP, 1)
        gtk_layer_set_margin(w, GTK_LAYER_SHELL_EDGE_TOP, Int32(app.config.marginTop))
        gtk_layer_set_exclusive_zone(w, 0)
        gtk_layer_set_keyboard_mode(w, GTK_LAYER_SHELL_KEYBOARD_MODE_ON_DEMAND)
        if app.config.output != nil, let monitor { gtk_layer_set_monitor(w, monitor) }
    } else {
        gtk_window_set_type_hint(island_window(window), GDK_WINDOW_TYPE_HINT_NOTIFICATION)
        app.needsWindowShape = gtk_widget_get_screen(window).map { gdk_screen_is_composited($0) == 0 } ?? true
        gtk_window_move(island_window(window), geometry.x + (geometry.width - Int32(app.canvas.width)) / 2, geometry.y + Int32(app.config.marginTop))
    }

    let area = gtk_drawing_area_new()!
    app.area = area
    island_accessible_install(area)
    gtk_container_add(island_container(window), area)
    gtk_widget_add_events(area, Int32(GDK_BUTTON_PRESS_MASK.rawValue | GDK_POINTER_MOTION_MASK.rawValue | GDK_LEAVE_NOTIFY_MASK.rawValue))
    gtk_widget_add_events(window, Int32(GDK_KEY_PRESS_MASK.rawValue | GDK_FOCUS_CHANGE_MASK.rawValue))
    if let context = gtk_widget_get_style_context(area) { gtk_style_context_add_class(context, "island-overlay") }

    loadStyle(area)
    app.painter = OverlayPainter(style: readStyle(area), icons: GtkIconSource())
    app.layout = OverlayLayout(canvasWidth: app.canvas.width, canvasHeight: app.canvas.height, top: 1, metrics: app.painter.metrics)
    app.motion = OverlayMotion(enabled: app.config.motion ?? (island_animations_enabled() != 0))

    connect(area, "draw", unsafeBitCast({ (_: UnsafeMutableRawPointer?, cr: OpaquePointer?, _: UnsafeMutableRawPointer?) -> gboolean in
        if let cr { app.draw(cr) }
        return 1
    } as @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
    connect(area, "button-press-event", unsafeBitCast({ (_: UnsafeMutableRawPointer?, event: UnsafeMutablePointer<GdkEvent>?, _: UnsafeMutableRawPointer?) -> gboolean in
        guard let event else { return 0 }
        var x = 0.0, y = 0.0, button: guint = 0, type: Int32 = 0
        island_button_event(event, &x, &y, &button, &type)
        if type == Int32(GDK_BUTTON_PRESS.rawValue) { app.click(x: x, y: y, button: button) }
        return 1
    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
    connect(area, "motion-notify-event", unsafeBitCast({ (_: UnsafeMutableRawPointer?, event: UnsafeMutablePointer<GdkEvent>?, _: UnsafeMutableRawPointer?) -> gboolean in
        guard let event else { return 0 }
        var x = 0.0, y = 0.0
        island_motion_event(event, &x, &y)
        app.hover(x: x, y: y)
        return 0
    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
    connect(area, "leave-notify-event", unsafeBitCast({ (_: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<GdkEvent>?, _: UnsafeMutableRawPointer?) -> gboolean in
        app.hover(x: -1, y: -1)
        return 0
    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
    connect(window, "key-press-event", unsafeBitCast({ (_: UnsafeMutableRawPointer?, event: UnsafeMutablePointer<GdkEvent>?, _: UnsafeMutableRawPointer?) -> gboolean in
        guard let event else { return 0 }
        if island_key_event(event) == guint(GDK_KEY_Escape) { app.collapse(); return 1 }
        return 0
    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self))
    // On X11 without a window manager GDK moves focus with the pointer: leaving the island
    // would be "focus lost". There the pointer-away countdown does the job alone.
    if wayland { connect(window, "focus-out-event", unsafeBitCast({ (_: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<GdkEvent>?, _: UnsafeMutableRawPointer?) -> gboolean in
        app.collapse()
        return 0
    } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GdkEvent>?, UnsafeMutableRawPointer?) -> gboolean, to: GCallback.self)) }

    // SIGUSR1 (island-overlay --toggle-list) and the terminating signals, in the GTK loop.
    g_unix_signal_add(SIGUSR1, { _ in app.toggleList(); return 1 }, nil)
    for number in [SIGTERM, SIGINT, SIGHUP] {
        g_unix_signal_add(number, { _ in gtk_main_quit(); return 0 }, nil)
    }
    writePidFile()

    gtk_widget_show_all(window)
    app.refresh(animated: false)
    let socketPath = options.socket ?? SocketLocation.client(environment: environment, uid: getuid())
    log("backend \(wayland ? "wayland (layer-shell, layer \(app.config.layer.rawValue))" : "x11 (override-redirect\(app.needsWindowShape ? ", no compositor: shaped window" : ""))"), "
        + "output \(monitorName) \(geometry.width)x\(geometry.height)+\(geometry.x)+\(geometry.y), scale \(app.scale), "
        + "margin-top \(Int(app.config.marginTop)), motion \(app.motion.enabled ? "on" : "off"), socket \(socketPath)")

    app.interactor = Interactor(socketPath: socketPath)
    let loop = SubscriptionLoop(socketPath: socketPath)
    Task.detached {
        await loop.run { event in onGTKThread { app.handle(event) } }
    }
    gtk_main()
    if let pidFile = app.pidFile { unlink(pidFile) }
    log("exiting")
    exit(0)
}

func connect(_ widget: UnsafeMutablePointer<GtkWidget>, _ signal: String, _ callback: GCallback) {
    island_signal_connect(UnsafeMutableRawPointer(widget), signal, callback, nil)
}

func chooseMonitor(_ display: OpaquePointer, x11: Bool) -> OpaquePointer? {
    let count = gdk_display_get_n_monitors(display)
    if let wanted = app.config.output {
        for index in 0..<count {
            guard let monitor = gdk_display_get_monitor(display, index) else { continue }
            let model = gdk_monitor_get_model(monitor).map { String(cString: $0) }
            if wanted == String(index) || wanted == model { return monitor }
        }
        log("no output named \(wanted) among \(count); using the default")
    }
    return gdk_display_get_primary_monitor(display) ?? (count > 0 ? gdk_display_get_monitor(display, 0) : nil)
}

func writePidFile() {
    guard let runtimeDirectory, let pidPath else { return }
    mkdir(runtimeDirectory, 0o700)
    if (try? "\(getpid())\n".write(toFile: pidPath, atomically: true, encoding: .utf8)) != nil { app.pidFile = pidPath }
}

/// The built-in dark style, then the user's overlay.css over it.
func loadStyle(_ widget: UnsafeMutablePointer<GtkWidget>) {
    guard let screen = gtk_widget_get_screen(widget) else { return }
    let builtIn = gtk_css_provider_new()
    gtk_css_provider_load_from_data(builtIn, OverlayStyle.builtInCSS, -1, nil)
    gtk_style_context_add_provider_for_screen(screen, OpaquePointer(builtIn), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    let path = options.cssPath ?? configHome + "/island/overlay.css"
    guard access(path, R_OK) == 0 else { return }
    let user = gtk_css_provider_new()
    var error: UnsafeMutablePointer<GError>?
    if gtk_css_provider_load_from_path(user, path, &error) == 0 {
        log("\(path): \(error.map { String(cString: $0.pointee.message) } ?? "cannot load"); using the built-in style")
        if let error { g_error_free(error) }
        return
    }
    gtk_style_context_add_provider_for_screen(screen, OpaquePointer(user), guint(GTK_STYLE_PROVIDER_PRIORITY_USER))
    log("style from \(path)")
}

func readStyle(_ widget: UnsafeMutablePointer<GtkWidget>) -> OverlayStyle {
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
              let info = gtk_icon_theme_lookup_icon_for_scale(theme, name, size, scale, GTK_ICON_LOOKUP_FORCE_SIZE) else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        var error: UnsafeMutablePointer<GError>?
        var rgba = GdkRGBA(red: color.red, green: color.green, blue: color.blue, alpha: color.alpha)
        let pixbuf = gtk_icon_info_load_symbolic(info, &rgba, nil, nil, nil, nil, &error)
        if let error { g_error_free(error) }
        return pixbuf
    }
}

run()
