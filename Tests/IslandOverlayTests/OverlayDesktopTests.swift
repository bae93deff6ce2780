import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandOverlay

/// A hosted overlay (`island-overlay --hosted`, the GNOME Shell extension's): what the desktop's
/// shell says on standard input, and what the island shows under it.
@Suite struct OverlayDesktopTests {
    typealias Desk = OverlayControllerTests.Desk

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: The lines

    @Test func linesAreCutAtNewlinesAcrossReads() {
        var lines = OverlayHostLines()
        #expect(lines.feed(Self.bytes("{\"fullscreen\":")) == [])
        #expect(
            lines.feed(Self.bytes(" true}\n\n{\"alerts\": false}\n{")) == [
                .line(Self.bytes("{\"fullscreen\": true}")), .line(Self.bytes("{\"alerts\": false}")),
            ])
    }

    /// A host cannot make the overlay hold more than a line's limit: a longer line is dropped
    /// whole, said once, and the next line is read as usual.
    @Test func aLineOverTheLimitIsDroppedWhole() {
        var lines = OverlayHostLines()
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: OverlayHostLines.maximumLineBytes * 3)
        #expect(lines.feed(long) == [.tooLong])
        #expect(lines.feed(long) == [])
        #expect(lines.feed(Self.bytes("tail\n{\"alerts\":true}\n")) == [.line(Self.bytes("{\"alerts\":true}"))])
    }

    @Test func aLineChangesWhatItNamesAndNothingElse() {
        var state = OverlayDesktopState()
        #expect(state.apply(line: Self.bytes("{\"fullscreen\": true, \"future\": [1]}")) == nil)
        #expect(state == OverlayDesktopState(fullscreen: true, alerts: true))
        #expect(state.apply(line: Self.bytes("{\"alerts\": false}")) == nil)
        #expect(state == OverlayDesktopState(fullscreen: true, alerts: false))
    }

    @Test func aBadLineChangesNothing() {
        var state = OverlayDesktopState()
        #expect(state.apply(line: Self.bytes("{\"fullscreen\": true, \"alerts\": \"no\"}")) == "alerts must be true or false")
        #expect(state.apply(line: Self.bytes("fullscreen")) == "not a JSON object")
        #expect(state.apply(line: Self.bytes("[true]")) == "not a JSON object")
        #expect(state.apply(line: Self.bytes(String(repeating: "[", count: 100))) == "not a JSON object")
        #expect(state == OverlayDesktopState())
    }

    // MARK: What the island shows

    static let alerting = OverlayControllerTests.delta(2, island: OverlayControllerTests.expanded)
        .merging(["alert": ["id": "a", "title": "Ready", "body": "Your order is here"]]) { $1 }

    /// Beside a fullscreen window the island draws nothing and takes no input, but an alert
    /// shows over it for as long as it lasts.
    @Test func fullscreenShowsOnlyAlerts() {
        var desk = Desk()
        desk.send(.update(OverlayControllerTests.snapshot(OverlayControllerTests.compact)))
        desk.settle()
        expectForm(desk.form, .compact)
        _ = desk.take()

        desk.send(.desktop(OverlayDesktopState(fullscreen: true)))
        let hidden = desk.take()
        #expect(OverlayControllerTests.logged(hidden) == ["desktop: fullscreen yes, alerts shown"])
        #expect(hidden.contains(.setInputRegion([])))
        desk.settle()
        expectForm(desk.form, .hidden)
        desk.send(.toggleList)
        #expect(!desk.controller.listOpen)

        desk.send(.update(Self.alerting))
        desk.settle()
        expectForm(desk.form, .alert)

        desk.send(.update(OverlayControllerTests.delta(3, island: OverlayControllerTests.compact)))
        desk.settle()
        expectForm(desk.form, .hidden)
        desk.send(.desktop(OverlayDesktopState(fullscreen: false)))
        desk.settle()
        expectForm(desk.form, .compact)
    }

    /// Fullscreen=hide: beside a fullscreen window nothing shows, an alert neither; the island
    /// is back as the window leaves.
    @Test func fullscreenHideShowsNothingAtAll() {
        var config = OverlayConfig()
        config.fullscreen = .hide
        var desk = Desk(config: config)
        desk.send(.update(OverlayControllerTests.snapshot(OverlayControllerTests.compact)))
        desk.send(.desktop(OverlayDesktopState(fullscreen: true)))
        desk.settle()
        expectForm(desk.form, .hidden)
        desk.send(.update(Self.alerting))
        desk.settle()
        expectForm(desk.form, .hidden)
        #expect(desk.controller.motion.target?.hits.isEmpty ?? true)
        desk.send(.desktop(OverlayDesktopState(fullscreen: false)))
        desk.settle()
        expectForm(desk.form, .alert)
    }

    /// Fullscreen=always: a fullscreen window changes nothing; the list still opens.
    @Test func fullscreenAlwaysShowsEverything() {
        var config = OverlayConfig()
        config.fullscreen = .always
        var desk = Desk(config: config)
        desk.send(.update(OverlayControllerTests.snapshot(OverlayControllerTests.compact)))
        desk.send(.desktop(OverlayDesktopState(fullscreen: true)))
        desk.settle()
        expectForm(desk.form, .compact)
        desk.send(.toggleList)
        #expect(desk.controller.listOpen)
    }

    /// Do Not Disturb: an alerting update still changes what the compact island shows, without
    /// expanding it; a click on the island opens the held alert (the daemon has it expanded
    /// already: nothing is asked of it).
    @Test func doNotDisturbHoldsAlertsBack() throws {
        var desk = Desk()
        desk.send(.desktop(OverlayDesktopState(alerts: false)))
        desk.send(.update(OverlayControllerTests.snapshot(OverlayControllerTests.compact)))
        desk.settle()
        desk.send(.update(Self.alerting))
        desk.settle()
        expectForm(desk.form, .compact)
        _ = desk.take()

        try desk.click(.expand(id: "a"))
        #expect(OverlayControllerTests.sent(desk.take()) == [])
        desk.settle()
        expectForm(desk.form, .alert)

        // The next alert is held again.
        desk.send(.update(OverlayControllerTests.delta(3, island: OverlayControllerTests.compact)))
        desk.settle()
        desk.send(.update(Self.alerting.merging(["sequence": 4]) { $1 }))
        desk.settle()
        expectForm(desk.form, .compact)
    }

    /// A repeated state is not news: nothing is logged or drawn for it.
    @Test func theSameStateTwiceDoesNothing() {
        var desk = Desk()
        desk.send(.update(OverlayControllerTests.snapshot(OverlayControllerTests.compact)))
        desk.settle()
        _ = desk.take()
        desk.send(.desktop(OverlayDesktopState()))
        #expect(desk.take() == [] as [OverlayStep])
    }
}

