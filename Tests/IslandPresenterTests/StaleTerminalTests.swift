import IslandPresenter
import Testing

/// A stale activity looks stale in the terminal as on screen: its box dashed (the overlay dashes
/// its outline), and its card in the list faint, its title saying which.
@Suite struct StaleTerminalTests {
    @Test("a stale activity's island is a dashed box; a fresh one's is solid", arguments: ["compact", "expanded"])
    func staleIslandIsDashed(_ mode: String) {
        let stale = EndedButtonsTests.terminal(EndedButtonsTests.model("stale", mode: mode))
        let fresh = EndedButtonsTests.terminal(EndedButtonsTests.model("active", mode: mode))
        #expect(stale.contains("╭┄") && stale.contains("┆"), "\(stale)")
        #expect(!fresh.contains("┄") && fresh.contains("╭─"), "\(fresh)")
    }
}
