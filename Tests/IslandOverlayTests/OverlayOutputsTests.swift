import Testing
@testable import IslandOverlay

/// Which output the island goes on (Output=), and what wlr-foreign-toplevel-management says of
/// fullscreen and focused windows on each.
@Suite struct OverlayOutputsTests {
    static let outputs = [
        OverlayOutput(connector: "HEADLESS-1", model: "headless"),
        OverlayOutput(connector: "HEADLESS-2", model: "headless"),
        OverlayOutput(connector: nil, model: "DELL U2720Q"),
    ]

    @Test func aConnectorNameBeforeAModelName() {
        #expect(OverlayOutputChoice("HEADLESS-2").pick(Self.outputs, focused: nil, current: nil)! == (1, true))
        #expect(OverlayOutputChoice("headless-2").pick(Self.outputs, focused: nil, current: nil)! == (1, true))
        // The model of two: the first that has it.
        #expect(OverlayOutputChoice("headless").pick(Self.outputs, focused: nil, current: nil)! == (0, true))
        #expect(OverlayOutputChoice("DELL U2720Q").pick(Self.outputs, focused: nil, current: nil)! == (2, true))
    }

    /// An output that is not there (yet): the primary, said to be a fallback, so the overlay
    /// moves when it appears.
    @Test func anAbsentOutputFallsBackToThePrimary() {
        #expect(OverlayOutputChoice("HDMI-A-1").pick(Self.outputs, focused: nil, current: 1)! == (0, false))
        #expect(OverlayOutputChoice("7").pick(Self.outputs, focused: nil, current: nil)! == (0, false))
        var withPrimary = Self.outputs
        withPrimary[2].primary = true
        #expect(OverlayOutputChoice("7").pick(withPrimary, focused: nil, current: nil)! == (2, false))
        #expect(OverlayOutputChoice.primary.pick(withPrimary, focused: 1, current: 0)! == (2, true))
        #expect(OverlayOutputChoice.primary.pick([], focused: nil, current: nil) == nil)
        // Output=all is one island a monitor; where there is one window only, the primary's.
        #expect(OverlayOutputChoice.all.pick(withPrimary, focused: 1, current: 0)! == (2, true))
    }

    /// Focused follows the focused window; with none focused (an empty workspace, the island
    /// itself) it stays where it is.
    @Test func focusedFollowsTheFocusedWindowAndStaysWithoutOne() {
        #expect(OverlayOutputChoice.focused.pick(Self.outputs, focused: 1, current: 0)! == (1, true))
        #expect(OverlayOutputChoice.focused.pick(Self.outputs, focused: nil, current: 2)! == (2, true))
        #expect(OverlayOutputChoice.focused.pick(Self.outputs, focused: nil, current: nil)! == (0, true))
        // An output removed under it.
        #expect(OverlayOutputChoice.focused.pick(Self.outputs, focused: 5, current: 9)! == (0, true))
    }

    // MARK: Windows

    @Test func aFullscreenWindowIsOnTheOutputsItEntered() {
        var windows = ForeignToplevels()
        let added = windows.add(10)
        #expect(added)
        windows.setStates(10, [ForeignToplevels.fullscreenState, ForeignToplevels.activatedState])
        #expect(!windows.fullscreen(on: 1))
        windows.enter(10, output: 1)
        #expect(windows.fullscreen(on: 1))
        #expect(!windows.fullscreen(on: 2))
        #expect(windows.focusedOutput == 1)

        windows.setStates(10, [ForeignToplevels.activatedState])
        #expect(!windows.fullscreen(on: 1))
        windows.setStates(10, [ForeignToplevels.fullscreenState])
        windows.leave(10, output: 1)
        windows.enter(10, output: 2)
        #expect(!windows.fullscreen(on: 1))
        #expect(windows.fullscreen(on: 2))
        #expect(windows.focusedOutput == nil)

        windows.close(10)
        #expect(!windows.fullscreen(on: 2))
        #expect(windows.count == 0)
    }

    /// What changed what the island uses is said, so that the placements are told only then:
    /// the same states again (sent with a title's change), an output entered twice or left when
    /// never entered, and an untracked window change nothing.
    @Test func onlyChangesThatMatterAreSaid() {
        var windows = ForeignToplevels()
        _ = windows.add(10)
        let said = [
            windows.setStates(10, [ForeignToplevels.activatedState]),
            windows.setStates(10, [ForeignToplevels.activatedState]),
            windows.setStates(10, [ForeignToplevels.activatedState, ForeignToplevels.fullscreenState]),
            windows.enter(10, output: 1),
            windows.enter(10, output: 1),
            windows.leave(10, output: 2),
            windows.leave(10, output: 1),
            windows.setStates(11, [ForeignToplevels.fullscreenState]),
            windows.enter(11, output: 1),
        ]
        #expect(said == [true, false, true, true, false, false, true, false, false])
    }

