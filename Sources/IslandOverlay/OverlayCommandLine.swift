import Foundation

/// What island-overlay's command line decides, apart from parsing it: which options go
/// together, what overlay.conf's settings come to where the island is placed, which running
/// overlay `--toggle-list` may signal; and the help that says so.
package enum OverlayCommandLine {
    /// Why these options do not go together, or nil.
    package static func problem(
        size: String?, maxHeight: Int?, hosted: Bool, scale: Int, renderGallery: String?,
        drawSVG: String?
    ) -> String? {
        if let size, IslandGeometry(named: size) == nil { return "--size must be small, medium, large or a factor from 0.75 to 2" }
        if let maxHeight {
            guard hosted else { return "--max-height applies to --hosted only" }
            guard OverlayDesktopState.roomRange.contains(maxHeight) else { return "--max-height must be 100-20000 pixels" }
        }
        guard (1...4).contains(scale) else { return "--scale must be 1-4" }
        guard renderGallery == nil || drawSVG == nil else { return "--render-gallery and --draw-svg cannot be combined" }
        return nil
    }

    /// Reserve=yes where it cannot apply: hosted (the desktop's shell places the window) or on
    /// X11. There it is Reserve=no (the island fades while the pointer rests on it over the
    /// windows under it); returns what the log says of it, or nil.
    package static func placeReserve(_ config: inout OverlayConfig, hosted: Bool, wayland: Bool) -> String? {
        guard config.reserve, hosted || !wayland else { return nil }
        config.reserve = false
        return "Reserve=yes does not apply \(hosted ? "hosted (the desktop's shell places the window)" : "on X11"): windows may go under the island"
    }

    /// The pid `--toggle-list` may signal: the one in the pid file (`pidFile`, its text), only
    /// while that process is an island-overlay (`comm`, its /proc/PID/comm, read by the caller
    /// for that pid): a stale pid may now be someone else's process. Else why not.
    package static func runningOverlay(pidFile: String?, comm: (Int32) -> String?) -> Result<Int32, Refusal> {
        guard let text = pidFile, let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
            return .failure(.noPidFile)
        }
        guard comm(pid)?.trimmingCharacters(in: .whitespacesAndNewlines) == "island-overlay" else { return .failure(.notAnOverlay(pid)) }
        return .success(pid)
    }

    package enum Refusal: Error, Hashable {
        case noPidFile
        case notAnOverlay(Int32)
    }

    /// island-overlay --help's discussion: the island, its mouse and keys, overlay.conf,
    /// overlay.css, placement, the environment and the exit statuses.
    package static let discussion = """
        A black capsule at the top centre shows the Live Activities of islandd as the TUI and \
        the bars do (compact, minimal with a detached bubble, expanded, alerts, and the list of \
        every activity as a panel under the island), and morphs between them. It is a \
        presenter: it subscribes to the daemon, and reconnects when the daemon restarts.

        Mouse and keys:
          click the compact or minimal island  expand that activity
          rest the pointer on it for a second  it fades, to show the window under
                                               it (Reserve=no), until the pointer
                                               leaves
          click in the expanded island, alert  tap: the app is told, the URL opens
          click a button                       press it (the app's Watch sees it)
          secondary click on the island        open or close the list
          click × on a card in the list        dismiss that activity
          Escape, focus lost, pointer away     collapse, close the list (clicks
                                               outside the island reach the
                                               windows below)
        On X11 the island is an override-redirect window and takes no keyboard focus: Escape \
        and focus loss do not reach it there; the pointer staying away (CollapseAfter=), the \
        daemon's timeout or --toggle-list close what opened.
        With gtk-enable-animations=false (reduced motion) or Motion=off, nothing animates.

        overlay.conf:
          [Overlay]
          Output=primary   the monitor: a connector name (HDMI-A-1), a model
                           name, a number (0, 1, ...), primary (default;
                           on Wayland the first output), focused (the
                           output of the focused window, followed) or
                           all (an island on every output)
          Fullscreen=alerts  beside a fullscreen window on its output: hide
                           (nothing), alerts (only an alert, for its
                           duration; default) or always (as if none)
          Layer=top        background, bottom, top (default) or overlay;
                           beside a fullscreen window top rises to overlay
                           while the island shows something there
          MarginTop=8      pixels between the top of the screen and the island
          Reserve=no       yes: while the island shows something, windows keep
                           out of its strip (MarginTop, the compact height and
                           a gap; an exclusive zone on its output, each one's
                           with Output=all); no: windows go under it, and
                           it fades while the pointer rests on it. Not
                           --hosted, not on X11. A bar in a lower layer
                           (Waybar's default, bottom) moves under the strip;
                           one in the overlay layer stays above it
          Opener=gio open  the program a tap's URL is given to, as one last
                           argument, with no shell; default: gio open, else
                           xdg-open
          CollapseAfter=4  seconds the pointer stays off the expanded island (or
                           the open list) before it collapses (closes); 0: never
          Motion=auto      auto: follow GTK's gtk-enable-animations (on Wayland
                           GTK reads it from GSettings org.gnome.desktop.interface
                           enable-animations); on; off
          Size=medium      small, medium or large, or a factor from 0.75 to 2:
                           every form, its type and the window; the
                           monitor's scale comes on top

        overlay.css: GTK CSS over the built-in dark style. The colours are named: \
        island_background, island_foreground, island_secondary, island_accent (progress and \
        rings without a tint), island_button, island_button_hover, island_track, island_panel \
        (the list), island_card, and island_foreground_on_light and island_secondary_on_light \
        (text on a card with a light backgroundTint); for example:
          @define-color island_background #000000;
        A sheet with @import, url() or a backslash is not loaded (GTK would read the file it \
        names, on the overlay's main thread).

        Placement: on Wayland compositors with wlr-layer-shell (sway, Hyprland, river, niri, \
        KDE, COSMIC, labwc, Wayfire) a layer surface anchored top-centre, below bars and \
        panels (their exclusive zones), with none of its own unless Reserve=yes, \
        taking the keyboard only while expanded or the list is open (on demand; exclusively \
        where layer-shell is version 3, as on KDE Plasma 5.27, given back at every collapse); on X11 an \
        override-redirect RGBA window at the top centre. Input is taken only where the island \
        is drawn. Monitors plugged in or out while it runs are followed; the log names the \
        output (connector) it is on. Fullscreen windows and focus are known where the \
        compositor offers wlr-foreign-toplevel-management (sway and other wlroots \
        compositors), on X11 from an EWMH window manager (the active window's _NET_WM_STATE; \
        the island raises itself over it to show), and on GNOME from the extension; not on KDE \
        (KWin 5.27 keeps its own protocol for Plasma's programs) nor on X11 without an EWMH \
        window manager, where Fullscreen= does not apply and Output=focused stays put. The start-up log says which. GNOME has no layer-shell: there the Island GNOME Shell extension \
        (island@island.org) starts island-overlay --hosted and places its window itself; started \
        by hand on a Wayland compositor without layer-shell, the overlay says so and exits with \
        status 69.

        A click acts on what is on screen: a tap, a button or a dismissal does nothing for \
        the app while the island morphs, nor until what was clicked has stood still in view \
        for 500 ms (against another app moving its content under the pointer). Every form's \
        size is bounded (the expanded island is at most 160 px tall) and what does not fit is \
        cut, not drawn.

        Environment: ISLAND_OVERLAY_FRAME_LOG=1 logs every frame painted and its paint time \
        ("frame N us animating|settled FORM"), the accessible regions, when the targets on \
        screen become clickable ("actionable: tap ID; button ID ACTION; ..."), clicks ignored \
        because they came too early, and the pointer entering and leaving the window, on stderr. ISLAND_OVERLAY_CLICK_SETTLE_MS=N \
        (tests on a slow machine): a longer wait than 500 ms before a target may be clicked; \
        never a shorter one.

        Exit status: 0 on SIGTERM/SIGINT (--hosted: or standard input closed), 64 bad usage, 69 no way to place the island (no \
        layer-shell on Wayland, or no display), 1 --toggle-list found no running overlay; \
        --draw-svg: 65 input that is not a request, 1 the SVG not written.
        """
}
