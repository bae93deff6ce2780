import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

@Suite struct BarFormatTests {
    typealias F = Fixtures

    func line(_ format: BarFormat, _ model: PresenterModel, at now: Double = F.now) -> String {
        format.line(for: IslandScene(model: model, now: now))
    }

    /// Expects the bar's line for `model` to be `expected`. One typed `#expect` for the suite's
    /// many: each `#expect(line(.waybar, model) == "…")` costs the test build 10-60 ms more of
    /// type-checking than a call of this; a failure still shows both lines at the caller's line.
    func expectLine(
        _ format: BarFormat, _ model: PresenterModel, at now: Double = F.now, _ expected: String, _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(line(format, model, at: now) == expected, comment, sourceLocation: sourceLocation)
    }

    @Test func waybar() {
        expectLine(
            .waybar, F.compactModel, #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["compact"],"percentage":25}"#)
        expectLine(
            .waybar, F.minimalModel,
            #"{"text":"⏱ 2:05 · ☕ brewing","alt":"⏱ 2:05 · ☕ brewing","tooltip":"Tea 2:05\nCoffee for Ada: brewing · 25%","class":["minimal"]}"#)
        expectLine(
            .waybar, F.expandedModel, #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["expanded"],"percentage":25}"#)
        expectLine(.waybar, F.emptyModel, #"{"text":"","alt":"","tooltip":"","class":["none"]}"#)
    }

    @Test func i3blocks() {
        expectLine(.i3blocks, F.compactModel, #"{"full_text":"☕ brewing","short_text":"☕ brewing","markup":"none"}"#)
        expectLine(.i3blocks, F.minimalModel, #"{"full_text":"⏱ 2:05 · ☕ brewing","short_text":"⏱ 2:05 · ☕ brewing","markup":"none"}"#)
        expectLine(.i3blocks, F.expandedModel, #"{"full_text":"☕ brewing","short_text":"☕ brewing","markup":"none"}"#)
        expectLine(.i3blocks, F.emptyModel, #"{"full_text":"","short_text":"","markup":"none"}"#)
    }

    @Test(arguments: [BarFormat.eww, .polybar])
    func plainText(_ format: BarFormat) {
        expectLine(format, F.compactModel, "☕ brewing")
        expectLine(format, F.minimalModel, "⏱ 2:05 · ☕ brewing")
        expectLine(format, F.expandedModel, "☕ brewing")
        expectLine(format, F.emptyModel, "")
    }

    @Test func theCompactTextIsLiveAndTheChipIsItsShortForm() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "t1", lockScreen: ["t1"]), items: [F.timer()]))
        expectLine(.eww, model, "⏱ 2:05")
        expectLine(.eww, model, at: F.now + 1, "⏱ 2:04")
        expectLine(.i3blocks, model, #"{"full_text":"⏱ 2:05","short_text":"Tea","markup":"none"}"#)
        #expect(line(.waybar, model).contains(#""text":"⏱ 2:05","alt":"Tea""#))
    }

    @Test func timersTickLocally() {
        let model = F.minimalModel
        #expect(IslandScene(model: model, now: F.now).isTicking)
        expectLine(.eww, model, at: F.now + 1, "⏱ 2:04 · ☕ brewing")
        expectLine(.eww, model, at: F.now + 65, "⏱ 1:00 · ☕ brewing")
        expectLine(.eww, model, at: F.now + 500, "⏱ 0:00 · ☕ brewing")
    }

    @Test func focusClass() {
        var model = F.compactModel
        var focus = F.delta(sequence: 100, island: nil)
        focus["focus"] = ["on": true, "since": .double(F.now)]
        model.apply(focus)
        expectLine(
            .waybar, model, #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["compact","focus"],"percentage":25}"#)
    }

    @Test func sharingClassAndNothingButTheHiddenLayout() {
        expectLine(.waybar, F.sharedModel, #"{"text":"• 🔒","alt":"•","tooltip":"• Hidden while sharing","class":["compact","sharing"]}"#)
        #expect(!line(.waybar, F.compactModel).contains("sharing"))
        // An alert while shared comes without words: the island expands, its text stays hidden.
        var model = F.sharedModel
        model.apply(
            F.delta(
                sequence: 5, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                alert: ["id": "c1", "title": "", "body": ""]))
        expectLine(.waybar, model, #"{"text":"• 🔒","alt":"•","tooltip":"• Hidden while sharing","class":["expanded","alert","sharing"]}"#)
    }

    @Test func staleAndAlertClasses() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee(state: "stale")]))
        expectLine(
            .waybar, model,
            #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25% (stale)","class":["compact","stale"],"percentage":25}"#)
        model.apply(
            F.delta(
                sequence: 2, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "ready", done: 4)], alert: ["id": "c1", "title": "Coffee", "body": "Ready"]))
        expectLine(
            .waybar, model,
            #"{"text":"Coffee: Ready","alt":"Coffee","tooltip":"Coffee: Ready\nCoffee for Ada: ready · 100%","class":["expanded","alert"],"percentage":100}"#)
    }

    @Test func waybarTextIsPangoEscapedAndJSONQuoted() {
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "<b>\"hot\" & new\nline</b>")]))
        #expect(line(.waybar, model).hasPrefix(#"{"text":"☕ &lt;b&gt;\"hot\" &amp; new line&lt;/b&gt;","#))
        expectLine(.eww, model, "☕ <b>\"hot\" & new line</b>")
        #expect(BarFormat.pango("a & <b>") == "a &amp; &lt;b&gt;")
    }

