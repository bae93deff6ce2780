import IslandOverlay

/// The overlay's islands: one, or with Output=all one on every output, each a window, a shell
/// and a subscription of its own, all showing the same state (the daemon's). At each of the
/// monitors' passes, a monitor without an island gets one: one whose monitor went away if there
/// is one (hidden meanwhile), else a new one, at most `OverlayPlacementPolicy.maximumIslands`
/// in all.
@MainActor final class OverlayIslands {
    private let makeShell: (OverlayWindow, OverlayPlacement?) -> OverlayShell
    private var placements: [OverlayPlacement] = []
    /// Kept for as long as the process runs: GTK's callbacks hold them unretained.
    private var shells: [OverlayShell] = []
    /// The log said there are too many outputs for one island each (said once).
    private var saidFull = false

    init(makeShell: @escaping (OverlayWindow, OverlayPlacement?) -> OverlayShell) {
        self.makeShell = makeShell
    }

    func one(_ window: OverlayWindow, placement: OverlayPlacement?) {
        shells.append(makeShell(window, placement))
    }

    func everyOutput(first: OverlayWindow, monitors: OverlayMonitors, config: OverlayConfig, environment: [String: String]) throws {
        var window: OverlayWindow? = first
        for monitor in monitors.all.prefix(OverlayPlacementPolicy.maximumIslands) {
            add(try window ?? OverlayWindow(config: config, hosted: false, environment: environment), on: monitor, monitors: monitors, config: config)
            window = nil
        }
        monitors.reconcile = { [unowned self, unowned monitors] in
            for monitor in OverlayPlacementPolicy.withoutIsland(monitors.all, pinned: placements.map(\.pinnedMonitor)) {
                switch OverlayPlacementPolicy.forNewMonitor(idle: placements.firstIndex(where: \.isIdle), islands: placements.count) {
                case .reuse(let idle):
                    placements[idle].pin(monitor)
                case .add:
                    if let window = try? OverlayWindow(config: config, hosted: false, environment: environment) {
                        add(window, on: monitor, monitors: monitors, config: config)
                    }
                case .full:
                    if !saidFull { log("\(OverlayPlacementPolicy.maximumIslands) islands already: none on another output") }
                    saidFull = true
                }
            }
        }
    }

    private func add(_ window: OverlayWindow, on monitor: OpaquePointer, monitors: OverlayMonitors, config: OverlayConfig) {
        let placement = OverlayPlacement(window: window, config: config, monitors: monitors, pinned: monitor, takesKeyboard: placements.isEmpty)
        placements.append(placement)
        shells.append(makeShell(window, placement))
    }
}
