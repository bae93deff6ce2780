/// The desktop's own Do Not Disturb switches, followed into islandd's focus (Admin
/// `SetFocus`). Pure: the bridge feeds it what each switch reads and the outcome of each call,
/// and sends the calls it asks for.
///
/// - The desktop's switch wins when it is first read and whenever it changes; an
///   `island admin focus` in between is kept until the switch next changes (the bridge never
///   sends what the switch already said).
/// - When several switches are read, the first of `Switch.allCases` is followed: the
///   notification server's own (dunst's pause, Plasma's inhibition, swaync's, mako's mode)
///   before GNOME's setting, since the server that draws the notifications is the one whose
///   switch the user sees.
/// - A switch that goes away (its server left the bus) changes nothing: focus stays as it was.
///   So does the bridge stopping: a switch still on should keep the island quiet, and the
///   next start reads the switches again.
/// - One call at a time; while it is in flight only the latest wish waits, so a peer flipping
///   its switch as fast as it can costs one call per round trip. A failed call (islandd away)
///   is sent again when `retry()` says so (the bridge's timer, waiting longer each time).
package struct DesktopFocus: Sendable {
    /// In precedence order.
    package enum Switch: String, CaseIterable, Sendable {
        /// dunst's pause: `paused` of `org.dunstproject.cmd0` (`dunstctl set-paused`).
        case dunst
        /// KDE Plasma's notification inhibition: `Inhibited` of its `org.freedesktop.Notifications`.
        case kde
        /// SwayNotificationCenter's Do Not Disturb (`GetDnd`, `SubscribeV2`).
        case swaync
        /// mako's mode `do-not-disturb` (`makoctl mode -a do-not-disturb`).
        case mako
        /// GNOME's `org.gnome.desktop.notifications show-banners`, inverted.
        case gnome

        /// How the log names it.
        package var name: String {
            switch self {
            case .dunst: "dunst's pause"
            case .kde: "KDE's notification inhibition"
            case .swaync: "swaync's Do Not Disturb"
            case .mako: "mako's do-not-disturb mode"
            case .gnome: "GNOME's show-banners"
            }
        }
    }

    /// What each switch reads now: true is focus (Do Not Disturb). A switch not there has no entry.
    package private(set) var readings: [Switch: Bool] = [:]
    /// The switch followed and what it said, as last acted on.
    package private(set) var followed: (switch: Switch, focus: Bool)?
    /// What islandd is told of it: the wish is the focus to set, said again whenever the
    /// followed switch changes (even to what islandd was last told: an `island admin focus`
    /// since then is overruled only by a change of the switch).
    private var calls = LatestWishCalls<Bool>(announced: nil)

    package init() {}

    /// A switch read `focus` (nil: it is not there). Returns what to log when the
    /// followed switch's value changed, which is then what the daemon is to be told.
    package mutating func read(_ source: Switch, focus: Bool?) -> String? {
        readings[source] = focus
        guard let leading = Switch.allCases.first(where: { readings[$0] != nil }), let value = readings[leading] else {
            return nil
        }
        if let followed, followed.switch == leading, followed.focus == value { return nil }
        followed = (leading, value)
        calls.wish(value, again: true)
        return "following \(leading.name): Do Not Disturb \(value ? "on" : "off")"
    }

    /// The `SetFocus(on)` to send now, marked in flight; nil when nothing is due or a call
    /// is already out.
    package mutating func nextCall() -> Bool? { calls.nextCall() }

    /// The call for `on` came back. A failed one is due again at the next `retry()`, unless
    /// a newer wish took its place meanwhile.
    package mutating func completed(_ on: Bool, succeeded: Bool) { calls.completed(on, succeeded: succeeded) }

    /// Time to try again: a call that failed is due again.
    package mutating func retry() { calls.retry() }
}
