import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

@Suite struct BarFormatTests {
    typealias F = Fixtures

    func line(_ format: BarFormat, _ model: PresenterModel, at now: Double = F.now) -> String {
        format.line(for: IslandScene(model: model, now: now))
    }

    @Test func waybar() {
        #expect(
            line(.waybar, F.compactModel)
                == #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["compact"],"percentage":25}"#)
        #expect(
            line(.waybar, F.minimalModel)
                == #"{"text":"⏱ 2:05 · ☕ brewing","alt":"⏱ 2:05 · ☕ brewing","tooltip":"Tea 2:05\nCoffee for Ada: brewing · 25%","class":["minimal"]}"#)
        #expect(
            line(.waybar, F.expandedModel)
                == #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["expanded"],"percentage":25}"#)
        #expect(line(.waybar, F.emptyModel) == #"{"text":"","alt":"","tooltip":"","class":["none"]}"#)
    }

    @Test func i3blocks() {
        #expect(line(.i3blocks, F.compactModel) == #"{"full_text":"☕ brewing","short_text":"☕ brewing","markup":"none"}"#)
        #expect(line(.i3blocks, F.minimalModel) == #"{"full_text":"⏱ 2:05 · ☕ brewing","short_text":"⏱ 2:05 · ☕ brewing","markup":"none"}"#)
        #expect(line(.i3blocks, F.expandedModel) == #"{"full_text":"☕ brewing","short_text":"☕ brewing","markup":"none"}"#)
        #expect(line(.i3blocks, F.emptyModel) == #"{"full_text":"","short_text":"","markup":"none"}"#)
    }

    @Test(arguments: [BarFormat.eww, .polybar])
    func plainText(_ format: BarFormat) {
        #expect(line(format, F.compactModel) == "☕ brewing")
        #expect(line(format, F.minimalModel) == "⏱ 2:05 · ☕ brewing")
        #expect(line(format, F.expandedModel) == "☕ brewing")
        #expect(line(format, F.emptyModel) == "")
    }

    @Test func theCompactTextIsLiveAndTheChipIsItsShortForm() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "t1", lockScreen: ["t1"]), items: [F.timer()]))
        #expect(line(.eww, model) == "⏱ 2:05")
        #expect(line(.eww, model, at: F.now + 1) == "⏱ 2:04")
        #expect(line(.i3blocks, model) == #"{"full_text":"⏱ 2:05","short_text":"Tea","markup":"none"}"#)
        #expect(line(.waybar, model).contains(#""text":"⏱ 2:05","alt":"Tea""#))
    }

    @Test func timersTickLocally() {
        let model = F.minimalModel
        #expect(IslandScene(model: model, now: F.now).isTicking)
        #expect(line(.eww, model, at: F.now + 1) == "⏱ 2:04 · ☕ brewing")
        #expect(line(.eww, model, at: F.now + 65) == "⏱ 1:00 · ☕ brewing")
        #expect(line(.eww, model, at: F.now + 500) == "⏱ 0:00 · ☕ brewing")
    }

    @Test func focusClass() {
        var model = F.compactModel
        var focus = F.delta(sequence: 100, island: nil)
        focus["focus"] = ["on": true, "since": .double(F.now)]
        model.apply(focus)
        #expect(
            line(.waybar, model)
                == #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25%","class":["compact","focus"],"percentage":25}"#)
    }

    @Test func sharingClassAndNothingButTheHiddenLayout() {
        #expect(line(.waybar, F.sharedModel) == #"{"text":"• 🔒","alt":"•","tooltip":"• Hidden while sharing","class":["compact","sharing"]}"#)
        #expect(!line(.waybar, F.compactModel).contains("sharing"))
        // An alert while shared comes without words: the island expands, its text stays hidden.
        var model = F.sharedModel
        model.apply(
            F.delta(
                sequence: 5, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                alert: ["id": "c1", "title": "", "body": ""]))
        #expect(line(.waybar, model) == #"{"text":"• 🔒","alt":"•","tooltip":"• Hidden while sharing","class":["expanded","alert","sharing"]}"#)
    }

    @Test func staleAndAlertClasses() {
        var model = PresenterModel()
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee(state: "stale")]))
        #expect(
            line(.waybar, model)
                == #"{"text":"☕ brewing","alt":"☕ brewing","tooltip":"Coffee for Ada: brewing · 25% (stale)","class":["compact","stale"],"percentage":25}"#)
        model.apply(
            F.delta(
                sequence: 2, island: F.island("expanded", attached: "c1", expanded: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "ready", done: 4)], alert: ["id": "c1", "title": "Coffee", "body": "Ready"]))
        #expect(
            line(.waybar, model)
                == #"{"text":"Coffee: Ready","alt":"Coffee","tooltip":"Coffee: Ready\nCoffee for Ada: ready · 100%","class":["expanded","alert"],"percentage":100}"#
        )
    }

    @Test func waybarTextIsPangoEscapedAndJSONQuoted() {
        var model = PresenterModel()
        model.apply(
            F.snapshot(
                sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                items: [F.coffee(stage: "<b>\"hot\" & new\nline</b>")]))
        #expect(line(.waybar, model).hasPrefix(#"{"text":"☕ &lt;b&gt;\"hot\" &amp; new line&lt;/b&gt;","#))
        #expect(line(.eww, model) == "☕ <b>\"hot\" & new line</b>")
        #expect(BarFormat.pango("a & <b>") == "a &amp; &lt;b&gt;")
    }

    @Test func iconNamesBecomeGlyphsOrABulletInText() {
        var model = PresenterModel()
        let item = F.item(
            id: "d1", app: "org.example.Coffee", type: "Delivery", state: ["stage": "on the way", "symbol": "appointment-soon"],
            layout: nil)
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "d1", lockScreen: ["d1"]), items: [item]))
        // The default layout: the state's symbol, an icon name, then the first state value.
        #expect(line(.eww, model) == "⏰ on the way")
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
