/// `Output=` of overlay.conf: which monitor the island is on.
package enum OverlayOutputChoice: Sendable, Hashable, CustomStringConvertible {
    /// X11's primary monitor; Wayland has none, and there it is the first output the compositor
    /// announced (GDK's monitor 0). The default.
    case primary
    /// The output of the focused (activated) window, followed as focus moves between outputs.
    case focused
    /// GDK's monitor number n.
    case number(Int)
    /// A connector name (HDMI-A-1), else a model name.
    case named(String)
    /// One island on every output, each showing the same. For one window, the primary.
    case all

    package init(_ text: String) {
        switch text.lowercased() {
        case "", "primary": self = .primary
        case "focused": self = .focused
        case "all": self = .all
        default:
            if let number = Int(text), number >= 0 { self = .number(number) } else { self = .named(text) }
        }
    }

    package var description: String {
        switch self {
        case .primary: "primary"
        case .focused: "focused"
        case .number(let number): String(number)
        case .named(let name): name
        case .all: "all"
        }
    }

    /// Where the island goes among `outputs` (GDK's monitors, in its order): the index, and
    /// whether it is what was asked for (false: the asked-for output is not there, and this is
    /// the fallback, the primary). `focused`: the output of the focused window, if known;
    /// `current`: where the island is now, where `focused` keeps it while no window is focused.
    package func pick(_ outputs: [OverlayOutput], focused: Int?, current: Int?) -> (index: Int, asked: Bool)? {
        guard !outputs.isEmpty else { return nil }
        let primary = outputs.firstIndex(where: \.primary) ?? 0
        switch self {
        case .primary, .all:
            return (primary, true)
        case .focused:
            if let focused, outputs.indices.contains(focused) { return (focused, true) }
            if let current, outputs.indices.contains(current) { return (current, true) }
            return (primary, true)
        case .number(let number):
            return outputs.indices.contains(number) ? (number, true) : (primary, false)
        case .named(let name):
            if let index = outputs.firstIndex(where: { $0.connector?.lowercased() == name.lowercased() })
                ?? outputs.firstIndex(where: { $0.model == name })
            {
                return (index, true)
            }
            return (primary, false)
        }
    }
}

/// One monitor as the overlay sees it.
package struct OverlayOutput: Sendable, Hashable {
    /// The connector (HEADLESS-2, HDMI-A-1): xdg-output's name on Wayland, RandR's on X11; nil
    /// until the compositor said it.
    package var connector: String?
    package var model: String?
    package var primary: Bool

    package init(connector: String?, model: String?, primary: Bool = false) {
        self.connector = connector
        self.model = model
        self.primary = primary
    }

    /// The log's name for it: the connector where known.
    package var name: String { connector ?? model ?? "unnamed output" }

    /// A connector name as the compositor said it (xdg-output), as the overlay keeps it: the
    /// compositor's word reaches the log, so no control or format characters, 64 at most.
    package static func connector(said name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.prefix(64).map {
                    [.control, .format].contains($0.properties.generalCategory) ? "?" : $0
                }))
    }
}