/// Hosted on GNOME's Wayland compositor, the overlay's input region is never empty: with nothing
/// live, one pixel at the canvas's top centre takes input, so that mutter never takes the
/// window for absent and keeps the pointer from an island shown later.
@Suite struct OverlayInputRegionTests {
    typealias C = OverlayControllerTests

    static func regions(_ settings: OverlayController.Settings) -> [[OverlayRect]] {
        var desk = OverlayControllerTests.Desk(settings: settings)
        var regions: [[OverlayRect]] = []
        desk.send(.update(C.snapshot(C.compact)))
        desk.settle()
        var ended = C.delta(2, island: ["mode": "none"])
        ended["removed"] = .array(["a"])
        desk.send(.update(ended))
        desk.settle()
        for step in desk.take() { if case .setInputRegion(let rows) = step { regions.append(rows) } }
        return regions
    }

    @Test func hostedOnWaylandOnePixelTakesInputWhileNothingIsLive() throws {
        let regions = Self.regions(.init(inputNeverEmpty: true))
        let first = try #require(regions.first)
        #expect(first.count > 1, "the compact island's rows")
        #expect(regions.last == [OverlayRect(x: 220, y: 0, width: 1, height: 1)])
        #expect(!regions.contains { $0.isEmpty })
        // At start, before anything is live, too.
        let controller = OverlayController(
            layout: OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics()),
            settings: .init(inputNeverEmpty: true), clock: OverlayClock(wall: { 0 }, monotonic: { 0 }))
        var shown = controller
        #expect(shown.handle(.windowShown).contains(.setInputRegion([OverlayRect(x: 220, y: 0, width: 1, height: 1)])))
    }

    @Test func elsewhereNothingLiveTakesNoInput() {
        #expect(Self.regions(.init()).last == [])
    }
}
