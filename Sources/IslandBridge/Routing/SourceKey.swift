/// Which source an activity comes from and which thing of it: the typed form of the text the
/// book keys activities by (`BridgedActivity.source`, also kept in the activity's attributes
/// so that a restarted bridge finds its activities again). Taps and buttons are routed by it.
///
/// Each key names the bus it was made on (`busID`, the first 12 digits of the bus's id):
/// unique names start over on a new bus, so a key of another bus names nothing there.
package enum SourceKey: Sendable, Hashable, CustomStringConvertible {
    /// An MPRIS player, by its connection.
    case player(busID: String, owner: String)
    /// A notification, by the connection that sent it and the id the server gave it.
    case notification(busID: String, owner: String, id: UInt32)
    /// A KDE job view, by its number.
    case job(busID: String, number: UInt32)

    package var busID: String {
        switch self {
        case .player(let busID, _), .notification(let busID, _, _), .job(let busID, _): busID
        }
    }

    package var description: String {
        switch self {
        case .player(let busID, let owner): "mpris:\(busID):\(owner)"
        case .notification(let busID, let owner, let id): "notify:\(busID):\(owner):\(id)"
        case .job(let busID, let number): "job:\(busID):\(number)"
        }
    }

    /// The key `text` is the description of; nil for any other text (an activity another
    /// version of the bridge made, say). Unique names have colons of their own (`:1.42`):
    /// the bus id never has (it may be empty, when the bus would not say it).
    package init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty else { return nil }
        let busID = String(parts[1]), rest = parts[2]
        switch parts[0] {
        case "mpris":
            self = .player(busID: busID, owner: String(rest))
        case "notify":
            guard let colon = rest.lastIndex(of: ":"), let id = UInt32(rest[rest.index(after: colon)...]),
                colon != rest.startIndex
            else { return nil }
            self = .notification(busID: busID, owner: String(rest[..<colon]), id: id)
        case "job":
            guard let number = UInt32(rest) else { return nil }
            self = .job(busID: busID, number: number)
        default:
            return nil
        }
    }
}