/// The desktop's windows as wlr-foreign-toplevel-management tells them, reduced to what the
/// island needs: which are fullscreen or focused (activated), and on which outputs. Titles and
/// app ids are not kept. A compositor (or the clients it reports) cannot make this hold more
/// than `maximumToplevels` windows of `maximumOutputsPerToplevel` outputs each: past those, a
/// window or an output is not tracked (and the shell lets go of the handle).
package struct ForeignToplevels: Sendable {
    package static let maximumToplevels = 512
    package static let maximumOutputsPerToplevel = 16
    /// The protocol's state values (zwlr_foreign_toplevel_handle_v1.state).
    static let activatedState: UInt32 = 2, fullscreenState: UInt32 = 3

    private struct Toplevel: Sendable {
        var fullscreen = false
        var activated = false
        /// In the order entered: a window across two outputs is focused on the first.
        var outputs: [UInt] = []
    }

    private var toplevels: [UInt: Toplevel] = [:]

    package init() {}

    package var count: Int { toplevels.count }

    /// A new window; false when it is one too many, and not tracked.
    package mutating func add(_ toplevel: UInt) -> Bool {
        guard toplevels[toplevel] != nil || toplevels.count < Self.maximumToplevels else { return false }
        if toplevels[toplevel] == nil { toplevels[toplevel] = Toplevel() }
        return true
    }

    /// The window's states now (the protocol's array, every value). Each change returns
    /// whether it changed what the island uses (a title's change sends the same states again).
    @discardableResult
    package mutating func setStates(_ toplevel: UInt, _ states: some Sequence<UInt32>) -> Bool {
        guard let old = toplevels[toplevel] else { return false }
        var fullscreen = false, activated = false
        for state in states {
            if state == Self.fullscreenState { fullscreen = true }
            if state == Self.activatedState { activated = true }
        }
        toplevels[toplevel]?.fullscreen = fullscreen
        toplevels[toplevel]?.activated = activated
        return old.fullscreen != fullscreen || old.activated != activated
    }

    @discardableResult
    package mutating func enter(_ toplevel: UInt, output: UInt) -> Bool {
        guard let outputs = toplevels[toplevel]?.outputs, !outputs.contains(output),
            outputs.count < Self.maximumOutputsPerToplevel
        else { return false }
        toplevels[toplevel]?.outputs.append(output)
        return true
    }

    @discardableResult
    package mutating func leave(_ toplevel: UInt, output: UInt) -> Bool {
        guard toplevels[toplevel]?.outputs.contains(output) == true else { return false }
        toplevels[toplevel]?.outputs.removeAll { $0 == output }
        return true
    }

    package mutating func close(_ toplevel: UInt) {
        toplevels[toplevel] = nil
    }

    /// The output is gone: no window is on it any more.
    package mutating func remove(output: UInt) {
        for key in toplevels.keys { toplevels[key]?.outputs.removeAll { $0 == output } }
    }

    /// Whether a fullscreen window is on `output`.
    package func fullscreen(on output: UInt) -> Bool {
        toplevels.values.contains { $0.fullscreen && $0.outputs.contains(output) }
    }

    /// The output of the focused window, if a window is focused and on one.
    package var focusedOutput: UInt? {
        toplevels.values.first { $0.activated && !$0.outputs.isEmpty }?.outputs.first
    }
}

/// What an EWMH window manager says of the active window on X11 (the root's
/// _NET_ACTIVE_WINDOW), reduced to what the island needs: fullscreen or not, and on which
/// monitor. island-overlay's X11Desktop reads the properties; the decision is here. Its
/// _NET_WM_STATE is a list the client itself sets: at most `maximumStates` atoms of it are
/// read, whatever length it claims.
package struct ActiveX11Window: Sendable, Hashable {
    /// EWMH defines twelve states; a client may add its own.
    package static let maximumStates = 32

    package var fullscreen: Bool
    /// Where it is on the root window, in GDK's (logical) pixels: its client area, which a
    /// fullscreen window has as large as its monitor.
    package var frame: OverlayRect

    /// `states`: the atoms of its _NET_WM_STATE; `fullscreenAtom`: _NET_WM_STATE_FULLSCREEN's.
    package init(states: some Sequence<UInt>, fullscreenAtom: UInt, frame: OverlayRect) {
        fullscreen = states.prefix(Self.maximumStates).contains(fullscreenAtom)
        self.frame = frame
    }

    /// The monitor it is on among `monitors` (GDK's geometries, in its order): the one it
    /// covers most of; nil when it is on none (unmapped, or off every screen).
    package func monitor(among monitors: [OverlayRect]) -> Int? {
        var best: (index: Int, area: Double)?
        for (index, monitor) in monitors.enumerated() {
            let overlap = frame.intersection(monitor)
            guard !overlap.isEmpty, case let area = overlap.width * overlap.height, area > best?.area ?? 0 else { continue }
            best = (index, area)
        }
        return best?.index
    }

    /// Whether it makes the island on `monitor` (an index into `monitors`) keep out of its way.
    package func fullscreen(on monitor: Int, among monitors: [OverlayRect]) -> Bool {
        fullscreen && self.monitor(among: monitors) == monitor
    }
}
