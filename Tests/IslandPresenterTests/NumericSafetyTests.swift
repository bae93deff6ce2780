import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

/// Numbers a producer or a layout chooses, at the edges of what JSON and `Double` hold, through
/// every presenter sink (no value may crash a presenter: docs/design.md §6): no trap
/// (`Int(Double)` of an infinity or of 1e300 traps), no `nan` or `inf` in SVG, and percentages
/// and timers within their range.
@Suite struct NumericSafetyTests {
    static let extremes: [JSON] = [
        .double(1e300), .double(-1e300), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
        .double(1e-300), .double(-1e-300), .int(.max), .int(.min), .int(0), .double(-5),
    ]

    /// `{"endsAt": v}` needs no layout: the default layout makes it a countdown.
    @Test(arguments: extremes)
    func aDefaultLayoutsCountdown(_ value: JSON) async {
        for key in ["endsAt", "endDate", "progress", "percent", "value"] {
            var state: JSONObject = [key: value]
            if key == "value" { state["total"] = value }
            let item = Fixtures.item(id: "a", app: "org.example.Numbers", type: "T", state: state, layout: nil)
            for now in [Fixtures.now, -Double.greatestFiniteMagnitude, Double.greatestFiniteMagnitude] {
                let found = await SinkChecks.violations(item: item, now: now)
                #expect(found.isEmpty, "\(key)=\(value) at \(now): \(found)")
            }
        }
    }

    /// Timers, progress by value and by time range, segments and points, with every bound
    /// taken from the state, so each extreme meets each other.
    @Test(arguments: extremes)
    func everyMeasureOfALayout(_ value: JSON) async {
        let layout: JSON = [
            "compactLeading": ["type": "timer", "to": "{{state.v}}", "countsDown": true],
            "compactTrailing": ["type": "timer", "from": "{{state.v}}", "to": "{{state.w}}"],
            "minimal": ["type": "progress", "value": "{{state.v}}", "total": "{{state.w}}"],
            "lockScreen": [
                "type": "vstack",
                "children": [
                    ["type": "progress", "from": "{{state.v}}", "to": "{{state.w}}"],
                    [
                        "type": "progress", "value": "{{state.v}}", "total": 0.000001,
                        "segments": [["length": 1.7e308], ["length": 1.7e308], ["length": 1e-300]],
                        "points": [["position": 1.7e308], ["position": 0], ["position": 1e-300]],
                    ],
                    ["type": "timer", "from": "{{state.w}}", "to": "{{state.v}}"],
                ],
            ],
            "expanded": [
                "bottom": [
                    "type": "progress", "value": "{{state.w}}", "total": "{{state.v}}",
                    "points": [["position": 1e308]], "priority": 0,
                ]
            ],
        ]
        for other in Self.extremes {
            let item = Fixtures.item(id: "a", app: "org.example.Numbers", type: "T", state: ["v": value, "w": other], layout: layout)
            #expect(PresenterItem(json: item)?.defaultLayout == false, "the layout is valid")
            let found = await SinkChecks.violations(item: item, now: Fixtures.now)
            #expect(found.isEmpty, "v=\(value) w=\(other): \(found)")
            // What bars show as numbers stays in range.
            let scene = IslandScene(model: SinkChecks.model(item: item, island: SinkChecks.islands[1].1), now: Fixtures.now)
            if let percentage = try? JSONParser.parse(Array(BarFormat.waybar.line(for: scene).utf8)).objectValue?["percentage"]?.intValue {
                #expect((0...100).contains(percentage))
            }
        }
    }

    @Test func timersClampWhatTheyShow() {
        let longest = RenderedTimer(from: nil, to: 1e300, countsDown: true, seconds: .infinity)
        #expect(longest.text == "99999:59:59")
        #expect(RenderedTimer(from: nil, to: nil, countsDown: true, seconds: .nan).text == "")
        #expect(RenderedTimer(from: nil, to: nil, countsDown: true, seconds: -1e300).text == "0:00")
        #expect(RenderedTimer(from: nil, to: nil, countsDown: false, seconds: 3_725).text == "1:02:05")
    }

    /// Segments whose lengths add up past `Double`'s range keep their proportions.
    @Test func hugeSegmentsKeepTheirProportions() throws {
        let layout = try Layout(json: [
            "lockScreen": [
                "type": "progress", "value": 1, "total": 2,
                "segments": [["length": 1.5e308], ["length": 1.5e308]],
                "points": [["position": 1.5e308]],
            ]
        ])
        let rendered = LayoutRenderer(attributes: [:], state: [:], now: 0).render(layout)
        let progress = try #require(rendered.lockScreen?.view.firstProgress)
        #expect(progress.segments.map(\.start) == [0, 0.5])
        #expect(progress.segments.map(\.end) == [0.5, 1])
        #expect(progress.points.map(\.position) == [0.5])
    }
}
