/// Where one island goes among the monitors, and what its window does to get there: the
/// decisions of island-overlay's OverlayPlacement, which carries them out with GTK and
/// gtk-layer-shell. Generic over the monitor's identity (GDK's monitor there, anything
/// comparable in tests).
package enum OverlayPlacementStep<Monitor: Equatable>: Equatable {
    /// Where it is, it stays.
    case stay
    /// To `Monitor`; `show`: the window was hidden (an Output=all island given a monitor again).
    case move(to: Monitor, show: Bool)
    /// Output=all: the island's monitor is gone; hidden until its keeper gives it another.
    case hide
    /// No monitor left: the island waits for one.
    case wait
}

package enum OverlayPlacementPolicy {
    /// Output=all's island for `pinned` (nil: its monitor went away, and none was given since).
    /// `current`: the monitor the island is on; `visible`: whether its window is shown.
    package static func pinned<Monitor: Equatable>(
        _ pinned: Monitor?, all: [Monitor], current: Monitor?,
        visible: Bool
    ) -> OverlayPlacementStep<Monitor> {
        if let pinned, all.contains(pinned) {
            return pinned != current ? .move(to: pinned, show: current == nil) : .stay
        }
        return current != nil || visible ? .hide : .stay
    }

    /// The island of one window, where Output= (`output`) says among `all` (GDK's monitors, in
    /// its order; `outputs` what each is): the step, and when the output asked for is not
    /// there, the names of those that are (the log says the island waits on a fallback).
    /// `focused`: the index of the focused window's monitor, if known.
    package static func chosen<Monitor: Equatable>(
        _ output: OverlayOutputChoice, all: [Monitor], outputs: [OverlayOutput],
        focused: Int?, current: Monitor?
    )
        -> (step: OverlayPlacementStep<Monitor>, fallbackAmong: [String]?)
    {
        let index = current.flatMap { all.firstIndex(of: $0) }
        if let (chosen, asked) = output.pick(outputs, focused: focused, current: index) {
            return (all[chosen] != current ? .move(to: all[chosen], show: false) : .stay, asked ? nil : outputs.map(\.name))
        }
        return (all.isEmpty && current != nil ? .wait : .stay, nil)
    }

    /// Output=all: the most islands (each a window and a subscription), however often a
    /// compositor adds outputs.
    package static let maximumIslands = 16

    /// Output=all, a monitor came: the island to give it (`idle`: the index of one whose
    /// monitor went away, if any), else a new one while there are fewer than
    /// `maximumIslands` (`islands`), else none.
    package static func forNewMonitor(idle: Int?, islands: Int) -> NewMonitorIsland {
        if let idle { return .reuse(idle) }
        return islands < maximumIslands ? .add : .full
    }

    package enum NewMonitorIsland: Sendable, Hashable {
        case reuse(Int)
        case add
        /// `maximumIslands` already.
        case full
    }

    /// X11: the top-left corner of an override-redirect window `windowWidth` wide, centred at
    /// the top of a monitor, `marginTop` below its edge (integer pixels, as X11 places).
    package static func topCentre(monitor: (x: Int, y: Int, width: Int), windowWidth: Int, marginTop: Int) -> (x: Int, y: Int) {
        (monitor.x + (monitor.width - windowWidth) / 2, monitor.y + marginTop)
    }

    /// The island's window on `monitor` (its geometry in GDK's logical pixels, as it is now):
    /// a canvas that fits that monitor (OverlayWindowPlan.canvas: as tall as it leaves under
    /// MarginTop=, as wide as the expanded island may grow there) and, on X11, the window's
    /// corner at its top centre. Wayland needs no corner: layer-shell anchors the surface to the
    /// top centre of its output, and the compositor keeps it there. Worked out again whenever a
    /// monitor changes (its mode, its scale, its position beside the others), and carried out
    /// only when it differs from the fit the window has.
    package static func fit(on monitor: OverlayRect, config: OverlayConfig, x11: Bool) -> OverlayFit {
        let canvas = OverlayWindowPlan.canvas(
            config: config, monitorHeight: Int(monitor.height), outputWidth: Int(monitor.width), hosted: false, maxHeight: nil)
        let corner =
            x11
            ? topCentre(
                monitor: (Int(monitor.x), Int(monitor.y), Int(monitor.width)), windowWidth: Int(canvas.width),
                marginTop: Int(config.marginTop)) : nil
        return OverlayFit(width: canvas.width, height: canvas.height, x: corner?.x, y: corner?.y)
    }

    /// Output=all: the monitors among `all` (GDK's, in its order) that no island is pinned to
    /// (`pinned`: each island's monitor, nil for one whose monitor went away), each to get one.
    package static func withoutIsland<Monitor: Equatable>(_ all: [Monitor], pinned: [Monitor?]) -> [Monitor] {
        all.filter { monitor in !pinned.contains { $0 == monitor } }
    }
}

