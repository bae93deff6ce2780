import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// Template rendering is bounded in work and in output wherever it runs (docs/design.md §6): in
/// the daemon (a tap's URL) and in every presenter (each region's text). Sections nested over
/// one repeated array multiply, so these run templates that would otherwise do 3^10 or 3^16
/// passes, or produce hundreds of kilobytes.
@Suite struct LayoutRenderBudgetTests {
    /// `depth` sections over `state.a`, around `body`.
    static func nested(_ depth: Int, around body: String = "x") -> String {
        String(repeating: "{{#state.a}}", count: depth) + body + String(repeating: "{{/state.a}}", count: depth)
    }

    static let three: JSONObject = ["a": [1, 2, 3]]

    @Test func nestedSectionsRenderInFullWhileTheyAreSmall() throws {
        // 3^3 passes: far inside the budget, and rendered exactly.
        #expect(try LayoutTemplate(Self.nested(3)).render(attributes: [:], state: Self.three) == String(repeating: "x", count: 27))
    }

    @Test(arguments: [10, 16])
    func sectionsThatMultiplyStopAtTheWorkBudget(depth: Int) throws {
        // Unbounded, 3^10 passes print 59,049 x's and 3^16 run for minutes; bounded, what the
        // render produced before its work ran out is missing values, so it is shown as "…".
        let template = try LayoutTemplate(Self.nested(depth))
        #expect(template.render(attributes: [:], state: Self.three) == "…")
    }

    @Test func outputPastTheLimitIsCutOnACharacter() throws {
        // 100 passes of a 3,000-byte value: 300 KB unbounded, well within the work budget.
        let state: JSONObject = ["items": .array(Array(repeating: 1, count: 100)), "big": .string(String(repeating: "é", count: 1500))]
        let rendered = try LayoutTemplate("{{#state.items}}{{state.big}}{{/state.items}}").render(attributes: [:], state: state)
        #expect(rendered.utf8.count <= LayoutLimits.maximumRenderedBytes)
        #expect(rendered.utf8.count > LayoutLimits.maximumRenderedBytes - 8)
        #expect(rendered.hasSuffix("…"))
        #expect(rendered.dropLast().allSatisfy { $0 == "é" })
    }

    @Test func repeatingTheCurrentValueIsCharged() throws {
        // `{{.}}` inside a string's section needs no lookup; each one is charged all the same.
        let state: JSONObject = ["s": .string(String(repeating: "y", count: 4000)), "items": .array(Array(repeating: 1, count: 50))]
        let body = "{{#state.s}}" + String(repeating: "{{.}}", count: 400) + "{{/state.s}}"
        let rendered = try LayoutTemplate("{{#state.items}}\(body){{/state.items}}").render(attributes: [:], state: state)
        #expect(rendered == "…")
    }

    @Test func aURLThatRunsOutOfWorkOrIsTooLongIsNotOpened() throws {
        let state: JSONObject = ["a": [1, 2, 3], "long": .string(String(repeating: "p", count: 5000))]
        let renderer = LayoutRenderer(attributes: [:], state: state, now: 0)
        #expect(renderer.resolve(try LayoutURL("https://example.org/" + Self.nested(16))) == nil)
        #expect(LayoutRenderer(attributes: [:], state: state, now: 0).resolve(try LayoutURL("https://example.org/{{state.long}}")) == nil)
        #expect(
            LayoutRenderer(attributes: [:], state: state, now: 0).resolve(try LayoutURL("https://example.org/" + Self.nested(2))) == "https://example.org/"
                + String(repeating: "x", count: 9))
    }

    @Test func aLayoutsViewsShareOneBudget() throws {
        // Each view alone is within the budget; 60 of them together are not.
        let state: JSONObject = ["items": .array(Array(repeating: 1, count: 100)), "big": .string(String(repeating: "z", count: 3000))]
        let view: JSON = ["type": "text", "template": "{{#state.items}}{{state.big}}{{/state.items}}"]
        let layout = try Layout(json: ["lockScreen": ["type": "vstack", "children": .array(Array(repeating: view, count: 60))]])
        let rendered = LayoutRenderer(attributes: [:], state: state, now: 0).render(layout)
        guard case .vstack(let children, _) = try #require(rendered.lockScreen).view else {
            Issue.record("not a stack")
            return
        }
        let finished = children.filter { $0.plainText != "…" }
        #expect(children.count == 60)
        #expect(!finished.isEmpty && finished.count < 10)
    }

    @Test func valuesKeepWhatTemplatesSeeOfThem() throws {
        let state: JSONObject = [
            "name": "ada", "items": [["n": 1], ["n": 2.0], nil, ["n": 3.5]], "tags": ["a", "b"], "empty": [], "flag": true,
        ]
        func render(_ template: String) throws -> String {
            try LayoutTemplate(template).render(attributes: ["id": 7], state: state)
        }
        #expect(try render("{{#state.items}}{{n}},{{/state.items}}") == "1,2,,3.5,")
        #expect(try render("{{#state.tags}}{{.}}{{^last()}}+{{/last()}}{{/state.tags}}") == "a+b")
        #expect(try render("{{#state.tags}}{{index()}}{{/state.tags}}") == "01")
        #expect(try render("{{uppercased(state.name)}} {{count(state.items)}} {{first(state.tags)}} {{last(state.tags)}}") == "ADA 4 a b")
        #expect(try render("{{#reversed(state.tags)}}{{.}}{{/reversed(state.tags)}}") == "ba")
        #expect(try render("{{^state.empty}}none{{/state.empty}}{{#empty(state.empty)}}!{{/empty(state.empty)}}") == "none!")
        #expect(try render("{{#state.flag}}{{attributes.id}}{{/state.flag}}{{#state.name}}{{.}}{{/state.name}}") == "7ada")
        #expect(try render("{{state.tags}} {{state.items.0}}") == #"["a","b"] "#)
        // The values' own fields are not members a template can reach.
        #expect(try render("{{state.name.string}}{{state.name.budget}}{{state.tags.elements}}{{state.budget}}") == "")
    }
}
