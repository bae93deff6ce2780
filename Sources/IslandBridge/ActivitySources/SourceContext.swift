package import Logging

/// What every source of one bus connection is given: which bus, where its changes go, and
/// the process's clock and installed apps.
package struct SourceContext {
    /// The bus the source follows (`Bus.busID`, cut to 12 digits): part of every key it makes.
    package var busID: String
    /// What a bus event made of the source's activities: the bridge's book takes them.
    package var changes: ([SourceChange]) -> Void
    /// A read of the bus's first scan ended: the bridge settles its book once none is left.
    package var readEnded: () -> Void
    /// The installed desktop entry of an id, to show a verified sender as its app.
    package var lookup: (String) -> DesktopEntry?
    /// Seconds since the epoch.
    package var now: () -> Double
    package var logger: Logger

    package init(
        busID: String, changes: @escaping ([SourceChange]) -> Void, readEnded: @escaping () -> Void,
        lookup: @escaping (String) -> DesktopEntry?, now: @escaping () -> Double, logger: Logger
    ) {
        self.busID = busID
        self.changes = changes
        self.readEnded = readEnded
        self.lookup = lookup
        self.now = now
        self.logger = logger
    }

    func apply(_ changes: [SourceChange]) {
        if !changes.isEmpty { self.changes(changes) }
    }
}
