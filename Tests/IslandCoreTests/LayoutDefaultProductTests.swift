import Foundation
import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// The default layout reads like a product (docs/design.md §10): what `island timer`, `run`,
/// `progress` and `start` send is shown in words, times and symbols, never as a dump of the state.
@Suite struct LayoutDefaultProductTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func rendered(
        type: String, attributes: JSONObject = [:], state: JSONObject, now: Double,
        timeZone: TimeZone? = nil
    ) -> RenderedLayout {
        let layout = Layout.default(for: type, attributes: attributes, state: state)
        return LayoutRenderer(attributes: attributes, state: state, now: now, timeZone: timeZone ?? utc).render(layout)
    }

    /// Every region's text, for what must appear in none of them.
    private func everything(_ layout: RenderedLayout) -> String {
        [
            layout.lockScreen, layout.compactLeading, layout.compactTrailing, layout.minimal, layout.expandedLeading,
            layout.expandedTrailing, layout.expandedCenter, layout.expandedBottom,
        ].compactMap { $0?.text }.joined(separator: "\n")
    }

    @Test func aTimerCountsDownPausesAndEnds() {
        let attributes: JSONObject = ["title": "Focus", "duration": 1500]
        let running = rendered(type: "Timer", attributes: attributes, state: ["endsAt": 1000, "paused": false], now: 400)
        expectView(running.compactLeading, .symbol("alarm-symbolic"))
        expectText(running.compactTrailing, "10:00")
        expectText(running.lockScreen, "alarm-symbolic Focus · 10:00")

        // What `island timer` sends while paused: no end, the time left.
        let paused = rendered(type: "Timer", attributes: attributes, state: ["paused": true, "remaining": 42.1], now: 400)
        expectView(paused.compactLeading, .symbol("media-playback-pause-symbolic"))
        expectText(paused.compactTrailing, "42 s")
        expectText(paused.lockScreen, "media-playback-pause-symbolic Focus · Remaining: 42 s · Paused")

        let done = rendered(type: "Timer", attributes: attributes, state: ["endsAt": 1000, "paused": false, "done": true], now: 1200)
        expectView(done.compactLeading, .symbol("emblem-ok-symbolic"))
        expectText(done.lockScreen, "emblem-ok-symbolic Focus · Done · 0:00")
        for layout in [running, paused, done] {
            #expect(!everything(layout).contains("true") && !everything(layout).contains("false"), "\(everything(layout))")
        }
    }

    @Test func aCommandRunsThenSucceedsOrFails() {
        let attributes: JSONObject = ["title": "make", "command": "make"]
        let running = rendered(type: "Command", attributes: attributes, state: ["status": "running", "startedAt": 1000], now: 1042)
        expectView(running.compactLeading, .symbol("utilities-terminal-symbolic"))
        // The time since it started, ticking.
        expectView(running.compactTrailing, .timer(RenderedTimer(from: 1000, to: nil, countsDown: false, seconds: 42)))
        expectText(running.lockScreen, "utilities-terminal-symbolic make · Running · 0:42")

        let ended: JSONObject = ["status": "succeeded", "exitStatus": 0, "startedAt": 1000, "duration": 42.5]
        let succeeded = rendered(type: "Command", attributes: attributes, state: ended, now: 1100)
        expectView(succeeded.compactLeading, .symbol("emblem-ok-symbolic"))
        expectText(succeeded.compactTrailing, "Succeeded")
        // 1000 s after the epoch is 00:16 UTC of that same day.
        expectText(succeeded.lockScreen, "emblem-ok-symbolic make · Succeeded · Duration: 42 s · Started at 00:16")

        var failedState = ended
        failedState["status"] = "failed"
        failedState["exitStatus"] = 2
        let failed = rendered(type: "Command", attributes: attributes, state: failedState, now: 1100)
        expectView(failed.compactLeading, .symbol("dialog-error-symbolic"))
        expectText(failed.compactTrailing, "Failed")
        #expect(!everything(succeeded).contains("1000") && !everything(failed).contains("42.5"))
    }

    @Test func progressIsABarWithoutAClock() {
        let attributes: JSONObject = ["title": "Build"]
        let running = rendered(type: "Progress", attributes: attributes, state: ["value": 3, "total": 4], now: 0)
        expectView(running.compactLeading, .progress(RenderedProgress(fraction: 0.75)))
        expectText(running.compactTrailing, "Build")
        expectText(running.minimal, "75%")
        expectText(running.lockScreen, "Build · 75%")
        let ended = rendered(type: "Progress", attributes: attributes, state: ["value": 4, "total": 4, "status": "succeeded"], now: 0)
        expectText(ended.compactTrailing, "Succeeded")
        expectText(ended.lockScreen, "Build · Succeeded · 100%")
        for layout in [running, ended] {
            let symbols = [layout.compactLeading, layout.minimal, layout.expandedLeading].compactMap { $0?.view }
            #expect(!symbols.contains { if case .symbol = $0 { true } else { false } })
        }
    }

    @Test func aStartedActivityReadsLikeOne() {
        let layout = rendered(type: "Demo", state: ["step": 1], now: 0)
        expectText(layout.compactLeading, "Demo")
        expectText(layout.compactTrailing, "1")
        expectText(layout.lockScreen, "Demo · Step: 1")
    }

    @Test func aStatusIsNotRepeatedByItsFlag() {
        let state: JSONObject = ["status": "inFlight", "inFlight": true, "eta": "14:05", "departedAt": 1_795_581_885.575529]
        let layout = rendered(type: "Flight", state: state, now: 1_795_581_900)
        expectText(layout.compactTrailing, "In flight")
        expectText(layout.lockScreen, "Flight · In flight · Departed at 04:44 · Eta: 14:05")
        #expect(!everything(layout).contains("true") && !everything(layout).contains("1795581885"))
    }

    @Test func flagsShowTheirNameOnlyWhileTrueAndNeverLeaveASeparator() {
        func lock(_ state: JSONObject) -> String? { rendered(type: "Job", state: state, now: 0).lockScreen?.text }
        #expect(lock(["urgent": false, "waitingForReview": true]) == "Job · Waiting for review")
        #expect(lock(["urgent": true, "waitingForReview": true]) == "Job · Urgent · Waiting for review")
        #expect(lock(["urgent": true, "waitingForReview": false]) == "Job · Urgent")
        #expect(lock(["urgent": false, "waitingForReview": false]) == "Job")
        #expect(lock(["owner": "Sam", "urgent": true]) == "Job · Owner: Sam · Urgent")
    }

    @Test func everyFlagAtOnceStillMakesAValidLayoutAndTheFirstWins() {
        var state: JSONObject = ["endsAt": 100, "exitStatus": 3]
        for key in ["paused", "done", "finished", "completed", "succeeded", "cancelled", "canceled", "failed", "error"] {
            state[key] = true
        }
        let layout = Layout.default(for: "Job", state: state)
        #expect(layout.compactLeading != nil && layout != Layout.default(for: "Job", state: [:]))
        // A non-zero exit status is checked first, then `failed`.
        expectView(rendered(type: "Job", state: state, now: 0).compactLeading, .symbol("dialog-error-symbolic"))
        state["exitStatus"] = 0
        expectView(rendered(type: "Job", state: state, now: 0).compactLeading, .symbol("emblem-ok-symbolic"))
        state["exitStatus"] = nil
        expectView(rendered(type: "Job", state: state, now: 0).compactLeading, .symbol("dialog-error-symbolic"))
        state["failed"] = false
        state["error"] = false
        expectView(rendered(type: "Job", state: state, now: 0).compactLeading, .symbol("process-stop-symbolic"))
    }

    @Test func datesAreTimesInTheGivenZone() {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let at = 1_795_581_885.575529  // 2026-11-25 04:44:45 UTC
        func started(now: Double, zone: TimeZone) -> String? {
            rendered(type: "Job", state: ["startedAt": .double(at), "duration": 5], now: now, timeZone: zone).lockScreen?.text
        }
        #expect(started(now: at + 60, zone: utc) == "Job · Duration: 5 s · Started at 04:44")
        #expect(started(now: at + 60, zone: berlin) == "Job · Duration: 5 s · Started at 05:44")
        // Another day shows its day, another year its year too.
        #expect(started(now: at + 86_400, zone: utc) == "Job · Duration: 5 s · Started at 25 Nov 04:44")
        #expect(started(now: at + 400 * 86_400, zone: utc) == "Job · Duration: 5 s · Started at 25 Nov 2026 04:44")
    }
}

