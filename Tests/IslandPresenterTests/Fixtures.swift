import IslandCore
import OrderedJSON
import OrderedCollections
@testable import IslandPresenter

/// Updates and items as the daemon sends them, for the presenter's tests.
enum Fixtures {
    static let now = 1_000_000.0

    static let coffeeLayout: JSON = [
        "url": "https://example.org/order",
        "keylineTint": "#ff9500",
        "compactLeading": ["type": "symbol", "name": "☕"],
        "compactTrailing": ["type": "text", "template": "{{state.stage}}"],
        "minimal": ["type": "text", "template": "{{state.stage}}"],
        "lockScreen": [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "Coffee for {{attributes.name}}: {{state.stage}}"],
                ["type": "progress", "value": "{{state.done}}", "total": 4],
            ],
        ],
        "expanded": [
            "leading": ["type": "symbol", "name": "☕", "priority": 0],
            "center": ["type": "text", "template": "{{attributes.name}}'s order", "priority": 1],
            "trailing": ["type": "text", "template": "{{state.stage}}", "priority": 0],
            "bottom": [
                "type": "hstack", "priority": 0,
                "children": [
                    ["type": "button", "action": "pause", "label": "Pause"],
                    ["type": "button", "action": "cancel", "label": "Cancel"],
                ],
            ],
        ],
    ]

    static let timerLayout: JSON = [
        "chip": "Tea",
        "compactLeading": ["type": "symbol", "name": "⏱"],
        "compactTrailing": ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true],
        "minimal": ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true],
        "lockScreen": [
            "type": "hstack",
            "children": [
                ["type": "text", "template": "Tea"],
                ["type": "timer", "to": "{{state.endsAt}}", "countsDown": true],
            ],
        ],
    ]

    static func coffee(stage: String = "brewing", done: Int = 1, state activityState: String = "active", name: String = "Ada") -> JSON {
        item(
            id: "c1", app: "org.example.Coffee", type: "Coffee", attributes: ["name": .string(name)],
            state: ["stage": .string(stage), "done": .int(done)], activityState: activityState, layout: coffeeLayout)
    }

    static func timer(endsAt: Double = now + 125) -> JSON {
        item(id: "t1", app: "org.example.Timer", type: "Tea", state: ["endsAt": .double(endsAt)], layout: timerLayout)
    }

    static func item(
        id: String, app: String, type: String, attributes: JSONObject = [:], state: JSONObject,
        activityState: String = "active", layout: JSON?
    ) -> JSON {
        var object: JSONObject = [
            "id": .string(id), "app": .string(app), "type": .string(type), "attributes": .object(attributes),
            "content": ["state": .object(state), "relevanceScore": 0.0], "state": .string(activityState),
            "createdAt": .double(now - 60),
        ]
        if let layout {
            object["layout"] = layout
            object["defaultLayout"] = false
        } else {
            object["layout"] = .object(Layout.default(for: type, attributes: attributes, state: state).json)
            object["defaultLayout"] = true
        }
        return .object(object)
    }

    static func island(_ mode: String, attached: String? = nil, detached: String? = nil, expanded: String? = nil, lockScreen: [String] = []) -> JSON {
        var object: JSONObject = ["mode": .string(mode), "lockScreen": .array(lockScreen.map { .string($0) })]
        if let attached { object["attached"] = .string(attached) }
        if let detached { object["detached"] = .string(detached) }
        if let expanded { object["expanded"] = .string(expanded) }
        return .object(object)
    }

    static func snapshot(sequence: Int, island: JSON, items: [JSON], resync: Bool = false) -> JSONObject {
        ["kind": "snapshot", "sequence": .int(sequence), "resync": .bool(resync), "island": island, "items": .array(items), "removed": []]
    }

    /// A delta; without `island` (nil), one that left the island unchanged.
    static func delta(sequence: Int, island: JSON?, items: [JSON] = [], removed: [String] = [], alert: JSON? = nil) -> JSONObject {
        var object: JSONObject = ["kind": "delta", "sequence": .int(sequence), "resync": false]
        if let island { object["island"] = island }
        object["items"] = .array(items)
        object["removed"] = .array(removed.map { .string($0) })
        if let alert { object["alert"] = alert }
        return object
    }

    /// The compact island while the screen is shared: the coffee as islandd sends it then, with
    /// no content and the daemon's layout (`Wire.hiddenLayout`).
    static var sharedModel: PresenterModel {
        let symbol: JSON = ["type": "symbol", "name": "application-x-executable-symbolic"]
        let words: JSON = ["type": "text", "template": "Hidden while sharing"]
        let layout: JSON = [
            "compactLeading": symbol, "compactTrailing": ["type": "symbol", "name": "view-conceal-symbolic"], "minimal": symbol,
            "lockScreen": ["type": "hstack", "children": [symbol, words], "spacing": 6],
            "expanded": [
                "leading": ["type": "symbol", "name": "application-x-executable-symbolic", "priority": 0],
                "center": ["type": "text", "template": "Hidden while sharing", "priority": 1],
            ],
        ]
        var snapshot = snapshot(
            sequence: 4, island: island("compact", attached: "c1", lockScreen: ["c1"]),
            items: [item(id: "c1", app: "org.example.Coffee", type: "Coffee", state: [:], layout: layout)])
        snapshot["sharing"] = ["on": true, "since": .double(now - 30), "contentHidden": true]
        var model = PresenterModel()
        model.apply(snapshot)
        return model
    }

    // The four islands the formatters are tested on.

    static var emptyModel: PresenterModel {
        var model = PresenterModel()
        model.apply(snapshot(sequence: 0, island: island("none"), items: []))
        return model
    }

    static var compactModel: PresenterModel {
        var model = PresenterModel()
        model.apply(snapshot(sequence: 3, island: island("compact", attached: "c1", lockScreen: ["c1"]), items: [coffee()]))
        return model
    }

    static var minimalModel: PresenterModel {
        var model = PresenterModel()
        model.apply(
            snapshot(
                sequence: 5, island: island("minimal", attached: "t1", detached: "c1", lockScreen: ["t1", "c1"]),
                items: [timer(), coffee()]))
        return model
    }

    static var expandedModel: PresenterModel {
        var model = PresenterModel()
        model.apply(
            snapshot(
                sequence: 7, island: island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [coffee()]))
        return model
    }
}
