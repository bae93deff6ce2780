#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import OrderedJSON
import Testing
@testable import IslandPresenter

/// Collects the character data of an XML document, proving it parses.
final class TextCollector: NSObject, XMLParserDelegate {
    var texts: [String] = []
    var elements: [String] = []
    private var current = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        elements.append(name)
        current = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" { texts.append(current) }
        current = ""
    }

    static func parse(_ document: String) -> (ok: Bool, texts: [String], elements: [String]) {
        let parser = XMLParser(data: Data(document.utf8))
        let collector = TextCollector()
        parser.delegate = collector
        let ok = parser.parse()
        return (ok, collector.texts, collector.elements)
    }
}

@Suite struct SVGTests {
    typealias F = Fixtures

    func svg(_ model: PresenterModel, at now: Double = F.now) -> String {
        SVGRenderer().render(IslandScene(model: model, now: now))
    }

    @Test func compactIsWellFormedWithItsTexts() {
        let result = TextCollector.parse(svg(F.compactModel))
        #expect(result.ok)
        #expect(result.elements.first == "svg")
        #expect(result.texts.contains("☕"))
        #expect(result.texts.contains("brewing"))
        #expect(result.texts.contains("Coffee for Ada: brewing"))
        #expect(svg(F.compactModel).contains("class=\"island compact\""))
        #expect(svg(F.compactModel).contains("stroke=\"#ff9500\""))  // keylineTint
        #expect(svg(F.compactModel).contains("<g class=\"progress\">"))  // the lock screen's bar
    }

    @Test func minimalDrawsTheDetachedBubbleAndTimersAtNow() {
        let document = svg(F.minimalModel, at: F.now + 5)
        let result = TextCollector.parse(document)
        #expect(result.ok)
        #expect(document.contains("class=\"detached\""))
        #expect(result.texts.contains("⏱ 2:00"))
        #expect(result.texts.contains("☕ brewing"))
        #expect(result.texts.contains("Tea 2:00"))
    }

    @Test func expandedDrawsItsRegionsAndButtons() {
        let document = svg(F.expandedModel)
        let result = TextCollector.parse(document)
        #expect(result.ok)
        #expect(document.contains("class=\"island expanded\""))
        #expect(result.texts.contains("Ada's order"))
        #expect(result.texts.contains("Pause"))
        #expect(result.texts.contains("Cancel"))
    }

    @Test func emptyIslandIsThePill() {
        let result = TextCollector.parse(svg(F.emptyModel))
        #expect(result.ok)
        #expect(result.texts == [])
        #expect(svg(F.emptyModel).contains("class=\"island none\""))
    }

    @Test func textIsEscaped() {
        var model = PresenterModel()
        let nasty = "<script>&\"'\u{1}]]>"
        model.apply(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]),
                               items: [F.coffee(stage: "x", name: nasty)]))
        let result = TextCollector.parse(svg(model))
        #expect(result.ok)
        // Control characters become spaces in a line of text; markup survives the round trip.
        #expect(result.texts.contains("Coffee for <script>&\"' ]]>: x"))
        #expect(SVGRenderer.escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;")
        #expect(SVGRenderer.escape("bell\u{7}") == "bell\u{FFFD}")
        // Controls XML allows become references: the document is safe on a terminal too.
        #expect(SVGRenderer.escape("csi\u{9B}del\u{7F}\ttab\rcr") == "csi&#x9B;del&#x7F;&#x9;tab&#xD;cr")
    }
}

@Suite struct TerminalTests {
    typealias F = Fixtures

    func screen(_ model: PresenterModel, chrome: TerminalChrome = .init(), columns: Int = 100, rows: Int = 30) -> [String] {
        TerminalFrame(columns: columns, rows: rows).render(IslandScene(model: model, now: F.now), chrome: chrome).map(\.plain)
    }

    @Test func compactPillIsCentredAtTheTop() {
        let lines = screen(F.compactModel)
        #expect(lines.count == 30)
        let pill = lines[2]
        #expect(pill.contains("☕") && pill.contains("brewing"))
        #expect(pill.hasPrefix(String(repeating: " ", count: 30)))
        #expect(lines.contains { $0.contains("Coffee for Ada: brewing") })
        #expect(lines.contains { $0.contains("█") && $0.contains("25%") })
        #expect(lines.last!.hasPrefix(" compact │ "))
    }

    @Test func minimalHasTheDetachedBubble() {
        let lines = screen(F.minimalModel)
        #expect(lines[2].contains("2:05"))
        #expect(lines[2].contains("│ ☕ brewing │"))
        #expect(lines.last!.hasPrefix(" minimal │"))
    }