    @Test func iconNamesBecomeGlyphsOrABulletInText() {
        var model = PresenterModel()
        let item = F.item(
            id: "d1", app: "org.example.Coffee", type: "Delivery", state: ["stage": "on the way", "symbol": "appointment-soon"],
            layout: nil)
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "d1", lockScreen: ["d1"]), items: [item]))
        // The default layout: the state's symbol, an icon name, then the first state value.
        expectLine(.eww, model, "⏰ on the way")
        // Never nothing: a symbol keeps its place.
        #expect(RenderedViewGlyphs.glyph("some-unknown-icon") == "•")
        #expect(RenderedViewGlyphs.glyph("battery-good-symbolic") == "🔋")
        #expect(RenderedViewGlyphs.glyph("audio-volume-high-symbolic") == "🔊")
        #expect(RenderedViewGlyphs.glyph("🍕") == "🍕")
    }

    @Test func barDriverWritesOnlyChangedLines() async {
        let lines = LineSink()
        let clock = Clock(F.now)
        let driver = BarDriver(format: .eww, clock: { clock.value }) { lines.append($0) }
        await driver.handle(.update(F.delta(sequence: 1, island: F.island("none"))))
        #expect(lines.all.isEmpty)  // no snapshot yet
        await driver.handle(.update(F.snapshot(sequence: 1, island: F.island("none"), items: [])))
        #expect(await driver.tick() == false, "nothing on screen ticks: the clock stops")
        await driver.handle(
            .update(
                F.delta(
                    sequence: 2, island: F.island("minimal", attached: "t1", detached: "c1", lockScreen: ["t1", "c1"]),
                    items: [F.timer(), F.coffee()])))
        #expect(await driver.tick() == true)
        clock.value = F.now + 1
        #expect(await driver.tick() == true)
        await driver.handle(.disconnected(reason: "gone"))
        #expect(await driver.tick() == false)
        #expect(lines.all == ["", "⏱ 2:05 · ☕ brewing", "⏱ 2:04 · ☕ brewing", ""])
    }

    /// The ticker sleeps while nothing ticks: it is told once each time ticking starts.
    @Test func barDriverSaysWhenTickingStarts() async {
        let clock = Clock(F.now)
        let driver = BarDriver(format: .eww, clock: { clock.value }) { _ in }
        var starts = driver.tickingStarts.makeAsyncIterator()
        await driver.handle(.update(F.snapshot(sequence: 1, island: F.island("none"), items: [])))
        #expect(await driver.tick() == false)
        await driver.handle(
            .update(
                F.delta(
                    sequence: 2, island: F.island("compact", attached: "t1", lockScreen: ["t1"]),
                    items: [F.timer()])))
        await driver.handle(.update(F.delta(sequence: 3, island: F.island("compact", attached: "t1", lockScreen: ["t1"]), items: [])))
        #expect(await starts.next() != nil, "ticking started once")
        #expect(await driver.tick() == true)
    }
}

import IslandCore
import Synchronization

enum RenderedViewGlyphs {
    static func glyph(_ name: String) -> String { RenderedView.glyph(forSymbol: name) }
}

final class LineSink: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

final class Clock: Sendable {
    private let now: Mutex<Double>
    init(_ now: Double) { self.now = Mutex(now) }
    var value: Double {
        get { now.withLock { $0 } }
        set { now.withLock { $0 = newValue } }
    }
}
