import IslandBridge
import Testing

@Suite("Where the bridge runs, from its environment")
struct BridgeHostTests {
    @Test("the system bus, the login session and the desktop, with their defaults")
    func environment() {
        let bare = BridgeHost(busAddress: nil, environment: [:])
        #expect(bare.systemBusAddress == "unix:path=/run/dbus/system_bus_socket")
        #expect(bare.systemBusSocket == "/run/dbus/system_bus_socket")
        #expect(bare.sessionID == "auto")
        #expect(!bare.isGNOME)
        let set = BridgeHost(
            busAddress: "unix:path=/tmp/bus",
            environment: [
                "DBUS_SYSTEM_BUS_ADDRESS": "tcp:host=localhost,port=1", "XDG_SESSION_ID": "", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME",
            ])
        #expect(set.systemBusSocket == nil, "an address that is no socket path is tried, not looked for")
        #expect(set.sessionID == "auto", "an empty session id is none")
        #expect(set.isGNOME)
        #expect(BridgeHost(busAddress: nil, environment: ["XDG_SESSION_ID": "c2", "XDG_CURRENT_DESKTOP": "KDE"]).sessionID == "c2")
        #expect(!BridgeHost(busAddress: nil, environment: ["XDG_CURRENT_DESKTOP": "GNOME-Flashback"]).isGNOME)
    }

    @Test("a new configuration makes the bridge follow the bus afresh only when what it follows there changed")
    func reconfiguring() {
        let old = BridgeConfiguration()
        var limits = old
        limits.maxActivities = 2
        limits.staleAfterPause = 5
        limits.followFocus = false
        #expect(!limits.restartsSources(from: old, currentDesktop: nil), "limits and the desktop's states apply at once")
        var sources = old
        sources.notificationsEnabled = false
        #expect(sources.restartsSources(from: old, currentDesktop: nil))
        var jobs = old
        jobs.maxJobsPerSender = 2
        #expect(jobs.restartsSources(from: old, currentDesktop: nil))
        var auto = old
        auto.jobsEnabled = false
        #expect(auto.restartsSources(from: old, currentDesktop: nil))
        #expect(!auto.restartsSources(from: old, currentDesktop: "KDE"), "jobs were off in Plasma already")
    }
}
