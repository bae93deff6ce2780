import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// What a valid layout probably gets wrong is said, never refused.
@Suite struct LayoutLintTests {
    func warnings(_ layout: JSON, state: JSONObject? = nil, attributes: JSONObject? = nil) throws -> [String] {
        LayoutLint.warnings(for: try Layout(json: layout), state: state, attributes: attributes).map(\.description)
    }

    func progress(_ value: JSON, total: JSON = 100) -> JSON {
        ["expanded": ["bottom": ["type": "progress", "value": value, "total": total, "priority": 1]]]
    }

    @Test func aMeasureThatCanNeverBeANumberIsFlagged() throws {
        #expect(
            try warnings(progress("40%")) == [
                "expanded.bottom.value: '40%' can never be a number: write a number, or a template that renders one (\"{{state.percent}}\")"
            ])
        #expect(
            try warnings(progress("{{state.percent}}%")) == [
                "expanded.bottom.value: '{{state.percent}}%' can never be a number: '%' around the tags makes every rendering text; render the number alone"
            ])
        let timer: JSON = ["minimal": ["type": "timer", "to": "soon"]]
        #expect(try warnings(timer).count == 1)
    }

    @Test func measuresThatCanBeNumbersAreNot() throws {
        for value: JSON in [
            40, "40", " 40 ", "{{state.percent}}", "-{{state.a}}.{{state.b}}", "{{#state.done}}100{{/state.done}}",
            "{{^state.p}}n/a{{/state.p}}{{state.p}}",
        ] {
            #expect(try warnings(progress(value)) == [], "\(value)")
        }
        // A text view may say "40%" all it likes.
        #expect(try warnings(["minimal": ["type": "text", "template": "40%"]]) == [])
    }

    @Test func aTemplateNamingAKeyTheSampleStateLacksIsFlagged() throws {
        let layout: JSON = [
            "lockScreen": [
                "type": "vstack",
                "children": [
                    ["type": "text", "template": "{{state.percnt}} done of {{attributes.file}}"],
                    ["type": "text", "template": "{{state.percent}} {{state.eta.minutes}} {{#state.items}}{{name}}{{/state.items}}"],
                    ["type": "symbol", "name": "{{state.stage}}", "names": ["{{state.none}}": "x"]],
                ],
            ]
        ]
        let state: JSONObject = ["percent": 40, "eta": ["minutes": 3], "items": [["name": "a"]], "stage": "brewing"]
        #expect(
            try warnings(layout, state: state) == [
                "lockScreen.children[0].template: {{state.percnt}}: the sample state has no 'percnt' (did you mean percent?); it renders as nothing"
            ])
        #expect(
            try warnings(layout, state: state, attributes: ["name": "x"]).last
                == "lockScreen.children[0].template: {{attributes.file}}: the sample attributes has no 'file'; it renders as nothing")
        #expect(try warnings(layout) == [], "without a sample, names are not checked")
        let nested: JSON = ["minimal": ["type": "text", "template": "{{state.eta.minuts}}"]]
        #expect(
            try warnings(nested, state: state)
                == ["minimal.template: {{state.eta.minuts}}: the sample state has no 'minuts' (did you mean minutes?); it renders as nothing"])
    }

    @Test func transformsAndTripleTagsAreReadToo() throws {
        let layout: JSON = ["minimal": ["type": "text", "template": "{{uppercased(state.titel)}} {{{state.body}}} {{&state.x}}"]]
        let found = try warnings(layout, state: ["title": "t", "body": "b", "x": 1])
        #expect(found.count == 1 && found[0].contains("did you mean title?"))
    }

    @Test func aFarOffKeyGetsNoSuggestion() throws {
        let layout: JSON = ["minimal": ["type": "text", "template": "{{state.zzz}}"]]
        #expect(try warnings(layout, state: ["percent": 1]).first?.contains("did you mean") == false)
    }

    @Test func buttonActionsAreFoundInEveryRegion() throws {
        let layout = try Layout(json: [
            "lockScreen": [
                "type": "hstack",
                "children": [
                    ["type": "button", "action": "pause", "label": "Pause"],
                    ["type": "link", "url": "https://example.org", "child": ["type": "button", "action": "open", "label": "Open"]],
                ],
            ],
            "expanded": ["bottom": ["type": "button", "action": "cancel", "label": "Cancel", "priority": 0]],
        ])
        #expect(layout.buttonActions == ["pause", "open", "cancel"])
        #expect(try Layout(json: ["chip": "x"]).buttonActions.isEmpty)
    }
}