    @Test func expandedNumbersItsButtons() {
        let lines = screen(F.expandedModel)
        #expect(lines.contains { $0.contains("Ada's order") })
        #expect(lines.contains { $0.contains("[1 Pause] [2 Cancel]") })
    }

    @Test func selectionMessageAndDisconnection() {
        let selected = screen(F.minimalModel, chrome: .init(selected: "c1", message: "URL: https://example.org/order"))
        #expect(selected.contains { $0.hasPrefix("▶ ╭─ org.example.Coffee") })
        #expect(selected[selected.count - 2] == " URL: https://example.org/order")
        let away = screen(PresenterModel(), chrome: .init(disconnected: "the daemon is shutting down"))
        #expect(away.contains { $0.contains("reconnecting… the daemon is shutting down") })
    }

    @Test func smallTerminalsAreCut() {
        let lines = screen(F.minimalModel, columns: 30, rows: 8)
        #expect(lines.count == 8)
        let frame = TerminalFrame(columns: 30, rows: 8).render(IslandScene(model: F.minimalModel, now: F.now), chrome: .init())
        #expect(frame.allSatisfy { displayWidth(ansiStripped($0.ansi(columns: 30))) <= 30 })
    }

    @Test func keys() {
        #expect(TUIKey.parse(Array("\u{1B}[C\u{1B}[D\t\recdq19x".utf8)) ==
            [.next, .previous, .next, .tap, .expand, .collapse, .dismiss, .quit, .button(1), .button(9)])
        #expect(TUIKey.parse([0x03]) == [.quit])
    }

    @Test func displayWidths() {
        #expect(displayWidth("abc") == 3)
        #expect(displayWidth("☕") == 2)
        #expect(displayWidth("e\u{301}") == 1)
        #expect(truncate("brewing coffee", toWidth: 8) == "brewing…")
    }

    func ansiStripped(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }
}

@Suite struct TUIControllerTests {
    typealias F = Fixtures

    final class Recorder: Sendable {
        let calls = Mutex<[String]>([])
        let opened = Mutex<[String]>([])
        let screen = Mutex<String>("")
    }

    func controller(_ recorder: Recorder, url: String? = "https://example.org/order", canOpen: Bool = false) -> TUIController {
        TUIController(io: .init(
            write: { text in recorder.screen.withLock { $0 = text } },
            size: { (100, 30) },
            clock: { F.now },
            open: { url in recorder.opened.withLock { $0.append(url) }; return canOpen },
            interact: { action, id, button in
                recorder.calls.withLock { $0.append([action, id ?? "-", button ?? "-"].joined(separator: " ")) }
                return action == "tap" ? url : nil
            },
            monotonic: Self.aSecondPerRead()))
    }

    /// A click-guard clock on which a second passes between any two reads: every key comes
    /// well after the frame it acts on (ClickGuardPresenterTests covers keys that come early).
    static func aSecondPerRead() -> @Sendable () -> Double {
        let time = Mutex<Double>(0)
        return { time.withLock { $0 += 1; return $0 } }
    }

    @Test func keysSendInteractions() async {
        let recorder = Recorder()
        let tui = controller(recorder)
        await tui.handle(.update(F.snapshot(sequence: 5, island: F.island("minimal", attached: "t1", detached: "c1", lockScreen: ["t1", "c1"]),
                                            items: [F.timer(), F.coffee()])))
        #expect(await tui.press(.expand))  // the attached activity
        #expect(await tui.press(.next))  // select c1
        #expect(await tui.press(.expand))
        await tui.handle(.update(F.delta(sequence: 6, island: F.island("expanded", attached: "t1", detached: "c1", expanded: "c1", lockScreen: ["t1", "c1"]))))
        #expect(await tui.press(.button(2)))
        #expect(await tui.press(.button(7)))  // no such button: nothing sent
        #expect(await tui.press(.collapse))
        #expect(await tui.press(.tap))
        #expect(await tui.press(.dismiss))
        #expect(await !tui.press(.quit))
        #expect(recorder.calls.withLock { $0 } == [
            "expand t1 -", "expand c1 -", "button c1 cancel", "collapse c1 -", "tap c1 -", "dismiss c1 -",
        ])
        #expect(recorder.opened.withLock { $0 } == ["https://example.org/order"])
    }

    @Test func aTapShowsTheURLWhenNothingOpensIt() async {
        let recorder = Recorder()
        let tui = controller(recorder)
        await tui.handle(.update(F.snapshot(sequence: 1, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()])))
        _ = await tui.press(.tap)
        #expect(recorder.screen.withLock { $0 }.contains("URL: https://example.org/order"))
    }
}

import Synchronization