/// The size of the island's window and, on X11, where it is: what OverlayPlacementPolicy.fit
/// decides for its monitor.
package struct OverlayFit: Sendable, Hashable, CustomStringConvertible {
    package var width: Double
    package var height: Double
    /// X11: the window's top-left corner on the root window; nil on Wayland.
    package var x: Int?
    package var y: Int?

    package init(width: Double, height: Double, x: Int? = nil, y: Int? = nil) {
        self.width = width
        self.height = height
        self.x = x
        self.y = y
    }

    package var description: String {
        "canvas \(Int(width))x\(Int(height))" + (x.map { x in " at \(x),\(y ?? 0)" } ?? "")
    }
}

/// GDK says of monitors in bursts: a monitor plugged in is added, then given its geometry, its
/// scale and (Wayland) its name, each a signal; a dock brings two or three monitors at once, and
/// a flaky cable or a compositor reconfiguring may say the same again many times. Each signal
/// is noted here and the islands are placed once per burst, from the monitors as they are
/// then (the pass runs when GLib's loop is idle, after every event already read): however many
/// signals come, an island's window is resized, moved or mapped on another output at most once
/// a pass, and never from a signal's handler, so nothing the pass does can call it again.
package struct OverlayMonitorEvents: Sendable, Hashable {
    /// Signals noted since the last pass.
    package private(set) var pending = 0

    package init() {}

    /// One more signal; true when a pass is to be scheduled (none is yet).
    package mutating func noted() -> Bool {
        pending = min(pending + 1, Int.max - 1)
        return pending == 1
    }

    /// The pass runs: how many signals it answers.
    package mutating func pass() -> Int {
        defer { pending = 0 }
        return pending
    }
}

/// What the island's layer surface asks of the compositor (Wayland): its layer, its exclusive
/// zone and the keyboard, from what the island shows, whether a fullscreen window is beside
/// it, the session's lock and what the controller wants of the keyboard. Each change returns
/// what to set now, or nil when nothing changes.
package struct OverlayLayerSurface: Sendable, Hashable {
    private let layer: OverlayConfig.Layer
    private let fullscreen: OverlayConfig.Fullscreen
    private let exclusiveZone: Int
    /// Output=all: only one island takes the keyboard, or two would take it from each other.
    private let takesKeyboard: Bool
    /// Layer=top risen to the overlay layer, to show over a fullscreen window.
    package private(set) var lifted = false
    /// The exclusive zone the layer surface has now (Reserve=yes, while showing).
    package private(set) var reserved = 0
    /// The daemon says the session is locked: the window is to be drawn over the compositor's
    /// lock screen where it grants that.
    package private(set) var overLockScreen = false
    /// What the island asks of the keyboard now (the controller decides).
    package private(set) var keyboard = OverlayKeyboard.none
    /// Accepting it, and not yet given it: a focus-out now is the compositor's shuffle.
    package private(set) var awaitingKeyboard = false

    package init(config: OverlayConfig, takesKeyboard: Bool = true) {
        layer = config.layer
        fullscreen = config.fullscreen
        exclusiveZone = config.exclusiveZone
        self.takesKeyboard = takesKeyboard
    }

    /// Fullscreen windows cover the top layer: while the island shows something beside one (an
    /// alert with Fullscreen=alerts, anything with always), Layer=top rises to overlay, and
    /// goes back when it shows nothing there, so it never covers the window for nothing; other
    /// layers are the user's choice and stay. Reserve=yes: while the island shows something
    /// its strip is an exclusive zone, and tiled and maximised windows make room; showing
    /// nothing, it gives the room back.
    package mutating func islandChanged(showing: Bool, fullscreenBeside: Bool) -> (layer: OverlayConfig.Layer?, exclusiveZone: Int?) {
        var change: (layer: OverlayConfig.Layer?, exclusiveZone: Int?) = (nil, nil)
        let lift = layer == .top && showing && fullscreenBeside && fullscreen != .hide
        if lift != lifted {
            lifted = lift
            change.layer = lift || overLockScreen ? .overlay : .top
        }
        let zone = showing ? exclusiveZone : 0
        if zone != reserved {
            reserved = zone
            change.exclusiveZone = zone
        }
        return change
    }

    /// The session locked (true) or unlocked, where the compositor draws chosen surfaces over
    /// its lock screen: the layer to set. KWin 5.27 stacks a surface it lets over its locker by
    /// its layer-shell layer: only the overlay layer is above the locker's fullscreen greeter (and
    /// beside its own emergency screen); the top layer stays under them.
    package mutating func lockChanged(_ locked: Bool) -> OverlayConfig.Layer? {
        guard locked != overLockScreen else { return nil }
        overLockScreen = locked
        return locked || lifted ? .overlay : layer
    }

    /// The keyboard as the controller asks: the mode to set, and whether the surface is to be
    /// mapped anew (`remap`): KWin 5.27 leaves the keyboard with a layer surface that stops
    /// accepting it, so one that gives back an exclusive keyboard is mapped again.
    package mutating func keyboard(_ wanted: OverlayKeyboard) -> (mode: OverlayKeyboard, remap: Bool)? {
        let wanted = takesKeyboard ? wanted : .none
        guard wanted != keyboard else { return nil }
        let released = keyboard == .exclusive && wanted == .none
        keyboard = wanted
        awaitingKeyboard = wanted != .none
        return (wanted, released)
    }

    /// The island has the keyboard (GTK's focus-in).
    package mutating func keyboardArrived() {
        awaitingKeyboard = false
    }
}
