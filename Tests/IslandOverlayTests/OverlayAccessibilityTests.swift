import Testing
@testable import IslandOverlay

/// What the island tells assistive technology, bounded however much producer text it holds;
/// and the default opener of a tap's URL.
@Suite struct OverlayAccessibilityTests {
    static func hit(_ target: OverlayTarget, _ name: String) -> OverlayHit {
        OverlayHit(rect: OverlayRect(x: 0, y: 0, width: 10, height: 10), target: target, name: name)
    }

    @Test func regionsTopmostFirstWithTheirRoles() {
        let frame = OverlayFrame(
            form: .expanded, listOpen: false, shapes: [], content: [],
            hits: [
                Self.hit(.tap(id: "a", url: nil), "Timer"),
                Self.hit(.tap(id: "a", url: "https://example.org"), "Details"),
                Self.hit(.button(id: "a", action: "pause"), "Pause"),
                Self.hit(.expand(id: "b"), ""),
            ])
        let said = OverlayAccessibility(frame)
        #expect(said.name == "Island, expanded")
        // Nameless regions are left out; the last hit lies on top.
        #expect(said.regions.map(\.name) == ["Pause", "Details", "Timer"])
        #expect(said.regions.map(\.role) == [.pushButton, .link, .panel])
        #expect(said.description == "Pause; Details; Timer")
        let list = OverlayFrame(
            form: .hidden, listOpen: true, shapes: [], content: [],
            hits: [Self.hit(.list, "List"), Self.hit(.dismiss(id: "a"), "Dismiss")])
        #expect(OverlayAccessibility(list).regions.map(\.role) == [.pushButton, .list])
        #expect(OverlayAccessibility(list).name == "Island, hidden")
    }

    @Test func nothingLiveSaysSo() {
        #expect(
            OverlayAccessibility(OverlayFrame(form: .hidden, listOpen: false, shapes: [], content: [], hits: [])).name
                == "Island (nothing live)")
    }

    /// A producer cannot make the accessible tree hold more than the bounds.
    @Test func producerTextIsBounded() {
        let long = String(repeating: "x", count: 10_000)
        let frame = OverlayFrame(
            form: .expanded, listOpen: false, shapes: [], content: [],
            hits: Array(repeating: Self.hit(.button(id: "a", action: "b"), long), count: 500))
        let said = OverlayAccessibility(frame)
        #expect(said.regions.count == OverlayAccessibility.maximumRegions)
        #expect(said.regions.allSatisfy { $0.name.count == OverlayAccessibility.maximumRegionName })
        #expect(said.description.count == OverlayAccessibility.maximumDescription)
    }

    @Test func gioOpenWhereGioIsOnThePathElseXDGOpen() {
        #expect(OverlayConfig.defaultOpener(path: "/opt/bin:/usr/bin") { $0 == "/usr/bin/gio" } == ["gio", "open"])
        #expect(OverlayConfig.defaultOpener(path: "/opt/bin") { $0 == "/usr/bin/gio" } == ["xdg-open"])
        // No PATH: the system's directories.
        #expect(OverlayConfig.defaultOpener(path: nil) { $0 == "/bin/gio" } == ["gio", "open"])
    }
}
