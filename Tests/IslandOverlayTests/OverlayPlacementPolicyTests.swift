import Testing
@testable import IslandOverlay

/// Where an island goes as monitors come and go, and what its layer surface asks of the
/// compositor (island-overlay's OverlayPlacement carries these out with GTK).
@Suite struct OverlayPlacementPolicyTests {
    static let outputs = [
        OverlayOutput(connector: "HEADLESS-1", model: "headless"),
        OverlayOutput(connector: "HEADLESS-2", model: "headless"),
    ]

    @Test func aPinnedIslandFollowsItsMonitor() {
        // Given its monitor while hidden: moved there, and shown.
        expectStep(OverlayPlacementPolicy.pinned("B", all: ["A", "B"], current: nil, visible: false), .move(to: "B", show: true))
        // From another monitor: moved, already shown.
        expectStep(OverlayPlacementPolicy.pinned("B", all: ["A", "B"], current: "A", visible: true), .move(to: "B", show: false))
        expectStep(OverlayPlacementPolicy.pinned("B", all: ["A", "B"], current: "B", visible: true), .stay)
    }

    @Test func aPinnedIslandWhoseMonitorWentIsHiddenOnce() {
        expectStep(OverlayPlacementPolicy.pinned("B", all: ["A"], current: "B", visible: true), .hide)
        expectStep(OverlayPlacementPolicy.pinned(nil, all: ["A"], current: nil, visible: true), .hide)
        // Already hidden and placed nowhere: nothing more to do (nor to log).
        expectStep(OverlayPlacementPolicy.pinned(nil, all: ["A"], current: nil, visible: false), .stay)
    }

    @Test func oneIslandGoesWhereOutputSays() {
        let moved = OverlayPlacementPolicy.chosen(
            OverlayOutputChoice("HEADLESS-2"), all: ["A", "B"], outputs: Self.outputs,
            focused: nil, current: "A")
        expectStep(moved.step, .move(to: "B", show: false))
        #expect(moved.fallbackAmong == nil)
        let stays = OverlayPlacementPolicy.chosen(
            OverlayOutputChoice("HEADLESS-2"), all: ["A", "B"], outputs: Self.outputs,
            focused: nil, current: "B")
        expectStep(stays.step, .stay)
    }

    /// The output Output= names is not (yet) there: the primary meanwhile, and the names there
    /// are for the log, so the user sees what to write.
    @Test func anAbsentOutputNamesThoseThereAre() {
        let fallback = OverlayPlacementPolicy.chosen(
            OverlayOutputChoice("HDMI-A-1"), all: ["A", "B"], outputs: Self.outputs,
            focused: nil, current: nil)
        expectStep(fallback.step, .move(to: "A", show: false))
        #expect(fallback.fallbackAmong == ["HEADLESS-1", "HEADLESS-2"])
    }

    @Test func focusedFollowsFocusAndStaysWithoutIt() {
        let followed = OverlayPlacementPolicy.chosen(.focused, all: ["A", "B"], outputs: Self.outputs, focused: 1, current: "A")
        expectStep(followed.step, .move(to: "B", show: false))
        let kept = OverlayPlacementPolicy.chosen(.focused, all: ["A", "B"], outputs: Self.outputs, focused: nil, current: "B")
        expectStep(kept.step, .stay)
    }

    @Test func noMonitorLeftWaitsOnce() {
        expectStep(OverlayPlacementPolicy.chosen(.primary, all: [String](), outputs: [], focused: nil, current: "A").step, .wait)
        expectStep(OverlayPlacementPolicy.chosen(.primary, all: [String](), outputs: [], focused: nil, current: nil).step, .stay)
    }

    @Test func x11CentresTheWindowAtTheTopOfItsMonitor() {
        let origin = OverlayPlacementPolicy.topCentre(monitor: (x: 1920, y: 0, width: 2560), windowWidth: 560, marginTop: 8)
        #expect(origin.x == 1920 + 1000)
        #expect(origin.y == 8)
    }

    /// Layer=top rises to overlay only while it shows something beside a fullscreen window,
    /// and comes back down when it shows nothing there.
    @Test func topRisesOverAFullscreenWindowOnlyWhileShowing() {
        var surface = OverlayLayerSurface(config: OverlayConfig())
        #expect(surface.islandChanged(showing: false, fullscreenBeside: true) == (nil, nil))
        #expect(surface.islandChanged(showing: true, fullscreenBeside: true).layer == .overlay)
        #expect(surface.lifted)
        #expect(surface.islandChanged(showing: true, fullscreenBeside: true) == (nil, nil))
        #expect(surface.islandChanged(showing: false, fullscreenBeside: true).layer == .top)
        #expect(!surface.lifted)
    }