/// The template transforms the default layout writes with, available to every layout.
@Suite struct LayoutTransformTests {
    private func render(_ template: String, _ state: JSONObject, now: Double = 0) throws -> String {
        let layout = try Layout(json: ["compactTrailing": ["type": "text", "template": .string(template)]])
        let renderer = LayoutRenderer(attributes: [:], state: state, now: now, timeZone: TimeZone(identifier: "UTC")!)
        return renderer.render(layout).compactTrailing?.text ?? "(none)"
    }

    @Test func durations() throws {
        let cases: [(JSON, String)] = [
            (2.54, "2.5 s"), (3, "3 s"), (0, "0 s"), (42.9, "42 s"), (303, "5:03"), (3723, "1:02:03"),
            (-1, ""), (1e300, "99999:59:59"),
        ]
        for (value, text) in cases {
            #expect(try render("{{duration(state.x)}}", ["x": value]) == text, "\(value)")
        }
    }

    @Test func times() throws {
        #expect(try render("{{time(state.x)}}", ["x": .int(3600 * 14 + 300)], now: 100) == "14:05")
        #expect(try render("{{time(state.x)}}", ["x": 1e300]) == "")
        #expect(try render("{{time(state.x)}}", ["x": "soon"]) == "")
    }

    @Test func words() throws {
        let cases = [
            ("inFlight", "In flight"), ("on_the_way", "On the way"), ("running", "Running"), ("Sam", "Sam"),
            ("LH 454", "LH 454"), ("b44", "B44"), ("", ""), ("élan", "élan"),
        ]
        for (value, text) in cases {
            #expect(try render("{{humanized(state.x)}}", ["x": .string(value)]) == text)
        }
    }

    @Test func numbersRenderAsBeforeAndIntegerTransformsCannotOverflow() throws {
        #expect(try render("{{state.a}} {{state.b}} {{state.c}}", ["a": 12, "b": 12.0, "c": 0.5]) == "12 12 0.5")
        #expect(try render("{{plusone(state.n)}}", ["n": .int(Int.max)]) == "")
        #expect(try render("{{minusone(state.n)}}", ["n": .int(Int.min)]) == "")
        #expect(try render("{{plusone(state.n)}}", ["n": 41]) == "42")
        #expect(try render("{{#equalzero(state.n)}}zero{{/equalzero(state.n)}}{{^equalzero(state.n)}}not{{/equalzero(state.n)}}", ["n": 0]) == "zero")
        #expect(try render("{{#equalzero(state.n)}}zero{{/equalzero(state.n)}}{{^equalzero(state.n)}}not{{/equalzero(state.n)}}", ["n": 3]) == "not")
        #expect(try render("{{#state.n}}[{{.}}]{{/state.n}}", ["n": 0]) == "[0]")
    }
}
