import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite struct LayoutDefaultTests {
    private func rendered(type: String = "PizzaDeliveryAttributes", attributes: JSONObject = [:], state: JSONObject, now: Double = 0) -> RenderedLayout {
        let layout = Layout.default(for: type, attributes: attributes, state: state)
        return LayoutRenderer(attributes: attributes, state: state, now: now).render(layout)
    }

    @Test func firstStateValueInCompactAndPairsOnTheLockScreen() {
        let state: JSONObject = ["stage": "Preparing", "etaMinutes": 12, "courier": "Sam", "rating": 4.5, "items": ["pizza"]]
        let layout = rendered(state: state)
        // No symbol fits a shape with no time, progress or command in it: the title leads.
        expectView(layout.compactLeading, .text("Pizza Delivery"))
        expectText(layout.compactTrailing, "Preparing")
        expectText(layout.minimal, "Preparing")
        // A status (`stage`) needs no label.
        expectText(layout.lockScreen, "Pizza Delivery · Preparing · Eta minutes: 12 · Courier: Sam")
        expectText(layout.expandedCenter, "Pizza Delivery")
        expectText(layout.expandedTrailing, "Preparing")
        // Trailing shows the status: below, the values after it.
        expectText(layout.expandedBottom, "Eta minutes: 12 · Courier: Sam · Rating: 4.5")
    }

    /// A download as a newcomer's first app sends it: each thing said once in the expanded
    /// form, the file and the repository shown, and no alarm clock for what is not time.
    @Test func theExpandedFormSaysEachThingOnceAndShowsTheAttributes() {
        let attributes: JSONObject = [
            "title": "Download", "file": "ubuntu-24.04.iso", "repository": "canonical/ubuntu",
            "notes": .string(String(repeating: "long ", count: 20)), "size": 6_000_000_000,
        ]
        let state: JSONObject = ["status": "Downloading", "percent": 40, "remaining": 12]
        let layout = rendered(attributes: attributes, state: state)
        let expanded = [layout.expandedLeading, layout.expandedCenter, layout.expandedTrailing, layout.expandedBottom]
            .compactMap { $0?.text }.joined(separator: " | ")
        #expect(expanded.components(separatedBy: "Downloading").count == 2, "\(expanded)")
        #expect(expanded.components(separatedBy: "40%").count == 2, "\(expanded)")
        expectText(layout.expandedBottom, "ubuntu-24.04.iso · canonical/ubuntu · Remaining: 12")
        expectText(layout.lockScreen, "Download · ubuntu-24.04.iso · canonical/ubuntu · Downloading · Remaining: 12 · 40%")
        // A count of what is left is no time: no alarm clock, no "12 s".
        expectView(layout.compactLeading, .progress(RenderedProgress(fraction: 0.4)))
        for region in [layout.compactLeading, layout.compactTrailing, layout.minimal, layout.lockScreen, layout.expandedBottom] {
            #expect(!(region?.text.contains("alarm") ?? false) && !(region?.text.contains("12 s") ?? false))
        }
        // Beside other time, `remaining` is time again (`island timer` paused).
        let paused = rendered(attributes: ["title": "Tea", "duration": 300], state: ["paused": true, "remaining": 42])
        expectText(paused.compactTrailing, "42 s")
    }

    @Test func anAttributeRepeatingTheTitleIsNotShownAgain() {
        // `island run make`: its title is the command line.
        let layout = rendered(attributes: ["title": "make -j8", "command": "make -j8"], state: ["status": "running"])
        expectText(layout.lockScreen, "utilities-terminal-symbolic make -j8 · Running")
    }

    @Test func fractionProgress() {
        let layout = rendered(state: ["progress": 0.4, "status": "Uploading"])
        // The bar leads (a ring where there is room), with no clock symbol.
        expectView(layout.compactLeading, .progress(RenderedProgress(fraction: 0.4)))
        expectText(layout.compactTrailing, "Uploading")
        expectText(layout.minimal, "40%")
        expectText(layout.lockScreen, "Pizza Delivery · Uploading · 40%")
        expectText(layout.expandedLeading, "40%")
        expectText(layout.expandedTrailing, "Uploading")
        // Leading shows the bar, trailing the status: nothing is left to repeat below.
        #expect(layout.expandedBottom == nil)
    }

    @Test func percentAndFractionAreNotGuessedFromValues() {
        expectText(rendered(state: ["percent": 30]).compactLeading, "30%")
        expectText(rendered(state: ["percent": 1]).compactLeading, "1%")
        expectText(rendered(state: ["progress": 1]).compactLeading, "100%")
        // The same layout for every value of an activity.
        #expect(Layout.default(for: "T", state: ["progress": 0.2]) == Layout.default(for: "T", state: ["progress": 1]))
    }

    @Test func theDefaultLayoutIsKnownUnchangedOnlyWhenItIs() {
        let states: [JSONObject] = [
            [:], ["stage": "ordered"], ["stage": "brewing"], ["stage": 3], ["stage": "ready", "minutes": 2],
            ["minutes": 2, "stage": "ready"], ["progress": 0.5], ["progress": 1], ["progress": "half"],
            ["title": "Build", "progress": 0.2], ["title": 7, "progress": 0.2], ["value": 1, "total": 4],
            ["endsAt": 1_800_000_000.0], ["endsAt": "soon"], ["items": ["pizza"]], ["items": [:]], ["symbol": "cup"],
        ]
        func unchanged(_ a: JSONObject, _ b: JSONObject) -> Bool {
            let (keyA, keyB) = (
                Layout.defaultLayoutKey(stateText: JSON.object(a).serialized()),
                Layout.defaultLayoutKey(stateText: JSON.object(b).serialized())
            )
            return keyA != nil && keyA == keyB
        }
        var kept = 0
        for a in states {
            for b in states where unchanged(a, b) {
                kept += 1
                // The shortcut may miss an equal layout, never claim one that differs.
                #expect(Layout.default(for: "T", state: a) == Layout.default(for: "T", state: b), "\(a) → \(b)")
            }
        }
        #expect(kept > states.count, "values that change alone keep the layout")
        #expect(unchanged(["stage": "ordered"], ["stage": "brewing"]))
        #expect(unchanged(["progress": 0.5], ["progress": 0.75]))
        // A whole double is written as an integer: numbers are one kind to the default layout.
        #expect(unchanged(["progress": 0.5], ["progress": 1]))
        #expect(!unchanged(["stage": "ordered"], ["stage": "ready", "minutes": 2]))
        #expect(!unchanged(["progress": 0.5], ["progress": "half"]))
        #expect(!unchanged(["title": "Build"], ["title": 7]))
    }

    @Test func everyShapeGivesACompleteLayout() {
        let shapes: [JSONObject] = [
            [:], ["a": nil], ["list": [1, 2]], ["nested": ["x": 1]], ["progress": "half"], ["value": 1],
            ["endsAt": "tomorrow"], ["title": 5, "symbol": 3], ["ünïcode": "x"], ["a": 1, "b": 2, "c": 3, "d": 4, "e": 5],
        ]
        for state in shapes {
            let layout = Layout.default(for: "Shape", attributes: ["title": nil], state: state)
            #expect(layout.compactLeading != nil && layout.minimal != nil, "\(state)")
            #expect(layout.lockScreen != nil && layout.expanded.center != nil, "\(state)")
            // Compact shows the title alone only when the state has nothing to show.
            let showable = state.contains { key, value in
                !["title", "symbol"].contains(key) && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
                    && ["string", "int", "float", "bool"].contains(value.typeName)
            }
            #expect((layout.compactTrailing != nil) == showable, "\(state)")
        }
    }

    @Test func valueOutOfTotal() {
        let layout = rendered(state: ["value": 3, "total": 12, "file": "a.iso"])
        expectText(layout.compactLeading, "25%")
        expectText(layout.compactTrailing, "a.iso")
        expectText(layout.lockScreen, "Pizza Delivery · File: a.iso · 25%")
    }

    @Test func endTimeCountsDown() {
        let layout = rendered(state: ["endsAt": 1000, "phase": "Focus"], now: 400)
        expectView(layout.compactLeading, .symbol("alarm-symbolic"))
        expectText(layout.compactTrailing, "10:00")
        expectText(layout.minimal, "10:00")
        expectText(layout.expandedBottom, "Focus")
    }

    @Test func titleFromAttributes() {
        expectText(rendered(attributes: ["title": "Build #42"], state: [:]).lockScreen, "Build #42")
        expectText(rendered(attributes: ["name": "Standup"], state: [:]).expandedCenter, "Standup")
        expectText(rendered(attributes: ["title": 3, "name": "Named"], state: [:]).expandedCenter, "Named")
        expectText(rendered(state: ["title": "From state", "x": 1]).expandedCenter, "From state")
    }

    @Test func emptyStateShowsTheTitle() {
        let layout = rendered(type: "org.example.build_status", state: [:])
        expectText(layout.compactLeading, "Build Status")
        #expect(layout.compactTrailing == nil)
        expectText(layout.lockScreen, "Build Status")
        #expect(layout.expandedTrailing == nil)
        #expect(layout.expandedBottom == nil)
    }

    @Test func symbolFromStateOrAttributes() {
        expectView(rendered(attributes: ["symbol": "🚕"], state: [:]).compactLeading, .symbol("🚕"))
        expectView(rendered(attributes: ["symbol": "🚕"], state: ["symbol": "🚗"]).compactLeading, .symbol("🚗"))
    }

    @Test func keysATemplateCannotNameAreSkipped() {
        let layout = rendered(state: ["a.b": "dotted", "{{x}}": "braced", "ok_key": "shown"])
        expectText(layout.compactTrailing, "shown")
    }

    @Test func readableTypeNames() {
        expectText(rendered(type: "", state: [:]).compactLeading, "Activity")
        expectText(rendered(type: "DeliveryAttributes", state: [:]).compactLeading, "Delivery")
        expectText(rendered(type: "Attributes", state: [:]).compactLeading, "Attributes")
        expectText(rendered(type: "{{evil}}", state: [:]).compactLeading, "Evil")
    }

    @Test func defaultLayoutIsAValidDocument() throws {
        let layout = Layout.default(for: "Timer", state: ["endsAt": 5, "label": "Tea"])
        #expect(try Layout(json: .object(layout.json)) == layout)
        #expect(layout.compactLeading != nil && layout.lockScreen != nil && !layout.expanded.isEmpty)
    }
}
