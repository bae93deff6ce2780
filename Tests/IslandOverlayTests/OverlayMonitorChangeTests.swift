import IslandPresenter
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandOverlay

/// What the overlay decides when a monitor changes while it runs (plugged in or out, its mode,
/// scale or position changed): the window fitted to its monitor again, the island laid out in
/// the new canvas, and a burst of monitor signals answered once. island-overlay's
/// OverlayMonitors and OverlayPlacement carry these out with GTK; the monitors here are given.
@Suite struct OverlayMonitorChangeTests {
    static let config = OverlayConfig()
    static let laptop = OverlayRect(x: 0, y: 0, width: 1280, height: 720)

    @Test func aMonitorsModeAndScaleMakeTheCanvas() {
        let g = Self.config.geometry
        let atOne = OverlayPlacementPolicy.fit(on: Self.laptop, config: Self.config, x11: false)
        #expect(atOne == OverlayFit(width: g.canvasWidth, height: min(g.canvasMaximumHeight, 720 - 8)))
        // Scale 2: GDK's geometry is logical, 640×360; the canvas ends above its bottom edge.
        let atTwo = OverlayPlacementPolicy.fit(on: OverlayRect(x: 0, y: 0, width: 640, height: 360), config: Self.config, x11: false)
        #expect(atTwo.height == 360 - 8)
        #expect(atTwo.width == g.canvasWidth)
        // A wider mode: the expanded island may grow there, so the canvas is wider.
        let wide = OverlayPlacementPolicy.fit(on: OverlayRect(x: 1280, y: 0, width: 1920, height: 1080), config: Self.config, x11: false)
        #expect(wide.width == g.canvasWidth(outputWidth: 1920))
        #expect(wide.width > atOne.width)
        #expect(wide.height == min(g.canvasMaximumHeight, 1080 - 8))
        // Wayland: no corner, layer-shell anchors the surface to its output's top centre.
        #expect(wide.x == nil && wide.y == nil)
    }

    /// The same monitor, the same fit: a pass with nothing new changes nothing.
    @Test func anUnchangedMonitorFitsTheSame() {
        for x11 in [false, true] {
            #expect(
                OverlayPlacementPolicy.fit(on: Self.laptop, config: Self.config, x11: x11)
                    == OverlayPlacementPolicy.fit(on: Self.laptop, config: Self.config, x11: x11))
        }
    }

    /// X11: the window's corner follows its monitor's position and width, and the canvas's.
    @Test func x11TheWindowFollowsItsMonitorsPlaceAndWidth() {
        var config = Self.config
        config.marginTop = 10
        let before = OverlayPlacementPolicy.fit(on: OverlayRect(x: 1280, y: 0, width: 1280, height: 720), config: config, x11: true)
        #expect(before.x == 1280 + (1280 - Int(before.width)) / 2)
        #expect(before.y == 10)
        // The monitor on its left grew from 1280 to 1920 px: this one now starts further right.
        let moved = OverlayPlacementPolicy.fit(on: OverlayRect(x: 1920, y: 0, width: 1280, height: 720), config: config, x11: true)
        #expect(moved.x == before.x.map { $0 + 640 })
        #expect(moved.width == before.width)
        // Its own mode changed: wider canvas, still centred.
        let wider = OverlayPlacementPolicy.fit(on: OverlayRect(x: 1280, y: 0, width: 2560, height: 1440), config: config, x11: true)
        #expect(wider.x == 1280 + (2560 - Int(wider.width)) / 2)
        #expect(wider.description == "canvas \(Int(wider.width))x\(Int(wider.height)) at \(wider.x ?? 0),10")
    }

    /// Output=all: each monitor without an island gets one; those with one, none.
    @Test func outputAllGivesAnIslandToEachMonitorWithoutOne() {
        #expect(OverlayPlacementPolicy.withoutIsland(["A", "B", "C"], pinned: ["A", nil]) == ["B", "C"])
        #expect(OverlayPlacementPolicy.withoutIsland(["A", "B"], pinned: ["B", "A"]) == [])
        #expect(OverlayPlacementPolicy.withoutIsland([String](), pinned: ["A"]) == [])
    }

    /// However many monitor signals come before the loop is idle, one pass answers them; the
    /// next signal after it schedules the next pass.
    @Test func aBurstOfMonitorSignalsIsOnePass() {
        var events = OverlayMonitorEvents()
        var scheduled = 0
        for _ in 0..<1000 where events.noted() { scheduled += 1 }
        #expect(scheduled == 1)
        #expect(events.pass() == 1000)
        #expect(events.pending == 0)
        let first = events.noted(), second = events.noted()
        #expect(first && !second)
        #expect(events.pass() == 2)
    }

    /// The canvas resized (its monitor's scale doubled, then another, wider monitor): the
    /// island is centred in the new canvas at once, not morphed there, and the open list ends
    /// inside it.
    @Test func theIslandIsLaidOutAgainInTheResizedCanvas() throws {
        var controller = OverlayController(
            layout: OverlayLayout(canvasWidth: 440, canvasHeight: 712, top: 8, metrics: FixedMetrics()),
            clock: OverlayClock(wall: { Scenes.now }, monotonic: { 1000 }))
        let items = (0..<6).map { Scenes.simpleItem("a\($0)") }
        _ = controller.handle(.windowShown)
        _ = controller.handle(.update(OverlayControllerTests.snapshot(["mode": "compact", "attached": "a0"], items: items)))
        _ = controller.handle(.toggleList)
        let tall = try #require(controller.motion.target?.shape("panel")).rect
        #expect(tall.maxY > 352 - 8, "six cards need more than the short canvas")

        let steps = controller.handle(.canvasResized(width: 600, height: 352))
        #expect(steps.contains(.redraw))
        #expect(steps.contains { if case .setInputRegion = $0 { true } else { false } })
        let frame = try #require(controller.motion.target)
        let island = try #require(frame.shape("island")).rect
        #expect(abs(island.midX - 300) < 0.5)
        #expect(try #require(frame.shape("panel")).rect.maxY <= 352 - 8)
        // Drawn there now: nothing moves from the old canvas's place.
        #expect(!controller.motion.shapesMoving)
        // The same size again: nothing to do.
        #expect(controller.handle(.canvasResized(width: 600, height: 352)).isEmpty)
    }

    /// Hosted: the host says the room under its bar again when monitors change; a room out of
    /// range refuses the whole line, as any wrong member does.
    @Test func theHostSaysTheRoom() {
        var state = OverlayDesktopState()
        #expect(state.apply(line: Array(#"{"fullscreen": false, "alerts": true, "locked": false, "room": 640}"#.utf8)) == nil)
        #expect(state.room == 640)
        // Not what the island shows: the controller keeps it, logs and redraws nothing.
        var controller = OverlayController(
            layout: OverlayLayout(metrics: FixedMetrics()), clock: OverlayClock(wall: { Scenes.now }, monotonic: { 1000 }))
        _ = controller.handle(.windowShown)
        #expect(controller.handle(.desktop(state)).isEmpty)
        #expect(controller.desktop.room == 640)
        #expect(state.apply(line: Array(#"{"fullscreen": true, "room": 99}"#.utf8)) == "room must be 100-20000 pixels")
        #expect(state.apply(line: Array(#"{"room": "640"}"#.utf8)) != nil)
        #expect(state.room == 640 && !state.fullscreen)
    }
}