    @Test func otherLayersAndFullscreenHideNeverRise() {
        var config = OverlayConfig()
        config.layer = .bottom
        var bottom = OverlayLayerSurface(config: config)
        #expect(bottom.islandChanged(showing: true, fullscreenBeside: true).layer == nil)
        config.layer = .top
        config.fullscreen = .hide
        var hiding = OverlayLayerSurface(config: config)
        #expect(hiding.islandChanged(showing: true, fullscreenBeside: true).layer == nil)
    }

    @Test func reserveHoldsTheStripOnlyWhileShowing() {
        var config = OverlayConfig()
        config.reserve = true
        var surface = OverlayLayerSurface(config: config)
        #expect(surface.islandChanged(showing: true, fullscreenBeside: false).exclusiveZone == config.exclusiveZone)
        #expect(config.exclusiveZone > 0)
        #expect(surface.islandChanged(showing: true, fullscreenBeside: false).exclusiveZone == nil)
        #expect(surface.islandChanged(showing: false, fullscreenBeside: false).exclusiveZone == 0)
        // Reserve=no: never a zone.
        var free = OverlayLayerSurface(config: OverlayConfig())
        #expect(free.islandChanged(showing: true, fullscreenBeside: false).exclusiveZone == nil)
    }

    /// Over the lock screen only the overlay layer is above the locker; unlocked, the layer is
    /// the user's again, or overlay while it is lifted over a fullscreen window.
    @Test func theLockScreenTakesTheOverlayLayer() {
        var config = OverlayConfig()
        config.layer = .bottom
        var surface = OverlayLayerSurface(config: config)
        #expect(surface.lockChanged(true) == .overlay)
        #expect(surface.lockChanged(true) == nil)
        #expect(surface.lockChanged(false) == .bottom)
        var lifted = OverlayLayerSurface(config: OverlayConfig())
        _ = lifted.islandChanged(showing: true, fullscreenBeside: true)
        _ = lifted.lockChanged(true)
        #expect(lifted.lockChanged(false) == .overlay)
        // Lifted while locked: still the overlay layer.
        var locked = OverlayLayerSurface(config: OverlayConfig())
        _ = locked.lockChanged(true)
        #expect(locked.islandChanged(showing: true, fullscreenBeside: true).layer == .overlay)
    }

    @Test func theKeyboardIsTakenAsAskedAndAwaited() {
        var surface = OverlayLayerSurface(config: OverlayConfig())
        #expect(surface.keyboard(.none) == nil)
        #expect(surface.keyboard(.onDemand)! == (.onDemand, false))
        #expect(surface.awaitingKeyboard)
        surface.keyboardArrived()
        #expect(!surface.awaitingKeyboard)
        #expect(surface.keyboard(.onDemand) == nil)
        #expect(surface.keyboard(.none)! == (.none, false))
        #expect(!surface.awaitingKeyboard)
    }

    /// KWin 5.27 keeps the keyboard with a surface that stops accepting it: giving back an
    /// exclusive keyboard maps the surface anew.
    @Test func givingBackAnExclusiveKeyboardRemaps() {
        var surface = OverlayLayerSurface(config: OverlayConfig())
        #expect(surface.keyboard(.exclusive)! == (.exclusive, false))
        #expect(surface.keyboard(.none)! == (.none, true))
    }

    /// Output=all: only the first island takes the keyboard, or two would take it from each other.
    @Test func anIslandThatDoesNotTakeTheKeyboardNeverAsks() {
        var surface = OverlayLayerSurface(config: OverlayConfig(), takesKeyboard: false)
        #expect(surface.keyboard(.exclusive) == nil)
        #expect(!surface.awaitingKeyboard)
    }
}

/// Output=all's islands for monitors plugged in, and the connector names compositors say.
@Suite struct OverlayNewMonitorTests {
    @Test func anIdleIslandFirstThenANewOneUpToTheMaximum() {
        #expect(OverlayPlacementPolicy.forNewMonitor(idle: 2, islands: 16) == .reuse(2))
        #expect(OverlayPlacementPolicy.forNewMonitor(idle: nil, islands: 1) == .add)
        #expect(OverlayPlacementPolicy.forNewMonitor(idle: nil, islands: OverlayPlacementPolicy.maximumIslands - 1) == .add)
        #expect(OverlayPlacementPolicy.forNewMonitor(idle: nil, islands: OverlayPlacementPolicy.maximumIslands) == .full)
    }

    /// A compositor's output name reaches the log: no terminal escapes, no bidi overrides, and bounded.
    @Test func aConnectorNameIsKeptPrintableAndShort() {
        #expect(OverlayOutput.connector(said: "HDMI-A-1") == "HDMI-A-1")
        #expect(OverlayOutput.connector(said: "DP-1\u{1B}[2J\n") == "DP-1?[2J?")
        #expect(OverlayOutput.connector(said: "DP\u{202E}1") == "DP?1")
        #expect(OverlayOutput.connector(said: String(repeating: "é", count: 500)).unicodeScalars.count == 64)
    }
}
