import OrderedCollections
import OrderedJSON
package import IslandPresenter

/// What the desktop tells the overlay: from the compositor, whether a fullscreen window is on
/// the island's output (wlr-foreign-toplevel-management, read by island-overlay's
/// WaylandDesktop); from a desktop's own shell that hosts the overlay (`island-overlay
/// --hosted`, started and placed by the GNOME Shell extension), facts only that shell knows, one
/// JSON object a line on standard input, each naming any of its members:
///
///     {"fullscreen": true}   a fullscreen window is on the island's monitor
///     {"alerts": false}      the desktop's Do Not Disturb is on
///     {"locked": true}       the session is locked: the host shows the overlay on its lock
///                            screen, and the overlay shows the lock-screen list alone
///     {"room": 640}          the window's height at most, in logical pixels (what
///                            --max-height says at start): the room under the host's bar on
///                            the island's monitor, said again when monitors change
///
/// Unknown members are ignored (a newer host may say more); a member of the wrong type or a
/// line that is no JSON object is refused and changes nothing. The overlay writes one line
/// back on standard output, `{"wake": true}`, when an alert comes while locked: the host lights
/// its lock screen.
package struct OverlayDesktopState: Sendable, Hashable {
    /// A fullscreen window is on the island's monitor: the island keeps out of its way as
    /// Fullscreen= says.
    package var fullscreen = false
    /// Alerts may expand the island. False while the desktop's Do Not Disturb is on: an
    /// alerting update still changes what the island shows, without expanding it.
    package var alerts = true
    /// The session is locked and the host shows the overlay on its lock screen: the overlay
    /// shows the lock-screen list (what the daemon redacted for the lock screen) and nothing
    /// else, and acts on no pointer or key.
    package var locked = false
    /// The room the host has for the window under its bar (hosted), once it said it: the
    /// canvas is made to fit it (nil: as --max-height said at start).
    package var room: Int?
    /// What `room` may be, as --max-height.
    package static let roomRange = 100...20_000

    package init(fullscreen: Bool = false, alerts: Bool = true, locked: Bool = false, room: Int? = nil) {
        self.fullscreen = fullscreen
        self.alerts = alerts
        self.locked = locked
        self.room = room
    }

    /// Applies one line of the host; returns why it was refused, or nil.
    package mutating func apply(line: [UInt8]) -> String? {
        guard let object = try? JSONParser.parse(line, maximumDepth: 4).objectValue else { return "not a JSON object" }
        var next = self
        for (key, flag) in [
            ("fullscreen", \OverlayDesktopState.fullscreen), ("alerts", \OverlayDesktopState.alerts),
            ("locked", \OverlayDesktopState.locked),
        ] {
            guard let value = object[key] else { continue }
            guard let bool = value.boolValue else { return "\(key) must be true or false" }
            next[keyPath: flag] = bool
        }
        if let value = object["room"] {
            guard let room = value.intValue, Self.roomRange.contains(room) else {
                return "room must be \(Self.roomRange.lowerBound)-\(Self.roomRange.upperBound) pixels"
            }
            next.room = room
        }
        self = next
        return nil
    }

    /// What the island shows of `scene` under this state: while Do Not Disturb holds alerts,
    /// an alert's expansion is shown as the compact island; beside a fullscreen window, as
    /// `policy` (Fullscreen=) says: nothing, nothing but an alert, or everything. `opened`: a
    /// held alert the user expanded, shown as it is.
    package func filter(
        _ scene: IslandScene, fullscreen policy: OverlayConfig.Fullscreen = .alerts,
        except opened: PresenterAlert? = nil
    ) -> IslandScene {
        var scene = scene
        if locked {
            // The lock-screen form: the list alone, no island above it to expand or alert.
            scene.alert = nil
            scene.mode = .none
            scene.attached = nil
            scene.detached = nil
            scene.expanded = nil
            return scene
        }
        if !alerts, let alert = scene.alert, alert != opened {
            scene.alert = nil
            if scene.mode == .expanded {
                scene.expanded = nil
                scene.mode = scene.attached == nil ? .none : .compact
            }
        }
        if fullscreen, policy == .hide || policy == .alerts && scene.alert == nil {
            scene.alert = nil
            scene.mode = .none
            scene.attached = nil
            scene.detached = nil
            scene.expanded = nil
        }
        return scene
    }

    /// The log's words for it.
    package var description: String {
        "fullscreen \(fullscreen ? "yes" : "no"), alerts \(alerts ? "shown" : "held (Do Not Disturb)")"
            + (locked ? ", locked (the lock-screen list)" : "")
    }
}

/// Standard input cut into lines, each at most `maximumLineBytes` long: a longer line is
/// dropped whole (and said once), so a host cannot make the overlay hold more than that.
package struct OverlayHostLines: Sendable {
    package static let maximumLineBytes = 4096

    private var pending: [UInt8] = []
    private var skipping = false

    package init() {}

    package enum Line: Sendable, Hashable {
        case line([UInt8])
        /// A line over the limit, dropped.
        case tooLong
    }

    package mutating func feed(_ bytes: some Collection<UInt8>) -> [Line] {
        var lines: [Line] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if skipping {
                    skipping = false
                } else if !pending.isEmpty {
                    lines.append(.line(pending))
                }
                pending.removeAll(keepingCapacity: true)
            } else if !skipping {
                pending.append(byte)
                if pending.count > Self.maximumLineBytes {
                    pending.removeAll()
                    skipping = true
                    lines.append(.tooLong)
                }
            }
        }
        return lines
    }
}