    @Test func focusMovesWithTheActivatedWindow() {
        var windows = ForeignToplevels()
        for (window, output) in [(1 as UInt, 100 as UInt), (2, 200)] {
            let added = windows.add(window)
            #expect(added)
            windows.enter(window, output: output)
        }
        windows.setStates(1, [ForeignToplevels.activatedState])
        #expect(windows.focusedOutput == 100)
        windows.setStates(1, [])
        windows.setStates(2, [0, ForeignToplevels.activatedState, 99])
        #expect(windows.focusedOutput == 200)
        // Its output unplugged: the window is on none.
        windows.remove(output: 200)
        #expect(windows.focusedOutput == nil)
        // Events for a window never announced (or already closed) change nothing.
        windows.setStates(3, [ForeignToplevels.fullscreenState])
        windows.enter(3, output: 100)
        #expect(!windows.fullscreen(on: 100))
    }

    /// A compositor (or a client opening windows without end) cannot make the overlay hold
    /// more than its bounds: windows past the limit are not tracked, nor outputs past a
    /// window's limit.
    @Test func whatIsTrackedIsBounded() {
        var windows = ForeignToplevels()
        let tracked = (0..<UInt(ForeignToplevels.maximumToplevels)).filter { windows.add($0) }
        #expect(tracked.count == ForeignToplevels.maximumToplevels)
        let oneTooMany = windows.add(UInt.max)
        #expect(!oneTooMany)
        let again = windows.add(0)
        #expect(again, "a window already tracked is still tracked")
        #expect(windows.count == ForeignToplevels.maximumToplevels)
        windows.close(0)
        let afterClose = windows.add(UInt.max)
        #expect(afterClose)

        windows.setStates(1, [ForeignToplevels.fullscreenState])
        for output in 0..<UInt(ForeignToplevels.maximumOutputsPerToplevel + 10) { windows.enter(1, output: output) }
        #expect(windows.fullscreen(on: UInt(ForeignToplevels.maximumOutputsPerToplevel - 1)))
        #expect(!windows.fullscreen(on: UInt(ForeignToplevels.maximumOutputsPerToplevel)))
    }

    // MARK: X11: the active window as an EWMH window manager says it

    static let fullscreenAtom: UInt = 301
    static let monitors = [OverlayRect(x: 0, y: 0, width: 1280, height: 720), OverlayRect(x: 1280, y: 0, width: 1920, height: 1080)]

    /// Fullscreen is _NET_WM_STATE_FULLSCREEN among its states, on the monitor it covers.
    @Test func anX11WindowIsFullscreenOnTheMonitorItCovers() {
        let video = ActiveX11Window(states: [290, Self.fullscreenAtom], fullscreenAtom: Self.fullscreenAtom, frame: Self.monitors[1])
        #expect(video.fullscreen)
        #expect(video.monitor(among: Self.monitors) == 1)
        #expect(video.fullscreen(on: 1, among: Self.monitors))
        #expect(!video.fullscreen(on: 0, among: Self.monitors))
        let terminal = ActiveX11Window(states: [290], fullscreenAtom: Self.fullscreenAtom, frame: OverlayRect(x: 10, y: 10, width: 600, height: 400))
        #expect(!terminal.fullscreen && terminal.monitor(among: Self.monitors) == 0)
        #expect(!terminal.fullscreen(on: 0, among: Self.monitors))
    }

    /// A window across two monitors is on the one it covers most of; one on none (unmapped,
    /// off screen) is on no monitor, and hides no island.
    @Test func anX11WindowAcrossMonitorsIsOnTheOneItCoversMost() {
        let across = ActiveX11Window(
            states: [Self.fullscreenAtom], fullscreenAtom: Self.fullscreenAtom,
            frame: OverlayRect(x: 1000, y: 0, width: 600, height: 500))
        #expect(across.monitor(among: Self.monitors) == 1)
        let offScreen = ActiveX11Window(
            states: [Self.fullscreenAtom], fullscreenAtom: Self.fullscreenAtom,
            frame: OverlayRect(x: -5000, y: 0, width: 800, height: 600))
        #expect(offScreen.monitor(among: Self.monitors) == nil)
        #expect(!offScreen.fullscreen(on: 0, among: Self.monitors) && !offScreen.fullscreen(on: 1, among: Self.monitors))
        #expect(across.monitor(among: []) == nil)
    }

    /// A client sets its own _NET_WM_STATE: past `maximumStates` atoms nothing is looked at.
    @Test func onlyTheFirstStatesOfAnX11WindowAreRead() {
        let padding = [UInt](repeating: 7, count: ActiveX11Window.maximumStates - 1)
        #expect(ActiveX11Window(states: padding + [Self.fullscreenAtom], fullscreenAtom: Self.fullscreenAtom, frame: Self.monitors[0]).fullscreen)
        #expect(!ActiveX11Window(states: padding + [7, Self.fullscreenAtom], fullscreenAtom: Self.fullscreenAtom, frame: Self.monitors[0]).fullscreen)
    }
}
