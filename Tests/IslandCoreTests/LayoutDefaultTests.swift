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
        #expect(layout.compactLeading?.view == .text("Pizza Delivery"))
        #expect(layout.compactTrailing?.text == "Preparing")
        #expect(layout.minimal?.text == "Preparing")
        // A status (`stage`) needs no label.
        #expect(layout.lockScreen?.text == "Pizza Delivery · Preparing · Eta minutes: 12 · Courier: Sam")
        #expect(layout.expandedCenter?.text == "Pizza Delivery")
        #expect(layout.expandedTrailing?.text == "Preparing")
        // Trailing shows the status: below, the values after it.
        #expect(layout.expandedBottom?.text == "Eta minutes: 12 · Courier: Sam · Rating: 4.5")
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
        #expect(layout.expandedBottom?.text == "ubuntu-24.04.iso · canonical/ubuntu · Remaining: 12")
        #expect(layout.lockScreen?.text == "Download · ubuntu-24.04.iso · canonical/ubuntu · Downloading · Remaining: 12 · 40%")
        // A count of what is left is no time: no alarm clock, no "12 s".
        #expect(layout.compactLeading?.view == .progress(RenderedProgress(fraction: 0.4)))
        for region in [layout.compactLeading, layout.compactTrailing, layout.minimal, layout.lockScreen, layout.expandedBottom] {
            #expect(!(region?.text.contains("alarm") ?? false) && !(region?.text.contains("12 s") ?? false))
        }
        // Beside other time, `remaining` is time again (`island timer` paused).
        let paused = rendered(attributes: ["title": "Tea", "duration": 300], state: ["paused": true, "remaining": 42])
        #expect(paused.compactTrailing?.text == "42 s")
    }

    @Test func anAttributeRepeatingTheTitleIsNotShownAgain() {
        // `island run make`: its title is the command line.
        let layout = rendered(attributes: ["title": "make -j8", "command": "make -j8"], state: ["status": "running"])
        #expect(layout.lockScreen?.text == "utilities-terminal-symbolic make -j8 · Running")
    }

    @Test func fractionProgress() {
        let layout = rendered(state: ["progress": 0.4, "status": "Uploading"])
        // The bar leads (a ring where there is room), with no clock symbol.
        #expect(layout.compactLeading?.view == .progress(RenderedProgress(fraction: 0.4)))
        #expect(layout.compactTrailing?.text == "Uploading")
        #expect(layout.minimal?.text == "40%")
        #expect(layout.lockScreen?.text == "Pizza Delivery · Uploading · 40%")
        #expect(layout.expandedLeading?.text == "40%")
        #expect(layout.expandedTrailing?.text == "Uploading")
        // Leading shows the bar, trailing the status: nothing is left to repeat below.
        #expect(layout.expandedBottom == nil)
    }

    @Test func percentAndFractionAreNotGuessedFromValues() {
        #expect(rendered(state: ["percent": 30]).compactLeading?.text == "30%")
        #expect(rendered(state: ["percent": 1]).compactLeading?.text == "1%")
        #expect(rendered(state: ["progress": 1]).compactLeading?.text == "100%")
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
        #expect(layout.compactLeading?.text == "25%")
        #expect(layout.compactTrailing?.text == "a.iso")
        #expect(layout.lockScreen?.text == "Pizza Delivery · File: a.iso · 25%")
    }

    @Test func endTimeCountsDown() {
        let layout = rendered(state: ["endsAt": 1000, "phase": "Focus"], now: 400)
        #expect(layout.compactLeading?.view == .symbol("alarm-symbolic"))
        #expect(layout.compactTrailing?.text == "10:00")
        #expect(layout.minimal?.text == "10:00")
        #expect(layout.expandedBottom?.text == "Focus")
    }

    @Test func titleFromAttributes() {
        #expect(rendered(attributes: ["title": "Build #42"], state: [:]).lockScreen?.text == "Build #42")
        #expect(rendered(attributes: ["name": "Standup"], state: [:]).expandedCenter?.text == "Standup")
        #expect(rendered(attributes: ["title": 3, "name": "Named"], state: [:]).expandedCenter?.text == "Named")
        #expect(rendered(state: ["title": "From state", "x": 1]).expandedCenter?.text == "From state")
    }

    @Test func emptyStateShowsTheTitle() {
        let layout = rendered(type: "org.example.build_status", state: [:])
        #expect(layout.compactLeading?.text == "Build Status")
        #expect(layout.compactTrailing == nil)
        #expect(layout.lockScreen?.text == "Build Status")
        #expect(layout.expandedTrailing == nil)
        #expect(layout.expandedBottom == nil)
    }

    @Test func symbolFromStateOrAttributes() {
        #expect(rendered(attributes: ["symbol": "🚕"], state: [:]).compactLeading?.view == .symbol("🚕"))
        #expect(rendered(attributes: ["symbol": "🚕"], state: ["symbol": "🚗"]).compactLeading?.view == .symbol("🚗"))
    }

    @Test func keysATemplateCannotNameAreSkipped() {
        let layout = rendered(state: ["a.b": "dotted", "{{x}}": "braced", "ok_key": "shown"])
        #expect(layout.compactTrailing?.text == "shown")
    }

    @Test func readableTypeNames() {
        #expect(rendered(type: "", state: [:]).compactLeading?.text == "Activity")
        #expect(rendered(type: "DeliveryAttributes", state: [:]).compactLeading?.text == "Delivery")
        #expect(rendered(type: "Attributes", state: [:]).compactLeading?.text == "Attributes")
        #expect(rendered(type: "{{evil}}", state: [:]).compactLeading?.text == "Evil")
    }

    @Test func defaultLayoutIsAValidDocument() throws {
        let layout = Layout.default(for: "Timer", state: ["endsAt": 5, "label": "Tea"])
        #expect(try Layout(json: .object(layout.json)) == layout)
        #expect(layout.compactLeading != nil && layout.lockScreen != nil && !layout.expanded.isEmpty)
    }
}
