import FreeDesktop

/// `~/.config/island/overlay.conf`, systemd style like islandd.conf:
///
///     [Overlay]
///     Output=HDMI-A-1     # the monitor: a connector name (HDMI-A-1, DP-2; Wayland: from
///                         # xdg-output, X11: RandR's), a model name, a number (0, 1, ...),
///                         # primary (default; X11's primary, on Wayland the first output
///                         # the compositor announced), focused (the output of the
///                         # focused window, followed as it moves; wlroots compositors, X11
///                         # with an EWMH window manager)
///                         # or all (an island on every output)
///     Fullscreen=alerts   # beside a fullscreen window on the island's output: hide
///                         # (nothing), alerts (default: only an alert, for its duration)
///                         # or always (as if there were none)
///     Layer=top           # background, bottom, top (default) or overlay; beside a
///                         # fullscreen window with Fullscreen=alerts|always, top rises to
///                         # overlay, for the island to be seen over it
///     MarginTop=8         # pixels between the screen's top edge and the island
///     Reserve=no          # yes: while the island shows something, its strip (MarginTop,
///                         # the compact height and a small gap) is kept free of windows
///                         # (a layer-shell exclusive zone, on each island's output);
///                         # no (default): windows go under it, and it fades while the
///                         # pointer rests on it. Reserve= is not for hosted nor X11.
///                         # Compositors stack it with bars' zones by layer: a bar in
///                         # the overlay layer stays at the edge, above the strip
///     Opener=gio open     # the command a tap's URL is given to, as its last argument
///     Motion=auto         # auto (GTK's gtk-enable-animations), on or off
///     CollapseAfter=4     # seconds the pointer stays away before the expanded island
///                         # collapses and the list closes; 0: never
///     Size=medium         # small, medium (default) or large, or a factor from 0.75 to 2:
///                         # every form and its type; the output's scale comes on top
///
/// Unknown keys and bad values are reported and ignored, never fatal: the island still shows.
package struct OverlayConfig: Sendable, Hashable {
    package enum Layer: String, Sendable, Hashable, CaseIterable { case background, bottom, top, overlay }
    /// What the island shows beside a fullscreen window on its output.
    package enum Fullscreen: String, Sendable, Hashable, CaseIterable { case hide, alerts, always }

    package var output = OverlayOutputChoice.primary
    package var fullscreen = Fullscreen.alerts
    package var layer: Layer = .top
    package var marginTop = 8.0
    /// Reserve=yes: windows keep out of the island's strip (`exclusiveZone`).
    package var reserve = false
    /// argv of the opener, without the URL; nil: `gio open`, else `xdg-open`, whichever exists.
    package var opener: [String]?
    /// nil: follow gtk-enable-animations.
    package var motion: Bool?
    package var collapseAfter = 4.0
    /// The island's sizes, from `Size=`.
    package var geometry = IslandGeometry.medium
    package private(set) var warnings: [String] = []

    package init() {}

    /// The layer surface's exclusive zone while the island shows something: with Reserve=yes
    /// the compact capsule's strip from the window's top and a gap under it, in logical pixels
    /// (the compositor adds MarginTop, the surface's margin); else 0, which keeps the island
    /// below other surfaces' zones (a bar's) without taking one of its own.
    package var exclusiveZone: Int {
        reserve ? Int((geometry.top + geometry.pillHeight + geometry.bubbleGap).rounded(.up)) : 0
    }

    package init(text: String, path: String = "overlay.conf") {
        let file = KeyFile(parsing: text, syntax: .systemd)
        // The overlay's policy: what the reader could not read is a warning, and the line is skipped.
        warnings = file.problems.map { "\(path):\($0.line): \($0)" }
        var section = ""
        for line in file.lines {
            let entry: KeyFile.Entry
            switch line {
            case .group(let name, let number):
                section = name
                if section != "Overlay" { warnings.append("\(path):\(number): unknown section [\(section)], ignored") }
                continue
            case .entry(let read):
                entry = read
            }
            guard section == "Overlay" || section.isEmpty else { continue }
            let place = "\(path):\(entry.line)"
            let (key, value) = (entry.key, entry.value)
            switch key {
            case "Output":
                output = OverlayOutputChoice(value)
            case "Fullscreen":
                if let parsed = Fullscreen(rawValue: value.lowercased()) {
                    fullscreen = parsed
                } else {
                    warnings.append("\(place): Fullscreen must be hide, alerts or always")
                }
            case "Layer":
                if let parsed = Layer(rawValue: value.lowercased()) {
                    layer = parsed
                } else {
                    warnings.append("\(place): Layer must be background, bottom, top or overlay")
                }
            case "MarginTop":
                let number = Double(value) ?? -1
                if number >= 0, number <= 2000 { marginTop = number } else { warnings.append("\(place): MarginTop must be 0-2000 pixels") }
            case "Reserve":
                switch value.lowercased() {
                case "yes", "on", "true": reserve = true
                case "no", "off", "false": reserve = false
                default: warnings.append("\(place): Reserve must be yes or no")
                }
            case "Opener":
                let words: [String] = value.split(whereSeparator: { (c: Character) -> Bool in c == " " || c == "\t" }).map { String($0) }
                opener = words.isEmpty ? nil : words
            case "CollapseAfter":
                let seconds = Double(value) ?? -1
                if seconds >= 0, seconds <= 3600 { collapseAfter = seconds } else { warnings.append("\(place): CollapseAfter must be 0-3600 seconds") }
            case "Size":
                if let named = IslandGeometry(named: value) {
                    geometry = named
                } else {
                    warnings.append("\(place): Size must be small, medium, large or a factor from 0.75 to 2")
                }
            case "Motion":
                switch value.lowercased() {
                case "auto": motion = nil
                case "on", "yes", "true": motion = true
                case "off", "no", "false": motion = false
                default: warnings.append("\(place): Motion must be auto, on or off")
                }
            default:
                warnings.append("\(place): unknown key \(key), ignored")
            }
        }
    }
}
