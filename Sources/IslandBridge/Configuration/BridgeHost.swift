/// What the bridge knows of where it runs, from its environment: the buses, the desktop, the
/// login session, and the installed desktop entries.
package struct BridgeHost {
    package let busAddress: String?
    package let systemBusAddress: String
    /// `XDG_CURRENT_DESKTOP`: a colon-separated list.
    package let currentDesktop: String?
    /// logind's session: `XDG_SESSION_ID`, else `auto` (the caller's own).
    package let sessionID: String
    package var entries: InstalledDesktopEntries

    package init(busAddress: String?, environment: [String: String]) {
        self.busAddress = busAddress
        // sd-bus's own default for the system bus, which tests point elsewhere.
        systemBusAddress = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        currentDesktop = environment["XDG_CURRENT_DESKTOP"]
        sessionID = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
        entries = InstalledDesktopEntries(environment: environment)
    }

    /// Whether this is a GNOME session: GNOME's own focus setting counts only there; elsewhere
    /// it is a leftover of one, which the user no longer sees.
    package var isGNOME: Bool {
        (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }.contains("GNOME")
    }

    /// The socket the system bus's address names, when it names one: a machine where it is not
    /// there (a container, a test) has no logind to follow.
    package var systemBusSocket: String? {
        guard systemBusAddress.hasPrefix("unix:path=") else { return nil }
        return String(systemBusAddress.dropFirst("unix:path=".count))
    }
}
