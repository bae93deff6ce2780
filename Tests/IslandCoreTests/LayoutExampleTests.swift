import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// The classic Live Activities, written as Island layouts and rendered with sample data.
@Suite struct LayoutExampleTests {
    private let t0 = 1_700_000_000.0

    @Test func coffeeDeliveryWithStageSymbols() throws {
        let layout = try Layout(
            text: #"""
                {
                  "compactLeading": {"type": "symbol", "name": "{{state.stage}}",
                                     "names": {"ordered": "📝", "brewing": "☕", "onTheWay": "🛵", "delivered": "✅"}},
                  "compactTrailing": {"type": "text", "template": "{{state.etaMinutes}} min"},
                  "minimal": {"type": "symbol", "name": "{{state.stage}}",
                              "names": {"ordered": "📝", "brewing": "☕", "onTheWay": "🛵", "delivered": "✅"}},
                  "lockScreen": {"type": "vstack", "spacing": 4, "children": [
                    {"type": "text", "template": "{{attributes.shop}} · order {{attributes.order}}"},
                    {"type": "text", "template": "{{state.stageTitle}}, about {{state.etaMinutes}} min"}
                  ]},
                  "expanded": {
                    "leading": {"priority": 1, "type": "symbol", "name": "{{state.stage}}", "names": {"brewing": "☕"}},
                    "center": {"priority": 2, "type": "text", "template": "{{state.stageTitle}}"},
                    "trailing": {"priority": 1, "type": "text", "template": "{{state.etaMinutes}} min"},
                    "bottom": {"priority": 0, "type": "link", "url": "https://coffee.example/orders/{{attributes.order}}/help",
                               "child": {"type": "text", "template": "Something wrong?"}}
                  },
                  "keylineTint": "#6F4E37",
                  "chip": "Coffee",
                  "url": "https://coffee.example/orders/{{attributes.order}}"
                }
                """#)
        let attributes = try jsonObject(#"{"shop": "Blue Bottle", "order": "A17"}"#)
        let brewing = LayoutRenderer(attributes: attributes, state: try jsonObject(#"{"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7}"#), now: t0)
        let rendered = brewing.render(layout)
        expectView(rendered.compactLeading, .symbol("☕"))
        expectText(rendered.compactTrailing, "7 min")
        expectText(rendered.lockScreen, "Blue Bottle · order A17 · Brewing, about 7 min")
        #expect(rendered.url == "https://coffee.example/orders/A17")
        #expect(rendered.compactTrailing?.url == "https://coffee.example/orders/A17")
        #expect(rendered.expandedBottom?.url == "https://coffee.example/orders/A17/help")
        #expect(rendered.keylineTint == LayoutColor(red: 0x6F, green: 0x4E, blue: 0x37))
        #expect(rendered.chip == "Coffee")

        let onTheWay = LayoutRenderer(
            attributes: attributes, state: try jsonObject(#"{"stage": "onTheWay", "stageTitle": "On the way", "etaMinutes": 3}"#), now: t0)
        expectView(onTheWay.render(layout).minimal, .symbol("🛵"))
        expectText(onTheWay.render(layout).lockScreen, "Blue Bottle · order A17 · On the way, about 3 min")
    }

    @Test func fastingPercent() throws {
        let layout = try Layout(
            text: #"""
                {
                  "compactLeading": {"type": "symbol", "name": "⏳"},
                  "compactTrailing": {"type": "text", "template": "{{state.percent}}%"},
                  "minimal": {"type": "progress", "value": "{{state.percent}}", "total": 100},
                  "lockScreen": {"type": "vstack", "children": [
                    {"type": "text", "template": "Fasting {{attributes.plan}}"},
                    {"type": "progress", "value": "{{state.percent}}", "total": 100},
                    {"type": "timer", "from": "{{attributes.startedAt}}", "to": "{{attributes.goalAt}}", "countsDown": false}
                  ]}
                }
                """#)
        let attributes: JSONObject = ["plan": "16:8", "startedAt": .double(t0), "goalAt": .double(t0 + 16 * 3600)]
        let renderer = LayoutRenderer(attributes: attributes, state: ["percent": 62], now: t0 + 10 * 3600 + 5)
        let rendered = renderer.render(layout)
        expectText(rendered.compactTrailing, "62%")
        guard case .progress(let minimal)? = rendered.minimal?.view else { Issue.record("minimal is not a progress"); return }
        #expect(minimal.fraction == 0.62)
        expectText(rendered.lockScreen, "Fasting 16:8 · 62% · 10:00:05")
    }

    @Test func pomodoroCountdown() throws {
        let layout = try Layout(
            text: #"""
                {
                  "compactLeading": {"type": "symbol", "name": "🍅"},
                  "compactTrailing": {"type": "timer", "to": "{{state.endsAt}}"},
                  "minimal": {"type": "progress", "from": "{{state.startedAt}}", "to": "{{state.endsAt}}"},
                  "lockScreen": {"type": "hstack", "children": [
                    {"type": "text", "template": "{{state.phase}} · round {{state.round}} of {{attributes.rounds}}"},
                    {"type": "spacer"},
                    {"type": "timer", "from": "{{state.startedAt}}", "to": "{{state.endsAt}}", "countsDown": true}
                  ]},
                  "expanded": {
                    "center": {"priority": 1, "type": "text", "template": "{{attributes.task}}"},
                    "bottom": {"priority": 0, "type": "hstack", "children": [
                      {"type": "button", "action": "pause", "label": "Pause", "symbol": "media-playback-pause"},
                      {"type": "button", "action": "skip", "label": "Skip {{state.phase}}"}
                    ]}
                  },
                  "url": "x-pomodoro://session/{{attributes.session}}"
                }
                """#)
        let attributes: JSONObject = ["task": "Write report", "rounds": 4, "session": "s1"]
        let state: JSONObject = ["phase": "Focus", "round": 2, "startedAt": .double(t0), "endsAt": .double(t0 + 1500)]
        let rendered = LayoutRenderer(attributes: attributes, state: state, now: t0 + 300).render(layout)
        expectText(rendered.compactTrailing, "20:00")
        expectText(rendered.lockScreen, "Focus · round 2 of 4 20:00")
        expectView(
            rendered.expandedBottom,
            .hstack(
                [
                    .button(action: "pause", label: "Pause", symbol: "media-playback-pause"),
                    .button(action: "skip", label: "Skip Focus", symbol: nil),
                ], spacing: nil))
        guard case .progress(let minimal)? = rendered.minimal?.view else { Issue.record("minimal is not a progress"); return }
        #expect(minimal.fraction == 0.2)
        #expect(rendered.url == "x-pomodoro://session/s1")
    }

    @Test func flightBoardingInFlightAndLanded() throws {
        let status = #"{"type": "symbol", "name": "{{state.status}}", "names": {"boarding": "🎫", "inFlight": "✈️", "landed": "🛬"}}"#
        let layout = try Layout(
            text: """
                {
                  "compactLeading": \(status),
                  "compactTrailing": {"type": "text",
                    "template": "{{#state.boarding}}Gate {{state.gate}}{{/state.boarding}}{{#state.inFlight}}ETA {{state.eta}}{{/state.inFlight}}{{#state.landed}}Landed{{/state.landed}}"},
                  "minimal": \(status),
                  "lockScreen": {"type": "vstack", "children": [
                    {"type": "text", "template": "{{attributes.flight}} {{attributes.origin}} → {{attributes.destination}}"},
                    {"type": "progress", "from": "{{state.departedAt}}", "to": "{{state.arrivesAt}}",
                     "points": [{"position": 1, "color": "#FFFFFF"}]},
                    {"type": "text", "template": "{{#state.boarding}}Boarding at gate {{state.gate}}{{/state.boarding}}{{#state.inFlight}}Arrives {{state.eta}}{{/state.inFlight}}{{#state.landed}}Landed · baggage belt {{state.belt}}{{/state.landed}}"}
                  ]}
                }
                """)
        let attributes: JSONObject = ["flight": "LH 454", "origin": "FRA", "destination": "SFO"]
        let departed = t0, arrives = t0 + 11 * 3600

        let boarding = LayoutRenderer(attributes: attributes, state: ["status": "boarding", "boarding": true, "gate": "B44"], now: t0 - 1200).render(layout)
        expectView(boarding.compactLeading, .symbol("🎫"))
        expectText(boarding.compactTrailing, "Gate B44")
        expectText(boarding.lockScreen, "LH 454 FRA → SFO · 0% · Boarding at gate B44")

        let inFlightState: JSONObject = [
            "status": "inFlight", "inFlight": true, "eta": "14:05", "departedAt": .double(departed), "arrivesAt": .double(arrives),
        ]
        let inFlight = LayoutRenderer(attributes: attributes, state: inFlightState, now: t0 + 5.5 * 3600).render(layout)
        expectView(inFlight.compactLeading, .symbol("✈️"))
        expectText(inFlight.compactTrailing, "ETA 14:05")
        expectText(inFlight.lockScreen, "LH 454 FRA → SFO · 50% · Arrives 14:05")

        let landedState: JSONObject = ["status": "landed", "landed": true, "belt": 7, "departedAt": .double(departed), "arrivesAt": .double(arrives)]
        let landed = LayoutRenderer(attributes: attributes, state: landedState, now: arrives + 600).render(layout)
        expectView(landed.minimal, .symbol("🛬"))
        expectText(landed.compactTrailing, "Landed")
        expectText(landed.lockScreen, "LH 454 FRA → SFO · 100% · Landed · baggage belt 7")
    }

    @Test func foodDeliveryWithProgressBarAndMinutesLeft() throws {
        let layout = try Layout(
            text: #"""
                {
                  "compactLeading": {"type": "symbol", "name": "🍕"},
                  "compactTrailing": {"type": "text", "template": "{{state.minutesLeft}} min"},
                  "minimal": {"type": "text", "template": "{{state.minutesLeft}}′"},
                  "lockScreen": {"type": "vstack", "children": [
                    {"type": "hstack", "children": [
                      {"type": "text", "template": "{{attributes.restaurant}}"},
                      {"type": "spacer"},
                      {"type": "text", "template": "{{state.minutesLeft}} min left"}
                    ]},
                    {"type": "progress", "value": "{{state.step}}", "total": 4,
                     "segments": [{"length": 1, "color": "#9E9E9E"}, {"length": 1, "color": "#FF9800"},
                                  {"length": 2, "color": "#4CAF50"}],
                     "points": [{"position": 1}, {"position": 2}, {"position": 4, "color": "#4CAF5080"}]},
                    {"type": "text", "template": "{{state.courier}} is on the way"}
                  ]},
                  "backgroundTint": "#1B1B1BE6",
                  "hideContentOnLockScreen": true
                }
                """#)
        let state: JSONObject = ["step": 3, "minutesLeft": 12, "courier": "Sam"]
        let rendered = LayoutRenderer(attributes: ["restaurant": "Pizza Place"], state: state, now: t0).render(layout)
        expectText(rendered.compactTrailing, "12 min")
        expectText(rendered.minimal, "12′")
        expectText(rendered.lockScreen, "Pizza Place 12 min left · 75% · Sam is on the way")
        #expect(rendered.hideContentOnLockScreen)
        #expect(rendered.backgroundTint == LayoutColor(red: 0x1B, green: 0x1B, blue: 0x1B, alpha: 0xE6))

        guard case .vstack(let rows, _)? = rendered.lockScreen?.view, case .progress(let bar) = rows[1] else {
            Issue.record("unexpected lock screen \(String(describing: rendered.lockScreen))"); return
        }
        #expect(bar.fraction == 0.75)
        #expect(bar.segments.map(\.start) == [0, 0.25, 0.5])
        #expect(bar.segments.map(\.end) == [0.25, 0.5, 1])
        #expect(bar.points.map(\.position) == [0.25, 0.5, 1])
        #expect(bar.points.last?.color == LayoutColor(hex: "#4CAF5080"))
    }
}
