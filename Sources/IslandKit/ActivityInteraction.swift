public import Foundation

/// What the user did to an activity in a presenter, as `Activity.interactions` tells the app:
/// Island's counterpart of a Live Activity's deep link and of `LiveActivityIntent`.
public enum ActivityInteraction: Sendable, Hashable {
    /// The user tapped the activity. `url` is the layout's URL for it (a region's or the
    /// layout's own, rendered), nil when the layout has none: open it, or show what it names.
    /// The daemon allows only `http`, `https` and the schemes the app's desktop entry declares.
    case tap(url: URL?)
    /// The user pressed a layout button; `action` is the button's `action`, as the layout
    /// declares it (`{"type": "button", "action": "pause", …}`). Do what it says, then
    /// `update` the activity to show the result.
    case button(action: String)
}
