import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite struct LayoutRendererTests {
    private let t0 = 1_700_000_000.0

    private func view(_ text: String) throws -> LayoutView {
        let layout = try Layout(json: .object(["minimal": try json(text)]))
        return try #require(layout.minimal?.view)
    }

    private func render(_ text: String, state: JSONObject = [:], attributes: JSONObject = [:], now: Double = 0) throws -> RenderedView {
        LayoutRenderer(attributes: attributes, state: state, now: now).render(try view(text))
    }

    @Test func timersTickWithNow() throws {
        let countdown = try view(#"{"type": "timer", "from": "{{state.start}}", "to": "{{state.end}}"}"#)
        let state: JSONObject = ["start": .double(t0), "end": .double(t0 + 25 * 60)]
        let early = LayoutRenderer(attributes: [:], state: state, now: t0 + 60).render(countdown)
        let late = LayoutRenderer(attributes: [:], state: state, now: t0 + 20 * 60 + 30).render(countdown)
        // A countdown shows a second until that second is over, like a kitchen timer.
        let almost = LayoutRenderer(attributes: [:], state: state, now: t0 + 1500 - 0.2).render(countdown)
        #expect(early == .timer(RenderedTimer(from: t0, to: t0 + 1500, countsDown: true, seconds: 1440)))
        #expect(early.plainText == "24:00")
        #expect(late.plainText == "4:30")
        #expect(almost.plainText == "0:01")
        #expect(LayoutRenderer(attributes: [:], state: state, now: t0 + 3000).render(countdown).plainText == "0:00")

        let stopwatch = try view(#"{"type": "timer", "from": 1000, "countsDown": false}"#)
        #expect(LayoutRenderer(attributes: [:], state: [:], now: 1059.9).render(stopwatch).plainText == "0:59")
        #expect(LayoutRenderer(attributes: [:], state: [:], now: 1000 + 3723).render(stopwatch).plainText == "1:02:03")
        #expect(LayoutRenderer(attributes: [:], state: [:], now: 900).render(stopwatch).plainText == "0:00")

        let bounded = try view(#"{"type": "timer", "from": 0, "to": 60, "countsDown": false}"#)
        #expect(LayoutRenderer(attributes: [:], state: [:], now: 500).render(bounded).plainText == "1:00")
    }

    @Test func timeRangeProgressMovesWithNow() throws {
        let bar = try view(#"{"type": "progress", "from": 100, "to": 200}"#)
        func fraction(at now: Double) -> Double? {
            if case .progress(let progress) = LayoutRenderer(attributes: [:], state: [:], now: now).render(bar) { progress.fraction } else { nil }
        }
        #expect(fraction(at: 50) == 0)
        #expect(fraction(at: 125) == 0.25)
        #expect(fraction(at: 300) == 1)
    }

    @Test func valueProgressIsClampedAndSafe() throws {
        func fraction(_ state: JSONObject) throws -> Double? {
            let rendered = try render(#"{"type": "progress", "value": "{{state.done}}", "total": "{{state.all}}"}"#, state: state)
            if case .progress(let progress) = rendered { return progress.fraction } else { return nil }
        }
        #expect(try fraction(["done": 3, "all": 4]) == 0.75)
        #expect(try fraction(["done": 9, "all": 4]) == 1)
        #expect(try fraction(["done": -1, "all": 4]) == 0)
        #expect(try fraction(["done": 1, "all": 0]) == 0)
        #expect(try fraction(["done": "lots", "all": 4]) == 0)
        #expect(try fraction([:]) == 0)
        #expect(try render(#"{"type": "progress", "value": 0.4}"#).plainText == "40%")
    }

    @Test func missingKeysRenderAsNothing() throws {
        #expect(try render(#"{"type": "text", "template": "[{{state.nope}}|{{attributes.a.b.c}}|{{nope}}]"}"#) == .text("[||]"))
        #expect(try render(#"{"type": "symbol", "name": "{{state.icon}}"}"#) == .symbol(""))
        let timer = try render(#"{"type": "timer", "to": "{{state.end}}"}"#)
        #expect(timer == .timer(RenderedTimer(from: nil, to: nil, countsDown: true, seconds: nil)))
        #expect(timer.plainText == "")
        #expect(try render(#"{"type": "timer", "to": "{{state.end}}"}"#, state: ["end": "soon"]).plainText == "")
    }

    @Test func valuesRenderAsPlainText() throws {
        let template = #"{"type": "text", "template": "{{state.name}} {{state.whole}} {{state.half}} {{state.flag}} {{state.nothing}}"}"#
        let state: JSONObject = ["name": "Tom & Jerry <3", "whole": 12.0, "half": 2.5, "flag": true, "nothing": nil]
        #expect(try render(template, state: state) == .text("Tom & Jerry <3 12 2.5 true "))
    }

    @Test func sectionsIterateArraysAndTestFlags() throws {
        let template =
            #"{"type": "text", "template": "{{#state.items}}{{name}} ×{{count}}{{^last}}, {{/last}}{{/state.items}}{{^state.items}}empty{{/state.items}}"}"#
        let items: JSON = [["name": "Latte", "count": 2, "last": false], ["name": "Bagel", "count": 1, "last": true]]
        #expect(try render(template, state: ["items": items]) == .text("Latte ×2, Bagel ×1"))
        #expect(try render(template, state: ["items": []]) == .text("empty"))
        #expect(try render(template) == .text("empty"))
        #expect(try render(#"{"type": "text", "template": "{{#state.on}}on{{/state.on}}{{^state.on}}off{{/state.on}}"}"#, state: ["on": false]) == .text("off"))
    }

    @Test func multilineTemplatesKeepTheirWhitespace() throws {
        let template = #"{"type": "text", "template": "{{#state.a}}\nA\n{{/state.a}}\nB"}"#
        #expect(try render(template, state: ["a": true]) == .text("A\nB"))
    }

    @Test func symbolNamesMapRenderedValues() throws {
        let symbol = #"{"type": "symbol", "name": "{{state.stage}}", "names": {"cooking": "🍳"}}"#
        #expect(try render(symbol, state: ["stage": "cooking"]) == .symbol("🍳"))
        #expect(try render(symbol, state: ["stage": "go-next"]) == .symbol("go-next"))
    }

    @Test func buttonSymbolsResolveAsSymbolNamesDo() throws {
        let button = #"""
            {"type": "button", "action": "toggle", "label": "{{#state.on}}Off{{/state.on}}{{^state.on}}On{{/state.on}}",
             "symbol": "{{state.status}}", "symbols": {"on": "media-playback-pause-symbolic", "off": "media-playback-start-symbolic"}}
            """#
        #expect(
            try render(button, state: ["status": "on", "on": true])
                == .button(action: "toggle", label: "Off", symbol: "media-playback-pause-symbolic"))
        #expect(try render(button, state: ["status": "off"]) == .button(action: "toggle", label: "On", symbol: "media-playback-start-symbolic"))
        #expect(
            try render(button, state: ["status": "go-next"]) == .button(action: "toggle", label: "On", symbol: "go-next"),
            "a rendered name not in symbols is shown as is")
        #expect(try render(button) == .button(action: "toggle", label: "On", symbol: nil), "a symbol rendering to nothing is none")
        let fixed = #"{"type": "button", "action": "next", "label": "Next", "symbol": "media-skip-forward-symbolic"}"#
        #expect(try render(fixed) == .button(action: "next", label: "Next", symbol: "media-skip-forward-symbolic"))
    }

    @Test func urlsArePercentEncodedAndRecheckedAfterRendering() throws {
        let link = #"{"type": "link", "url": "https://shop.example/o/{{state.order}}?raw={{{state.raw}}}", "child": {"type": "text", "template": "Open"}}"#
        #expect(
            try render(link, state: ["order": "A B/1", "raw": "x&y=1"])
                == .link(url: "https://shop.example/o/A%20B%2F1?raw=x&y=1", child: .text("Open")))
        // Unescaped substitution can still break the URL; it is then dropped, not opened.
        #expect(try render(link, state: ["order": "1", "raw": "a b"]) == .link(url: nil, child: .text("Open")))
    }

    @Test func regionsFallBackToTheLayoutURL() throws {
        let layout = try Layout(
            json: try json(
                #"""
                {"url": "https://a.example/{{attributes.id}}",
                 "compactLeading": {"type": "symbol", "name": "x"},
                 "compactTrailing": {"type": "text", "template": "t", "url": "x-app://trailing"},
                 "minimal": {"type": "link", "url": "https://b.example", "child": {"type": "spacer"}}}
                """#))
        let rendered = LayoutRenderer(attributes: ["id": "7"], state: [:], now: 0).render(layout)
        #expect(rendered.url == "https://a.example/7")
        #expect(rendered.compactLeading?.url == "https://a.example/7")
        #expect(rendered.compactTrailing?.url == "x-app://trailing")
        #expect(rendered.minimal?.url == "https://b.example")
        #expect(layout.minimal?.url == nil)
    }

    @Test func expandedRegionsKeepTheirPlacement() throws {
        let layout = try Layout(
            json: try json(
                #"""
                {"expanded": {"leading": {"type": "symbol", "name": "x", "priority": 2, "belowIfTooWide": true},
                              "trailing": {"type": "text", "template": "{{state.n}}", "priority": 1.5}}}
                """#))
        let rendered = LayoutRenderer(attributes: [:], state: ["n": 3], now: 0).render(layout)
        #expect(rendered.expandedLeading == RenderedRegion(view: .symbol("x"), priority: 2, belowIfTooWide: true, url: nil))
        #expect(rendered.expandedTrailing?.priority == 1.5)
        #expect(rendered.expandedTrailing?.belowIfTooWide == false)
        #expect(rendered.expandedCenter == nil)
    }

    @Test func layoutKeepsItsDocument() throws {
        let document = try json(#"{"chip": "Hi", "minimal": {"type": "spacer"}}"#)
        let layout = try Layout(json: document)
        #expect(JSON.object(layout.json) == document)
        #expect(try Layout(json: .object(layout.json)) == layout)
    }

    @Test func templateRendersOnItsOwn() throws {
        let template = try LayoutTemplate("{{attributes.a}}-{{state.b}}")
        #expect(template.render(attributes: ["a": "x"], state: ["b": 1]) == "x-1")
        #expect(throws: LayoutError(path: "", reason: "unterminated section '#a'")) { try LayoutTemplate("{{#a}}") }
    }
}
