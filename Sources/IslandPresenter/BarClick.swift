import Foundation
import IslandProtocol
import OrderedJSON
import OrderedCollections

/// What a click on a bar module (or a key binding) does to the island: `island-presenter
/// click ACTION`, and i3blocks' clicks on a persistent block.
package enum BarClick: String, Sendable, CaseIterable {
    /// Expand the island's activity, or collapse it when it is expanded.
    case toggle
    case expand, collapse, tap, dismiss
    /// Press a button of the island's activity (its action is given with the click).
    case button
    /// Open the lock-screen list (the terminal UI in a terminal).
    case list

    /// The `Interact` call for the island as it is: the action and the activity (the expanded
    /// one, else the attached one); nil for `list`, and when the island shows nothing.
    package func interaction(on island: IslandState) -> (action: String, id: String)? {
        typealias Action = PresenterNames.Interact.Action
        guard let id = island.expanded ?? island.attached else { return nil }
        let action: String
        switch self {
        case .toggle: action = island.mode == .expanded ? Action.collapse : Action.expand
        case .expand: action = Action.expand
        case .collapse: action = Action.collapse
        case .tap: action = Action.tap
        case .dismiss: action = Action.dismiss
        case .button: action = Action.button
        case .list: return nil
        }
        return (action, id)
    }

    /// A mouse button as bars number them: left toggles, middle opens the list, right taps.
    package static func forButton(_ button: Int) -> BarClick? {
        switch button {
        case 1: .toggle
        case 2: .list
        case 3: .tap
        default: nil
        }
    }

    /// The button of a line i3blocks writes to a persistent block's standard input on a
    /// click: the block's properties as a JSON object with `button` (format=json), or the
    /// button's number alone.
    package static func i3blocksButton(in line: String) -> Int? {
        if let number = Int(line.trimmingCharacters(in: .whitespaces)) { return number }
        guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return nil }
        return object["button"]?.intValue ?? object["button"]?.stringValue.flatMap { Int($0) }
    }
}
